"""Streaming digests of many files at once, with bounded memory.

Threads share one queue of files, biggest first, so the longest hash starts at once
and small files fill the gaps; hashlib releases the GIL on large updates, so big files
hash on every core. Each thread owns one reused buffer: memory is ``jobs`` buffers,
whatever the file sizes. Only regular files are read (see :mod:`wheeldoctor.filesystem`).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

from wheeldoctor.filesystem import ReadError, open_regular

BUFFER_SIZE = 1 << 20
#: Files up to this size are read with one call instead of into the shared buffer.
_SMALL = 1 << 16

Progress = Callable[[int, int], None]
"""Called as ``progress(files, bytes)`` after each file, from worker threads."""


class FileStatus(str, Enum):
    """What happened when a file was looked at."""

    HASHED = "hashed"
    #: A regular file whose size matched no candidate, so it was deliberately not read.
    SIZE_ONLY = "size-only"
    MISSING = "missing"
    NOT_REGULAR = "not-regular"
    UNREADABLE = "unreadable"
    CHANGED = "changed"


@dataclass(frozen=True, slots=True)
class HashRequest:
    """A file to digest with ``algorithms``.

    ``sizes``, when given, are the sizes at which the bytes could match anything
    recorded: a file of another size is stat'ed but never read.
    """

    path: str
    algorithms: frozenset[str]
    sizes: frozenset[int] | None = None

    @property
    def size_hint(self) -> int:
        """Expected size, for scheduling the biggest files first."""
        return max(self.sizes) if self.sizes else 0


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What identifies one version of a file's content without reading it."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    device: int

    @classmethod
    def of(cls, st: os.stat_result) -> Fingerprint:
        """Take the fingerprint of a stat result."""
        return cls(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


@dataclass(frozen=True, slots=True)
class FileState:
    """The outcome for one file: its size and digests, or why there are none."""

    status: FileStatus
    size: int | None = None
    digests: tuple[tuple[str, bytes], ...] = ()
    detail: str = ""
    links: int = 1
    fingerprint: Fingerprint | None = None

    def digest(self, algorithm: str) -> bytes | None:
        """The raw digest for ``algorithm``, if it was computed."""
        for name, value in self.digests:
            if name == algorithm:
                return value
        return None


def default_jobs() -> int:
    """CPUs this process may run on (affinity and cgroup cpusets count, not the host's total)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def hash_files(
    requests: Sequence[HashRequest], jobs: int | None = None, progress: Progress | None = None
) -> list[FileState]:
    """Digest every requested file; results come back in request order."""
    results: list[FileState | None] = [None] * len(requests)
    order = sorted(range(len(requests)), key=lambda i: requests[i].size_hint, reverse=True)
    pending = iter(order)
    lock = threading.Lock()
    failures: list[BaseException] = []

    def work() -> None:
        view = memoryview(bytearray(BUFFER_SIZE))
        while True:
            with lock:
                index = next(pending, None)
            if index is None or failures:
                return
            try:
                state = hash_file(requests[index], view)
            except BaseException as e:  # re-raised in the caller, never lost in a thread
                failures.append(e)
                return
            results[index] = state
            if progress is not None:
                progress(1, (state.size or 0) if state.status is FileStatus.HASHED else 0)

    threads = min(jobs or default_jobs(), len(requests))
    if threads <= 1:
        work()
    else:
        workers = [threading.Thread(target=work, name="wheeldoctor-hash", daemon=True) for _ in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    if failures:
        raise failures[0]
    return [state for state in results if state is not None]


def hash_file(request: HashRequest, view: memoryview) -> FileState:
    """Digest one file through ``view``, a reusable buffer; never raises OSError."""
    opened = open_regular(request.path)
    if isinstance(opened, ReadError):
        status = (
            FileStatus.MISSING
            if opened.missing
            else FileStatus.NOT_REGULAR
            if opened.not_regular
            else FileStatus.UNREADABLE
        )
        return FileState(status, detail=opened.message)
    fd, before = opened
    try:
        fingerprint = Fingerprint.of(before)
        if request.sizes is not None and before.st_size not in request.sizes:
            return FileState(FileStatus.SIZE_ONLY, before.st_size, links=before.st_nlink, fingerprint=fingerprint)
        hashers = [(name, hashlib.new(name)) for name in sorted(request.algorithms)]
        total = _feed(fd, before.st_size, view, [h for _, h in hashers])
        after = os.fstat(fd)
    except OSError as e:
        return FileState(FileStatus.UNREADABLE, detail=e.strerror or str(e))
    finally:
        os.close(fd)
    if total != before.st_size or Fingerprint.of(after) != fingerprint:
        return FileState(FileStatus.CHANGED, after.st_size, detail="changed while it was being read")
    return FileState(
        FileStatus.HASHED,
        total,
        tuple((name, h.digest()) for name, h in hashers),
        links=before.st_nlink,
        fingerprint=fingerprint,
    )


def _feed(fd: int, expected: int, view: memoryview, hashers: list[hashlib._Hash]) -> int:
    """Read ``fd`` to its end into the hashers; return how many bytes there were."""
    if expected < _SMALL:
        # A short read of a regular file only happens at its end, so one read of one
        # byte more than expected both fetches the file and proves where it ends.
        data = os.read(fd, expected + 1)
        for h in hashers:
            h.update(data)
        return len(data)
    total = 0
    while True:
        n = os.readv(fd, [view])
        if not n:
            return total
        chunk = view[:n]
        for h in hashers:
            h.update(chunk)
        total += n

"""Streaming digests of many files at once, with bounded memory.

Threads share one queue of files, biggest first, so the longest hash starts at once
and small files fill the gaps; hashlib releases the GIL on large updates, so big files
hash on every core. Each thread owns one reused buffer: memory is ``jobs`` buffers,
whatever the file sizes. Only regular files are read (see :mod:`wheeldoctor.filesystem`).

Digests already known (from the cache) are offered per path; they are used only while
the file still has the fingerprint they were taken with.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import threading
from collections.abc import Callable, Sequence
from enum import Enum
from typing import NamedTuple

from wheeldoctor.filesystem import ReadError, open_regular

BUFFER_SIZE = 1 << 20
#: With ``processes=True``, this many files or more are hashed in forked workers.
PROCESS_MIN_FILES = 2000
#: Files up to this size are read with one call instead of into the shared buffer.
_SMALL = 1 << 16

Progress = Callable[[int, int], None]
"""Called as ``progress(files, bytes)`` after each file, from worker threads."""

_CONSTRUCTORS: dict[str, Callable[..., hashlib._Hash]] = {
    "sha256": hashlib.sha256,
    "sha384": hashlib.sha384,
    "sha512": hashlib.sha512,
}


class FileStatus(str, Enum):
    """What happened when a file was looked at."""

    HASHED = "hashed"
    #: A regular file whose size matched no candidate, so it was deliberately not read.
    SIZE_ONLY = "size-only"
    MISSING = "missing"
    NOT_REGULAR = "not-regular"
    UNREADABLE = "unreadable"
    CHANGED = "changed"


# HashRequest, Fingerprint and FileState are immutable named tuples rather than frozen
# dataclasses: one of each is made per recorded file, and on tens of thousands of small
# files a frozen dataclass's __init__ (a setattr per field) costs more than the hashing.


class HashRequest(NamedTuple):
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


class Fingerprint(NamedTuple):
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


class FileState(NamedTuple):
    """The outcome for one file: its size and digests, or why there are none."""

    status: FileStatus
    size: int | None = None
    digests: tuple[tuple[str, bytes], ...] = ()
    detail: str = ""
    links: int = 1
    fingerprint: Fingerprint | None = None
    #: The digests came from the cache: they were not computed by this process.
    cached: bool = False

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


Known = Callable[[str], FileState | None]
"""Digests already known for a path (HASHED, with the fingerprint they were taken at), or None."""


def hash_files(
    requests: Sequence[HashRequest],
    jobs: int | None = None,
    progress: Progress | None = None,
    known: Known | None = None,
    processes: bool = False,
) -> list[FileState]:
    """Digest every requested file; results come back in request order.

    ``known`` offers earlier digests per path; they replace hashing when the file's
    fingerprint is still the one they were taken at and they cover the algorithms asked.
    ``processes`` lets many files be hashed by forked workers instead of threads (see
    :mod:`wheeldoctor.hash_processes`); it is for a command, never for a library caller
    inside someone else's process, and is only taken where forking is safe.
    """
    results: list[FileState | None] = [None] * len(requests)
    order = sorted(range(len(requests)), key=lambda i: requests[i].size_hint, reverse=True)
    threads = min(jobs or default_jobs(), len(requests))
    if processes and threads > 1 and len(requests) >= PROCESS_MIN_FILES and can_fork():
        from wheeldoctor.hash_processes import hash_in_processes

        for index, done in hash_in_processes(requests, order, threads, progress, known).items():
            results[index] = done
        order = [i for i in order if results[i] is None]  # a worker that died left these
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
                state = examine(requests[index], view, known)
            except BaseException as e:  # re-raised in the caller, never lost in a thread
                failures.append(e)
                return
            results[index] = state
            if progress is not None:
                progress(1, (state.size or 0) if state.status is FileStatus.HASHED else 0)

    threads = min(threads, len(order))
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


def can_fork() -> bool:
    """Whether forking workers is safe here: Linux, and no other thread running."""
    # Forking while another thread runs can leave a lock held forever in the child; other
    # systems' libraries are not fork-safe (macOS), so only Linux, and only single-threaded.
    return sys.platform.startswith("linux") and threading.active_count() == 1


def examine(request: HashRequest, view: memoryview, known: Known | None = None) -> FileState:
    """The state of one requested file: digests ``known`` still vouches for, else hashed now."""
    prior = known(request.path) if known is not None else None
    state = reuse(request, prior) if prior is not None else None
    return state if state is not None else hash_file(request, view)


def reuse(request: HashRequest, prior: FileState) -> FileState | None:
    """``prior`` again if the file still has its fingerprint and it holds every digest asked for."""
    fingerprint = prior.fingerprint
    if prior.status is not FileStatus.HASHED or fingerprint is None:
        return None
    if any(prior.digest(name) is None for name in request.algorithms):
        return None
    try:
        st = os.stat(request.path)
    except (OSError, ValueError):
        return None  # hash_file says why
    if not stat.S_ISREG(st.st_mode) or Fingerprint.of(st) != fingerprint:
        return None
    return FileState(
        FileStatus.HASHED, prior.size, prior.digests, links=st.st_nlink, fingerprint=fingerprint, cached=prior.cached
    )


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
    size = before.st_size
    try:
        if request.sizes is not None and size not in request.sizes:
            return FileState(FileStatus.SIZE_ONLY, size, links=before.st_nlink, fingerprint=Fingerprint.of(before))
        names = sorted(request.algorithms) if len(request.algorithms) > 1 else request.algorithms
        if size < _SMALL:
            # A short read of a regular file only happens at its end, so one read of one
            # byte more than expected both fetches the file and proves where it ends.
            data = os.read(fd, size + 1)
            total = len(data)
            digests = tuple((name, _new(name, data).digest()) for name in names)
        else:
            hashers = [_new(name) for name in names]
            total = _feed(fd, view, hashers, size)
            digests = tuple((name, h.digest()) for name, h in zip(names, hashers, strict=True))
        after = os.fstat(fd)
    except OSError as e:
        return FileState(FileStatus.UNREADABLE, detail=e.strerror or str(e))
    finally:
        os.close(fd)
    if total != size or Fingerprint.of(after) != Fingerprint.of(before):
        return FileState(FileStatus.CHANGED, after.st_size, detail="changed while it was being read")
    return FileState(FileStatus.HASHED, total, digests, links=before.st_nlink, fingerprint=Fingerprint.of(before))


def _new(name: str, data: bytes = b"") -> hashlib._Hash:
    constructor = _CONSTRUCTORS.get(name)
    return constructor(data) if constructor is not None else hashlib.new(name, data)


def _feed(fd: int, view: memoryview, hashers: list[hashlib._Hash], expected: int) -> int:
    """Read ``fd`` into the hashers to its end, or until it is past ``expected``; return the bytes read.

    A file that grows while it is read is changed whatever its end: stopping there keeps
    a file appended to forever (a log, a writer racing us) from being read forever.
    """
    total = 0
    while total <= expected:
        n = os.readv(fd, [view])
        if not n:
            return total
        chunk = view[:n]
        for h in hashers:
            h.update(chunk)
        total += n
    return total

"""Hash a distribution's biggest files while the verifier is still being imported.

On the gate's cold path the verifier's modules take tens of milliseconds to import
before a single byte is hashed; for a wheel whose biggest file alone takes longer than
that (the cu13 wheel's 150 MB library), those milliseconds are the difference between
the floor and well above it. So threads start on the biggest files at once, named by a
rough reading of RECORD, until the verifier is ready and says stop; the verifier then
takes the digests offered like cached ones: by path, only while the file still has the
fingerprint it had when hashed, and it still judges everything itself.

Only big files are taken: a thread needs the GIL between every system call, and while
the importer holds it each wait can last a switch interval, so small files would crawl.

Stdlib only, nothing written, and the threads are always joined before the gate returns.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time

from wheeldoctor.cache import Identity, settled

TYPE_CHECKING = False  # typing and collections cost milliseconds before the threads start
if TYPE_CHECKING:
    from collections.abc import Callable

#: Reads are this big so the threads need the GIL rarely while the importer holds it.
_CHUNK = 4 << 20
#: Files smaller than this are left to the verifier (see above).
_MIN_SIZE = 1 << 20
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_ALGORITHMS = ("sha256", "sha384", "sha512")
_RECORD_LIMIT = 64 << 20

Hashed = tuple[int, Identity, int, str, bytes]
"""(size, fingerprint, links, algorithm, digest) of one file hashed ahead."""


class Prefetch:
    """Threads hashing one distribution's big recorded files, biggest first, until stopped."""

    def __init__(self, dist_path: str, location: str, root: str, jobs: int | None = None) -> None:
        self._started = time.time_ns()
        self._cond = threading.Condition()
        self._stopped = False
        self._running = 0
        self._claimed: set[str] = set()
        self._results: dict[str, Hashed | None] = {}
        # Planned here, before the importer competes for the GIL; only hashing is threaded.
        self._plan = plan(dist_path, location, root)
        self._threads = [
            threading.Thread(target=self._run, name="wheeldoctor-prefetch", daemon=True)
            # One core is left to the importer: it is on the critical path too.
            for _ in range(min(jobs or max(1, _cpus() - 1), len(self._plan)))
        ]
        self._running = len(self._threads)
        self._reading = threading.Semaphore(0)
        for thread in self._threads:
            thread.start()
        # Wait (briefly) until each thread is inside its read loop: a thread that needs the
        # GIL while the importer holds it waits a whole switch interval per system call.
        for _ in self._threads:
            self._reading.acquire(timeout=0.05)

    def stop(self) -> None:
        """Start no new file; those being hashed are finished."""
        with self._cond:
            self._stopped = True

    def lookup(self, path: str) -> Hashed | None:
        """What was found for ``path``, waiting while it is being hashed; None if not taken."""
        with self._cond:
            while path in self._claimed and path not in self._results and self._running:
                self._cond.wait()
            return self._results.get(path)

    def close(self) -> None:
        """Stop and wait for the threads."""
        self.stop()
        for thread in self._threads:
            thread.join()

    def _run(self) -> None:
        reading: Callable[[], object] | None = self._reading.release
        try:
            buffer = memoryview(bytearray(_CHUNK))
            while True:
                with self._cond:
                    if self._stopped or not self._plan:
                        return
                    size, path, algorithm = self._plan.pop()
                    self._claimed.add(path)
                found = _hash(path, size, algorithm, buffer, reading)
                reading = None
                if found is not None and not settled(found[1], self._started):
                    found = None  # changed too recently to vouch for: the verifier reads it again
                with self._cond:
                    self._results[path] = found
                    self._cond.notify_all()
        except Exception:  # a prefetch is only a head start: the verifier does the real work
            return
        finally:
            if reading is not None:
                reading()
            with self._cond:
                self._running -= 1
                self._cond.notify_all()


def _cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _read_record(path: str) -> str | None:
    """RECORD's text if it is a regular file; never blocks on a FIFO or opens a device."""
    try:
        if os.stat(path).st_mode & 0o170000 != 0o100000:
            return None
        fd = os.open(path, _OPEN_FLAGS)
    except (OSError, ValueError):
        return None
    try:
        if os.fstat(fd).st_mode & 0o170000 != 0o100000:
            return None
        return os.read(fd, _RECORD_LIMIT).decode("utf-8")
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)


def plan(dist_path: str, location: str, root: str) -> list[tuple[int, str, str]]:
    """(size, absolute path, algorithm) of RECORD's big files inside ``root``, smallest first.

    A rough reading: rows whose path csv had to quote are skipped, not parsed; a wrong
    guess only costs a wasted hash, since the verifier uses a digest only for its path.
    """
    text = _read_record(os.path.join(dist_path, "RECORD"))
    if text is None:
        return []
    inside = root.rstrip(os.sep) + os.sep
    planned = []
    for line in text.split("\n"):
        if line.startswith('"'):
            continue
        fields = line.rstrip("\r").rsplit(",", 2)
        if len(fields) != 3 or not fields[2].isdigit() or int(fields[2]) < _MIN_SIZE:
            continue
        algorithm = fields[1].partition("=")[0].lower()
        path = os.path.normpath(os.path.join(location, fields[0]))
        # Never read what the verifier would refuse to read.
        if algorithm in _ALGORITHMS and path.startswith(inside):
            planned.append((int(fields[2]), path, algorithm))
    planned.sort()
    return planned


def _hash(
    path: str, size: int, algorithm: str, buffer: memoryview, reading: Callable[[], object] | None = None
) -> Hashed | None:
    """What a regular file of the recorded size hashes to, if it did not change while read.

    ``reading`` is called once the read loop is about to start (or on failure).
    """
    try:
        before = os.stat(path)
        if before.st_mode & 0o170000 != 0o100000 or before.st_size != size:
            return None
        fd = os.open(path, _OPEN_FLAGS)
    except (OSError, ValueError):
        return None
    finally:
        if reading is not None:
            reading()
    try:
        opened = os.fstat(fd)
        identity = (opened.st_size, opened.st_mtime_ns, opened.st_ctime_ns, opened.st_ino, opened.st_dev)
        if (opened.st_ino, opened.st_dev) != (before.st_ino, before.st_dev):
            return None
        hasher = hashlib.new(algorithm)
        update = hasher.update
        total = 0
        while total <= size:  # past the recorded size it has changed: never read on forever
            n = os.readv(fd, [buffer])
            if not n:
                break
            update(buffer[:n])
            total += n
        after = os.fstat(fd)
    except OSError:
        return None
    finally:
        os.close(fd)
    if total != identity[0] or (after.st_size, after.st_mtime_ns, after.st_ctime_ns, after.st_ino, after.st_dev) != (
        identity
    ):
        return None
    return total, identity, opened.st_nlink, algorithm, hasher.digest()

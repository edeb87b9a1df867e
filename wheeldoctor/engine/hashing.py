"""Streaming digests of many files at once, with bounded memory.

Threads share one queue of files, biggest first, so the longest hash starts at once
and small files fill the gaps; hashlib releases the GIL on large updates, so big files
hash on every core. Each thread owns one reused buffer: memory is ``jobs`` buffers,
whatever the file sizes. Only regular files are read (see :mod:`wheeldoctor.where.filesystem`).

Digests already known (from the cache) are offered per path; they are used only while
the file still has the fingerprint they were taken with.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

from wheeldoctor.engine.digests import BUFFER_SIZE, examine
from wheeldoctor.engine.fork import can_fork
from wheeldoctor.model.files import FileState, FileStatus, HashRequest, Known, Progress

#: With ``processes=True``, this many files or more are hashed in forked workers.
PROCESS_MIN_FILES = 2000


def default_jobs() -> int:
    """CPUs this process may run on (affinity and cgroup cpusets count, not the host's total)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


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
    :mod:`wheeldoctor.engine.hash_workers`); it is for a command, never for a library caller
    inside someone else's process, and is only taken where forking is safe.
    """
    results: list[FileState | None] = [None] * len(requests)
    order = sorted(range(len(requests)), key=lambda i: requests[i].size_hint, reverse=True)
    threads = min(jobs or default_jobs(), len(requests))
    if processes and threads > 1 and len(requests) >= PROCESS_MIN_FILES and can_fork():
        from wheeldoctor.engine.hash_workers import hash_in_processes

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

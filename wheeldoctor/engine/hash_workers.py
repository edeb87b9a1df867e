"""Hashing many small files in forked worker processes (the command line only, never the gate).

Threads hash big files on every core because hashlib drops the GIL while it hashes; on
tens of thousands of small files they do not, since every system call gives the GIL up
and takes it back, and the threads queue for it. Forked workers each have their own: on
a real environment of small files they are about twice as fast on two cores.

Each worker takes every ``jobs``-th request of the biggest-first order (so the bytes are
dealt out evenly), hashes them exactly as :func:`wheeldoctor.engine.digests.hash_file` does,
and streams the states back in batches through a pipe. Whatever a worker did not
deliver (it crashed, or was killed) comes back as missing, for the caller to do itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from wheeldoctor.engine import workers as frames
from wheeldoctor.engine.digests import BUFFER_SIZE, examine
from wheeldoctor.model.files import FileState, FileStatus, Fingerprint, HashRequest, Known, Progress

_BATCH = 256
_STATUSES = {status.value: status for status in FileStatus}  # faster than calling the enum

Digests = tuple[tuple[str, bytes], ...]
Encoded = tuple[str, int | None, Digests, str, int, tuple[int, ...] | None, bool, tuple[tuple[int, Digests], ...]]


def hash_in_processes(
    requests: Sequence[HashRequest],
    order: Sequence[int],
    jobs: int,
    progress: Progress | None = None,
    known: Known | None = None,
) -> dict[int, FileState]:
    """States by request index, from ``jobs`` forked workers; indices missing were not done."""

    def work(indices: Sequence[int], send: Callable[[list[Any]], None]) -> None:
        view = memoryview(bytearray(BUFFER_SIZE))
        batch: list[tuple[int, Encoded]] = []
        for index in indices:
            batch.append((index, _encode(examine(requests[index], view, known))))
            if len(batch) >= _BATCH:
                send(batch)
                batch = []
        send(batch)

    states: dict[int, FileState] = {}
    for batch in frames.run_workers([order[part::jobs] for part in range(jobs)], work):
        for index, encoded in batch:
            state = _decode(encoded)
            states[index] = state
            if progress is not None:
                progress(1, (state.size or 0) if state.status is FileStatus.HASHED else 0)
    return states


def _encode(state: FileState) -> Encoded:
    status, size, digests, detail, links, fingerprint, cached, prefixes = state
    # marshal takes only exact tuples: the named ones go as plain tuples.
    identity = None if fingerprint is None else tuple(fingerprint)
    return (status.value, size, digests, detail, links, identity, cached, prefixes)


def _decode(encoded: Encoded) -> FileState:
    status, size, digests, detail, links, fingerprint, cached, prefixes = encoded
    return FileState(
        _STATUSES[status],
        size,
        digests,
        detail,
        links,
        None if fingerprint is None else Fingerprint._make(fingerprint),
        cached,
        prefixes,
    )

"""Proving most recorded files intact in forked workers, for the command line only.

On a healthy environment nearly every file is a regular file of its recorded size whose
digest matches its one claimant's RECORD row. Workers check exactly that and nothing
else, as cheaply as it can be checked: a directory is listed once (its entries' file
types and inodes come from ``readdir``, so a file is never stat'ed before it is opened,
and a device or FIFO is never opened), then each file is opened, fstat'ed, read and closed.
A file the verification cache vouches for is proven by one lstat instead: still a regular
file with the fingerprint at which its digest was seen. A file that fails any step
(missing, a symlink, another type, another size or inode, another digest) is not judged
here: it is left to the exact path (:func:`wheeldoctor.engine.hashing.hash_files`), which says
what is wrong with it. Workers send back only the proven files' fingerprints, so nothing
per file but a few integers crosses the pipe.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator, Sequence
from itertools import pairwise
from typing import Any

from wheeldoctor.engine import workers as frames
from wheeldoctor.engine.digests import _CONSTRUCTORS, BUFFER_SIZE, _feed
from wheeldoctor.model.record import bytes_match

_SMALL = 1 << 16
_BATCH = 1024
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
#: Scheduling weight of one file in bytes: what its system calls cost, in hashing time.
_PER_FILE = 16 << 10

Candidate = tuple[str, int, str, bytes, "tuple[int, int, int, int, int] | None"]
"""(absolute path, recorded size, algorithm, recorded raw digest, vouched fingerprint).

The fingerprint (size, mtime_ns, ctime_ns, inode, device), when given, is one at which the
verification cache saw these very bytes: a file that still has it is proven by one lstat.
"""
Proof = tuple[int, int, int, int, int, int]
"""(candidate index, mtime_ns, ctime_ns, inode, device, links): a file proven to match."""


def prove_in_processes(
    candidates: Sequence[Candidate], jobs: int, progress: Callable[[int, int], None] | None = None
) -> Iterator[Proof]:
    """Yield the proofs of the candidates proven intact, as ``jobs`` forked workers send them.

    Paths must be distinct. Candidates without a proof are unproven; a worker that dies
    only leaves its share unproven.
    """
    for batch in frames.run_workers(_shares(candidates, jobs), lambda share, send: _work(candidates, share, send)):
        yield from batch
        if progress is not None:
            progress(len(batch), sum(candidates[proof[0]][1] for proof in batch))


def _shares(candidates: Sequence[Candidate], jobs: int) -> list[list[range]]:
    """Deal contiguous runs (a directory's files stay together) to workers, evenly by weight."""
    runs = jobs * 4
    total = sum(candidate[1] for candidate in candidates) + _PER_FILE * len(candidates)
    step = total / runs or 1.0
    cuts = [0]
    done = 0
    for index, candidate in enumerate(candidates):
        done += candidate[1] + _PER_FILE
        if done >= step * len(cuts) and len(cuts) < runs:
            cuts.append(index + 1)
    cuts.append(len(candidates))
    ranges = [range(a, b) for a, b in pairwise(cuts) if b > a]
    return [ranges[part::jobs] for part in range(jobs) if ranges[part::jobs]]


def _work(candidates: Sequence[Candidate], share: list[range], send: Callable[[list[Any]], None]) -> None:
    """The body of a worker process: prove its share, sending proofs in batches."""
    view = memoryview(bytearray(BUFFER_SIZE))
    batch: list[Proof] = []
    # Every listing is kept: a RECORD may come back to a directory after listing another.
    listings: dict[str, dict[str, int]] = {}
    for run in share:
        for index in run:
            path, size, algorithm, digest, vouched = candidates[index]
            proved = prove_file(path, size, algorithm, digest, vouched, view, listings)
            if proved is not None:
                batch.append((index, *proved[0]))
                if len(batch) >= _BATCH:
                    send(batch)
                    batch = []
    send(batch)


def prove_file(
    path: str,
    size: int,
    algorithm: str,
    digest: bytes,
    vouched: tuple[int, int, int, int, int] | None,
    view: memoryview,
    listings: dict[str, dict[str, int]],
) -> tuple[tuple[int, int, int, int, int], bool] | None:
    """(mtime, ctime, inode, device, links) of a file proved to hold RECORD's bytes, and whether
    the cache's fingerprint ``vouched`` proved it without reading; None where it could not be proved.

    ``listings`` keeps each directory's regular files between calls: a file the listing does
    not show as regular (gone, a FIFO, a device) is never opened.
    """
    proof = None if vouched is None else unchanged(path, vouched)
    if proof is not None:
        return proof, True
    directory, _, name = path.rpartition(os.sep)
    regular = listings.get(directory)
    if regular is None:
        regular = listings[directory] = _regular_files(directory)
    inode = regular.get(name)
    if inode is None:
        return None
    proof = _prove(path, inode, size, algorithm, digest, view)
    return None if proof is None else (proof, False)


def _regular_files(directory: str) -> dict[str, int]:
    """Name -> inode of the regular files (not symlinks) in ``directory``; empty if unlistable."""
    found: dict[str, int] = {}
    try:
        with os.scandir(directory or os.sep) as entries:
            for entry in entries:
                # d_type from readdir; is_file stats only where the filesystem gives none.
                if entry.is_file(follow_symlinks=False):
                    found[entry.name] = entry.inode()
    except OSError:
        return {}
    return found


def unchanged(path: str, vouched: tuple[int, int, int, int, int]) -> tuple[int, int, int, int, int] | None:
    """(mtime_ns, ctime_ns, inode, device, links) if ``path`` is a regular file still at ``vouched``."""
    try:
        st = os.lstat(path)  # lstat: a symlink is left to the exact path, as below
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev) != vouched:
        return None
    return st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, st.st_nlink


def _prove(
    path: str, inode: int, size: int, algorithm: str, digest: bytes, view: memoryview
) -> tuple[int, int, int, int, int] | None:
    """(mtime_ns, ctime_ns, inode, device, links) if the file holds exactly the recorded bytes."""
    constructor = _CONSTRUCTORS.get(algorithm)
    if constructor is None:
        return None
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return None
    try:
        before = os.fstat(fd)
        if before.st_ino != inode or before.st_size != size or not stat.S_ISREG(before.st_mode):
            return None
        if size < _SMALL:
            # One byte more than expected both fetches the file and proves where it ends.
            data = os.read(fd, size + 1)
            if len(data) != size:
                return None
            hasher = constructor(data)
        else:
            hasher = constructor()
            if _feed(fd, view, [hasher], size) != size:
                return None
    except OSError:
        return None
    finally:
        os.close(fd)
    # No second fstat to see whether the file changed while it was read: the digest of the
    # bytes read is RECORD's and they end at the recorded size, so they were the right ones
    # (a torn read would not hash to it). A change during or after the read moves ctime past
    # the fingerprint taken before it, so the cache never vouches for the new bytes with it.
    if not bytes_match(digest, size, size, hasher.digest()):  # the size was enforced by the read
        return None
    return before.st_mtime_ns, before.st_ctime_ns, before.st_ino, before.st_dev, before.st_nlink

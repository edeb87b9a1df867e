"""One file's digests: opened safely, read once through a reused buffer, never trusted if it changed.

The primitive every hashing path shares: threads (:mod:`wheeldoctor.engine.hashing`), forked
workers (:mod:`wheeldoctor.engine.hash_workers`, :mod:`wheeldoctor.engine.proof_workers`).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Sequence
from functools import partial

from wheeldoctor.model.files import FileState, FileStatus, Fingerprint, HashRequest, Known
from wheeldoctor.where.filesystem import ReadError, open_regular

BUFFER_SIZE = 1 << 20
#: Files up to this size are read with one call instead of into the shared buffer.
_SMALL = 1 << 16

_CONSTRUCTORS: dict[str, Callable[..., hashlib._Hash]] = {
    "sha256": hashlib.sha256,
    "sha384": hashlib.sha384,
    "sha512": hashlib.sha512,
    # dpkg's md5sums: to compare with what a package manager recorded, never to vouch alone.
    "md5": partial(hashlib.md5, usedforsecurity=False),
}


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
    cuts: list[int] = []
    prefixes: tuple[tuple[int, tuple[tuple[str, bytes], ...]], ...] = ()
    try:
        if request.sizes is not None and size not in request.sizes:
            if not request.evidence:
                return FileState(FileStatus.SIZE_ONLY, size, links=before.st_nlink, fingerprint=Fingerprint.of(before))
            cuts = sorted(s for s in request.sizes if s < size)
        names = sorted(request.algorithms) if len(request.algorithms) > 1 else request.algorithms
        if cuts:
            total, digests, prefixes = _feed_with_prefixes(fd, view, names, size, cuts)
        elif size < _SMALL:
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
    return FileState(
        FileStatus.HASHED, total, digests, links=before.st_nlink, fingerprint=Fingerprint.of(before), prefixes=prefixes
    )


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


def _feed_with_prefixes(
    fd: int, view: memoryview, names: Iterable[str], expected: int, cuts: Sequence[int]
) -> tuple[int, tuple[tuple[str, bytes], ...], tuple[tuple[int, tuple[tuple[str, bytes], ...]], ...]]:
    """As :func:`_feed`, and also the digests of the first ``cut`` bytes for each of ``cuts``.

    Only for a file whose size matches nothing recorded: one pass gives both its own
    digest (what is there now) and whether it begins with a recorded file (appended to).
    """
    names = list(names)
    whole = [_new(name) for name in names]
    heads = [[_new(name) for name in names] for _ in cuts]
    total = 0
    while total <= expected:
        n = os.readv(fd, [view])
        if not n:
            break
        chunk = view[:n]
        for h in whole:
            h.update(chunk)
        for cut, hashers in zip(cuts, heads, strict=True):
            if total < cut:
                part = chunk[: cut - total]
                for h in hashers:
                    h.update(part)
        total += n
    digests = tuple((name, h.digest()) for name, h in zip(names, whole, strict=True))
    prefixes = tuple(
        (cut, tuple((name, h.digest()) for name, h in zip(names, hashers, strict=True)))
        for cut, hashers in zip(cuts, heads, strict=True)
    )
    return total, digests, prefixes

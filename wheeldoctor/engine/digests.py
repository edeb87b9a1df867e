"""One file looked at: proved to hold its row's bytes, else digested exactly; never trusted if it changed.

The two primitives every executor's tasks share (:mod:`.tasks`). :func:`prove_file` checks
only that a file is a regular file of its recorded size whose digest is its row's, as
cheaply as that can be checked: a directory is listed once (its entries' file types and
inodes come from ``readdir``, so a file is never stat'ed before it is opened, and a device
or FIFO is never opened), then the file is opened, fstat'ed, read and closed; a file the
cache vouches for is proved by one ``lstat`` (:func:`unchanged`). A file that fails any
step is left to :func:`examine`, the exact path, which says what is wrong with it: ``stat``
first, ``O_NONBLOCK`` and an ``fstat`` that must match, every algorithm and size any
claimant recorded, the evidence of a longer file, and a second ``fstat``: a file whose
fingerprint changed while it was read is reported, not trusted. Both read through one
reused buffer, and stop once a file passes its recorded size.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Sequence
from functools import partial

from wheeldoctor.model.files import FileState, FileStatus, Fingerprint, HashRequest, Known
from wheeldoctor.model.record import bytes_match
from wheeldoctor.where.filesystem import ReadError, open_regular

BUFFER_SIZE = 1 << 20
#: Files up to this size are read with one call instead of into the shared buffer.
_SMALL = 1 << 16
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
#: A file longer than every size recorded for it is read as evidence (its own digest, whether
#: it begins with recorded bytes) only up to this much past the largest: beyond, the sizes
#: alone are the evidence, and a 20 GiB sparse file where RECORD says 10 bytes costs nothing.
APPENDED_WINDOW = 16 << 20

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
            if size > max(request.sizes, default=0) + APPENDED_WINDOW:
                return FileState(FileStatus.SIZE_ONLY, size, links=before.st_nlink, fingerprint=Fingerprint.of(before))
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


Seen = tuple[int, int, int, int, int]
"""(mtime_ns, ctime_ns, inode, device, links): what the stat of a proof saw of a file."""


def prove_file(
    path: str, size: int, algorithm: str, digest: bytes, view: memoryview, listings: dict[str, dict[str, int]]
) -> Seen | None:
    """What a file proved to hold exactly its row's bytes was seen at; None where it could not be proved.

    ``listings`` keeps each directory's regular files between calls: a file the listing does
    not show as regular (gone, a FIFO, a device, a symlink) is never opened.
    """
    directory, _, name = path.rpartition(os.sep)
    regular = listings.get(directory)
    if regular is None:
        regular = listings[directory] = _regular_files(directory)
    inode = regular.get(name)
    if inode is None:
        return None
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


def unchanged(path: str, vouched: tuple[int, int, int, int, int]) -> Seen | None:
    """What ``path`` was seen at, if it is a regular file still at fingerprint ``vouched``; else None."""
    try:
        st = os.lstat(path)  # lstat: a symlink is left to the exact path
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev) != vouched:
        return None
    return st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, st.st_nlink

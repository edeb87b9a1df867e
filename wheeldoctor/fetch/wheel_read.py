"""One locked wheel at hand (a local file, a whole download, a remote one by range): what it gives.

Its size and sha256 are compared with the lock's before anything of it is trusted; then
out of the zip come the end record, the central directory, and only the ``.dist-info``
RECORD and METADATA and the start-up hooks the wheel would install, each read alone and
bounded (:data:`CENTRAL_LIMIT`, :data:`MEMBER_LIMIT`, the hooks' budget). A wheel that is
broken (hash or size not the lock's, no or several RECORDs, not a zip) gives a finding; one
that cannot be read at all raises :class:`FetchError`, one line.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Sequence
from typing import TYPE_CHECKING

from wheeldoctor.fetch.sources import FileSource, RangedSource, SourceError
from wheeldoctor.formats import zip_members
from wheeldoctor.formats.lock_fetched import FetchedRecord
from wheeldoctor.formats.wheel_hooks import HOOK_BYTES, HOOK_SUFFIXES, HookBudget, HookMember
from wheeldoctor.model.errors import InputError
from wheeldoctor.model.findings import Code, Finding, Kind

if TYPE_CHECKING:
    from wheeldoctor.formats.lock import LockedWheel

#: The largest central directory read (a wheel of 100,000 files has about 10 MiB).
CENTRAL_LIMIT = 16 << 20
#: The largest RECORD or METADATA member read, compressed or not.
MEMBER_LIMIT = 16 << 20
#: Largest wheel downloaded (or hashed) whole where the lock gives its size.
DOWNLOAD_LIMIT = 8 << 30
#: Largest wheel downloaded (or hashed) whole where the lock gives no size (a pip report, say).
UNSIZED_LIMIT = 2 << 30
_CHUNK = 1 << 20
_SUFFIXES = (b".dist-info/RECORD", b".dist-info/METADATA", *HOOK_SUFFIXES)


class FetchError(InputError):
    """A wheel's RECORD cannot be had (404, host unreachable, a bound passed); one line, no credential in it."""

    def __init__(self, message: str, tip: str | None = None) -> None:
        super().__init__(message)
        self.tip = tip


def mib(n: int) -> str:
    return f"{n / (1 << 20):g} MiB"


def whole_limit(wheel: LockedWheel) -> int:
    return min(wheel.size, DOWNLOAD_LIMIT) if wheel.size is not None else UNSIZED_LIMIT


def read_local(wheel: LockedWheel, path: str) -> FetchedRecord:
    """A local wheel file: its size compared with the lock's, then hashed against the lock, then its RECORD read.

    Nothing is read of a file whose size is not the lock's, or that is larger than a whole
    download may be; a FIFO or device is never opened for reading.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise FetchError(f"{path}: cannot be read ({e.strerror or e})") from e
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FetchError(f"{path}: not a regular file")
        if wheel.size is not None and st.st_size != wheel.size:
            return broken(wheel, "local", size_finding(wheel, st.st_size, "the file is"))
        if st.st_size > whole_limit(wheel):
            raise FetchError(f"{path}: {st.st_size} bytes, more than {whole_limit(wheel)} (a wheel read whole)")
        source = FileSource(fd, st.st_size)
        digest = hashlib.sha256()
        for start in range(0, st.st_size, _CHUNK):
            digest.update(source.read(start, min(st.st_size, start + _CHUNK)))
        return read_whole(wheel, source, digest.hexdigest(), "local")
    except SourceError as e:
        raise FetchError(f"{path}: {e}") from None
    except OSError as e:
        raise FetchError(f"{path}: cannot be read ({e.strerror or e})") from e
    finally:
        os.close(fd)


def read_whole(wheel: LockedWheel, source: FileSource, sha256: str, how: str) -> FetchedRecord:
    """A wheel held whole: trusted when its hash is the lock's, then its RECORD read."""
    mismatch = hash_finding(wheel, sha256)
    if mismatch is not None:
        return broken(wheel, how, mismatch)
    return read_members(wheel, source, source=how, verified=wheel.sha256 is not None)


def unfetched(wheel: LockedWheel, why: str) -> FetchedRecord:
    """A wheel that could not be had: a WD086 finding of its own, nothing to judge against."""
    finding = Finding(
        code=Code.LOCK_WHEEL_UNFETCHED,
        kind=Kind.UNREADABLE,
        path=wheel.filename,
        message=f"the locked wheel cannot be had ({why}): not judged against the lock",
    )
    return broken(wheel, "failed", finding)


def hash_finding(wheel: LockedWheel, found: str) -> Finding | None:
    if wheel.sha256 is None or wheel.sha256 == found:
        return None
    return Finding(
        code=Code.LOCK_HASH_MISMATCH,
        kind=Kind.MODIFIED,
        path=wheel.filename,
        message="the wheel's sha256 differs from the lock: it is not trusted",
        expected=f"sha256:{wheel.sha256}",
        found=f"sha256:{found}",
    )


def size_finding(wheel: LockedWheel, size: int, who: str) -> Finding:
    return Finding(
        code=Code.LOCK_HASH_MISMATCH,
        kind=Kind.MODIFIED,
        path=wheel.filename,
        message=f"{who} a wheel whose size differs from the lock: it is not trusted, and not read",
        expected=f"{wheel.size} bytes",
        found=f"{size} bytes",
    )


def broken(wheel: LockedWheel, source: str, finding: Finding, *, fetched: int = 0, requests: int = 0) -> FetchedRecord:
    return FetchedRecord(
        wheel=wheel,
        record=None,
        metadata=None,
        dist_info=None,
        source=source,
        verified=False,
        fetched=fetched,
        requests=requests,
        findings=(finding,),
    )


def read_members(wheel: LockedWheel, file: FileSource | RangedSource, *, source: str, verified: bool) -> FetchedRecord:
    """RECORD and METADATA out of the zip: the end record, the central directory, two members."""
    try:
        tail = file.read(max(0, file.size - zip_members.END_SEARCH), file.size)
        place = zip_members.end_record(tail, file.size, limit=CENTRAL_LIMIT)
        entries = zip_members.scan(file.read(place.offset, place.offset + place.size), place, _SUFFIXES)
        records = zip_members.top_level(entries, ".dist-info/RECORD")
        if len(records) != 1:
            why = "no .dist-info/RECORD" if not records else f"{len(records)} RECORD files"
            finding = Finding(
                code=Code.NO_RECORD, kind=Kind.UNVERIFIABLE, path=wheel.filename, message=f"the locked wheel has {why}"
            )
            return broken(wheel, source, finding)
        dist_info = records[0].name.rpartition("/")[0]
        metadata = [e for e in entries if e.name == f"{dist_info}/METADATA"]
        for entry in (records[0], *metadata):
            if entry.file_size > MEMBER_LIMIT or entry.compress_size > MEMBER_LIMIT:
                finding = Finding(
                    code=Code.RECORD_UNDECODABLE,
                    kind=Kind.MALFORMED,
                    path=entry.name,
                    message=f"is too large to read from the wheel (more than {mib(MEMBER_LIMIT)})",
                )
                return broken(wheel, source, finding)
        wanted = (records[0], *metadata[-1:])
        _prefetch(file, wanted)
        members = [zip_members.read_member(file.read, e, file.size, limit=MEMBER_LIMIT) for e in wanted]
        hooks = read_hook_members(file, entries, dist_info)
    except zip_members.ZipError as e:
        finding = Finding(
            code=Code.WHEEL_UNREADABLE,
            kind=Kind.MALFORMED,
            path=wheel.filename,
            message=f"cannot be read as a wheel ({e})",
        )
        return broken(wheel, source, finding)
    return FetchedRecord(
        wheel=wheel,
        record=members[0],
        metadata=members[1] if len(members) > 1 else None,
        dist_info=dist_info,
        source=source,
        verified=verified,
        hooks=hooks,
    )


def read_hook_members(
    file: FileSource | RangedSource, entries: Sequence[zip_members.Entry], dist_info: str
) -> tuple[HookMember, ...]:
    """The members of a wheel that would install as start-up hooks, each read alone (by range, for a remote one).

    Bounded by :class:`~wheeldoctor.formats.wheel_hooks.HookBudget` (their count and bytes);
    one that is over it, or cannot be read (damaged, encrypted, another compression), comes
    back with its ``error`` and no bytes: the judge then treats it as running code.
    """
    from wheeldoctor.formats.wheelfile import hook_of

    budget = HookBudget()
    found: list[tuple[zip_members.Entry, str, str, str | None]] = []
    for entry in entries:
        placed = hook_of(entry.name, dist_info)
        if placed is not None:
            found.append((entry, *placed, budget.refuse(max(entry.file_size, entry.compress_size))))
    _prefetch(file, [e for e, _, _, refused in found if refused is None])
    hooks = []
    for entry, relative, kind, refused in found:
        if refused is not None:
            hooks.append(HookMember(name=entry.name, relative=relative, kind=kind, data=None, error=refused))
            continue
        try:
            data = zip_members.read_member(file.read, entry, file.size, limit=HOOK_BYTES)
        except zip_members.ZipError as e:
            hooks.append(HookMember(name=entry.name, relative=relative, kind=kind, data=None, error=str(e)))
            continue
        hooks.append(HookMember(name=entry.name, relative=relative, kind=kind, data=data))
    return tuple(hooks)


def _prefetch(file: FileSource | RangedSource, entries: Sequence[zip_members.Entry]) -> None:
    """By range, the members' local headers and data in one request when they lie close together."""
    if not isinstance(file, RangedSource) or not entries:
        return
    spans = [zip_members.span(e) for e in entries]
    spans = [(start, min(end, file.size)) for start, end in spans]
    low, high = min(s for s, _ in spans), max(e for _, e in spans)
    if high - low <= 2 * sum(e - s for s, e in spans) + (64 << 10):
        file.read(low, high)
    else:
        for start, end in spans:
            file.read(start, end)

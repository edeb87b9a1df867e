"""Wheel files before install: their RECORD, their members checked against it, and where each lands.

I/O edge for ``wheeldoctor wheels``. Members are hashed streaming from the zip, one
bounded chunk at a time; nothing is extracted.
"""

from __future__ import annotations

import hashlib
import posixpath
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from wheeldoctor.formats.headers import header_fields
from wheeldoctor.formats.record import decode_record
from wheeldoctor.formats.wheel_hooks import HookBudget, HookMember, hook_kind, site_relative
from wheeldoctor.model.findings import Code, Finding, Kind
from wheeldoctor.model.record import Record, RecordRow, bytes_match
from wheeldoctor.model.record_fields import encode_digest

_CHUNK = 1 << 20
_RECORD_LIMIT = 64 << 20
#: What zipfile raises on a damaged archive or member: zlib's error on bad deflate data, RuntimeError on an
#: encrypted member, ValueError on impossible offsets.
_UNREADABLE = (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError, ValueError, zlib.error)
#: Where a ``.data/<scheme>/`` member lands, as a placeholder the environment resolves.
_SCHEMES = {"purelib": "", "platlib": "", "scripts": "<scripts>/", "headers": "<headers>/", "data": "<data>/"}


@dataclass(frozen=True, slots=True)
class Member:
    """One recorded file of a wheel and the path it installs to."""

    target: str
    """Relative to site-packages, or ``<scripts>/``, ``<headers>/``, ``<data>/`` prefixed."""
    row: RecordRow


@dataclass(frozen=True, slots=True, kw_only=True)
class WheelFile:
    """A wheel as read: its identity, where its files land, and what is wrong with it."""

    path: str
    name: str
    version: str
    members: tuple[Member, ...]
    findings: tuple[Finding, ...]
    requires_dist: tuple[str, ...] = ()
    """Its METADATA's Requires-Dist lines, as written (packaging parses them)."""
    hooks: tuple[HookMember, ...] = ()
    """The start-up hooks it would install (``.pth``, ``.start``, ``sitecustomize``), RECORD or not, as read."""


class WheelError(ValueError):
    """A path given as a wheel cannot be read at all."""


def read_wheel(path: str) -> WheelFile:
    """Read a wheel file and check every member against its RECORD."""
    import os

    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    if not os.path.isfile(path):
        raise WheelError(f"{path}: no such wheel file")
    try:
        name, version, _, _ = parse_wheel_filename(os.path.basename(path))
    except InvalidWheelFilename as e:
        raise WheelError(f"{path}: not a wheel file name ({e})") from e
    try:
        with zipfile.ZipFile(path) as archive:
            return _read_archive(path, str(name), str(version), archive)
    except _UNREADABLE as e:
        finding = Finding(
            code=Code.WHEEL_UNREADABLE, kind=Kind.MALFORMED, path=None, message=f"cannot be read as a zip archive ({e})"
        )
        return WheelFile(path=path, name=str(name), version=str(version), members=(), findings=(finding,))


def _read_archive(path: str, name: str, version: str, archive: zipfile.ZipFile) -> WheelFile:
    infos = {info.filename: info for info in archive.infolist() if not info.is_dir()}
    records = [n for n in infos if n.count("/") == 1 and n.endswith(".dist-info/RECORD")]
    if len(records) != 1:
        why = "no .dist-info/RECORD" if not records else f"{len(records)} RECORD files"
        finding = Finding(code=Code.NO_RECORD, kind=Kind.UNVERIFIABLE, path=None, message=f"has {why}")
        return WheelFile(path=path, name=name, version=version, members=(), findings=(finding,))
    record_name = records[0]
    dist_info = record_name.rpartition("/")[0]
    if infos[record_name].file_size > _RECORD_LIMIT:
        finding = Finding(
            code=Code.RECORD_UNDECODABLE, kind=Kind.MALFORMED, path=record_name, message="RECORD is too large to read"
        )
        return WheelFile(path=path, name=name, version=version, members=(), findings=(finding,))
    record: Record = decode_record(archive.read(record_name))
    findings: list[Finding] = list(record.problems)
    members: list[Member] = []
    for row in record.rows:
        target = install_target(row.path, dist_info)
        if target is None:
            findings.append(unsafe_path(row.path))
            continue
        info = infos.get(row.path)
        if info is None:
            findings.append(
                Finding(
                    code=Code.WHEEL_MEMBER_MISSING,
                    kind=Kind.MISSING,
                    path=row.path,
                    message="is in RECORD but not in the wheel",
                )
            )
            continue
        problem = _check_member(archive, info, row)
        if problem is not None:
            findings.append(problem)
        if not target.startswith(dist_info + "/"):
            members.append(Member(target, row))
    for member_name in infos:
        base = member_name.rpartition("/")[2]
        if member_name not in record.listed and member_name != record_name and base not in ("RECORD.jws", "RECORD.p7s"):
            findings.append(
                Finding(
                    code=Code.WHEEL_MEMBER_UNRECORDED,
                    kind=Kind.UNVERIFIABLE,
                    path=member_name,
                    message="is in the wheel but not in RECORD",
                )
            )
    requires = _requires_dist(archive, infos.get(f"{dist_info}/METADATA"))
    return WheelFile(
        path=path,
        name=name,
        version=version,
        members=tuple(members),
        findings=tuple(findings),
        requires_dist=requires,
        hooks=tuple(_read_hooks(archive, infos.values(), dist_info)),
    )


def _read_hooks(archive: zipfile.ZipFile, infos: Iterable[zipfile.ZipInfo], dist_info: str) -> Iterator[HookMember]:
    """Every member that would install as a start-up hook, read whole within :class:`HookBudget`'s bounds."""
    budget = HookBudget()
    for info in infos:
        placed = hook_of(info.filename, dist_info)
        if placed is None:
            continue
        relative, kind = placed
        refused = budget.refuse(info.file_size)
        if refused is not None:
            yield HookMember(name=info.filename, relative=relative, kind=kind, data=None, error=refused)
            continue
        try:
            data = archive.read(info)
        except _UNREADABLE as e:
            yield HookMember(
                name=info.filename, relative=relative, kind=kind, data=None, error=f"cannot be extracted ({e})"
            )
            continue
        yield HookMember(name=info.filename, relative=relative, kind=kind, data=data)


def hook_of(member: str, dist_info: str) -> tuple[str, str] | None:
    """(where it lands below the site directory, its kind) for a member that installs as a start-up hook; else None.

    A directory entry (its name ends with ``/``) installs no file.
    """
    target = install_target(member, dist_info) if not member.endswith("/") else None
    relative = site_relative(target) if target is not None else None
    kind = hook_kind(relative) if relative is not None else None
    return (relative, kind) if relative is not None and kind is not None else None


def _requires_dist(archive: zipfile.ZipFile, info: zipfile.ZipInfo | None) -> tuple[str, ...]:
    """Requires-Dist from the wheel's METADATA headers; none when it is missing or too large."""
    if info is None or info.file_size > _RECORD_LIMIT:
        return ()
    return requires_of(archive.read(info))


def requires_of(metadata: bytes) -> tuple[str, ...]:
    """Requires-Dist lines of METADATA bytes, as written."""
    return tuple(v.strip() for v in header_fields(metadata).get("requires-dist", ()))


def wheel_from_record(
    path: str,
    name: str,
    version: str,
    record: bytes,
    dist_info: str,
    *,
    requires_dist: tuple[str, ...] = (),
    findings: tuple[Finding, ...] = (),
    hooks: tuple[HookMember, ...] = (),
) -> WheelFile:
    """A wheel known by its RECORD alone (fetched from an index): members as RECORD lists them.

    Nothing vouches that the members hold RECORD's bytes (the wheel is not at hand); the
    rows are what ``preflight`` compares, as it does for a wheel read whole.
    """
    parsed = decode_record(record)
    found: list[Finding] = [*findings, *parsed.problems]
    members: list[Member] = []
    for row in parsed.rows:
        target = install_target(row.path, dist_info)
        if target is None:
            found.append(unsafe_path(row.path))
        elif not target.startswith(dist_info + "/"):
            members.append(Member(target, row))
    return WheelFile(
        path=path,
        name=name,
        version=version,
        members=tuple(members),
        findings=tuple(found),
        requires_dist=requires_dist,
        hooks=hooks,
    )


def install_target(member: str, dist_info: str) -> str | None:
    """Where a member installs, relative to site-packages; None for a path that climbs out."""
    if member.startswith("/") or "\\" in member:
        return None
    normal = posixpath.normpath(member)
    if normal.startswith("../") or normal == "..":
        return None
    head, _, rest = normal.partition("/")
    if head.endswith(".data") and rest:
        scheme, _, inner = rest.partition("/")
        if scheme in _SCHEMES and inner:
            return _SCHEMES[scheme] + inner
        return None
    return normal


def unsafe_path(member: str, *, whose: str | None = None) -> Finding:
    """WD022 for a RECORD row that :func:`install_target` refuses; ``whose`` names the wheel in the message."""
    message = "would install outside the environment"
    return Finding(
        code=Code.WHEEL_UNSAFE_PATH, kind=Kind.OUTSIDE, path=member, message=f"{whose} {message}" if whose else message
    )


def _check_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, row: RecordRow) -> Finding | None:
    if row.size is not None and info.file_size != row.size:
        return Finding(
            code=Code.SIZE_MISMATCH,
            kind=Kind.MODIFIED,
            path=row.path,
            message="size in the wheel differs from RECORD",
            expected=f"{row.size} bytes",
            found=f"{info.file_size} bytes",
        )
    assert row.algorithm is not None and row.digest is not None
    digest = hashlib.new(row.algorithm)
    try:
        with archive.open(info) as member:
            while chunk := member.read(_CHUNK):
                digest.update(chunk)
    except _UNREADABLE as e:
        return Finding(
            code=Code.WHEEL_UNREADABLE, kind=Kind.MALFORMED, path=row.path, message=f"cannot be extracted ({e})"
        )
    if not bytes_match(row.digest, None, None, digest.digest()):  # the size is checked above
        return Finding(
            code=Code.HASH_MISMATCH,
            kind=Kind.MODIFIED,
            path=row.path,
            message="content in the wheel differs from RECORD",
            expected=row.hash_text,
            found=f"{row.algorithm}={encode_digest(digest.digest())}",
        )
    return None

"""The I/O edge: find the distributions installed on a list of site directories.

The first distribution found for a name is the one Python uses (as in
``importlib.metadata``); later ones are kept, marked inactive, for the duplicate
check. Nothing here verifies a file; it only reads dist-info metadata.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from wheeldoctor.formats.headers import header_fields
from wheeldoctor.model.environment import Environment, InstalledDistribution, Metadata, MetadataDir
from wheeldoctor.model.findings import Code, Finding, Kind
from wheeldoctor.model.fingerprint import settled_record_identity
from wheeldoctor.model.record import Record
from wheeldoctor.model.sitedirs import locations as site_locations
from wheeldoctor.model.sitedirs import lookup_key, prefix_forms, root_for
from wheeldoctor.where.filesystem import ReadError, read_regular

if TYPE_CHECKING:  # the gate's slow path imports this module: keep startup's imports off it
    from packaging.utils import NormalizedName

    from wheeldoctor.model.startup import Startup

#: RECORD and METADATA above this size are refused rather than read into memory.
METADATA_LIMIT = 64 << 20
_SUFFIXES = (".dist-info", ".egg-info")

Fingerprints = tuple["tuple[int, int, int, int, int] | None", ...]
Parts = tuple[str, str, str, tuple[str, ...], "str | None", tuple[str, ...], "str | None", tuple[str, ...]]


class SiteMemo(Protocol):
    """What one site directory's dist-infos gave, kept between runs (the engine's metadata memo)."""

    def fingerprints(self, dist_path: str) -> Fingerprints | None: ...
    def get(self, name: str, fingerprints: Fingerprints) -> Parts | None: ...
    def keep(self, dist_path: str, fingerprints: Fingerprints, parts: Parts) -> None: ...
    def save(self) -> None: ...


MemoFor = Callable[[str], SiteMemo]
"""The memo of a site directory, by its path."""


def scan_location(location: str) -> Iterator[MetadataDir]:
    """Yield the metadata directories in one site directory, in directory order.

    Directory order, not sorted order: it is the order ``importlib.metadata`` sees, so
    when one directory holds two dist-infos of a name, we agree on which one is used.
    """
    try:
        with os.scandir(location) as entries:
            names = [entry.name for entry in entries]
    except OSError:
        return
    for name in names:
        lowered = name.lower()
        if lowered.endswith(_SUFFIXES):
            stem = name.rpartition(".")[0].partition("-")[0]
            yield MetadataDir(os.path.join(location, name), location, lookup_key(stem))


def load_distribution(
    found: MetadataDir,
    root: str,
    *,
    read_metadata: bool = True,
    active: bool = True,
    read_record: bool = True,
    defer_record: bool = False,
    memo: SiteMemo | None = None,
) -> InstalledDistribution:
    """Read one metadata directory; every problem becomes a finding, nothing raises.

    ``read_record=False`` leaves RECORD unread (``record`` None, no finding about it): for
    checks of metadata alone, which must not pay for parsing thousands of rows.
    ``defer_record`` leaves it for :func:`with_record`, so that verification can read and
    parse many RECORDs in parallel. ``memo`` (its site directory's) gives what a dist-info
    whose files are unchanged gave before, and keeps what is read.
    """
    problems: list[Finding] = []
    dir_name = os.path.basename(found.path)
    name, _, version = dir_name.rpartition(".")[0].partition("-")
    version = version.partition("-")[0]
    metadata: Metadata | None = None
    legacy = found.path.lower().endswith(".egg-info")
    # Fingerprints before anything is read: a file changed while read then misses next time.
    fingerprints = memo.fingerprints(found.path) if memo is not None and read_metadata and not legacy else None
    parts = memo.get(dir_name, fingerprints) if memo is not None and fingerprints is not None else None
    if parts is not None:  # its files are as they were when read: what they gave then
        name, raw_name, version, requires, requires_python, extras, _, _ = parts
        metadata = Metadata(
            name=raw_name,
            version=version,
            requires_dist=requires,
            requires_python=requires_python,
            provides_extra=extras,
        )
    elif read_metadata:
        meta_path = (
            found.path if os.path.isfile(found.path) else os.path.join(found.path, "PKG-INFO" if legacy else "METADATA")
        )
        metadata, problem = _read_metadata(meta_path, name, version)
        if problem is not None:
            problems.append(problem)
        else:
            assert metadata is not None
            name, version = metadata.name, metadata.version
            if legacy and meta_path != found.path:
                metadata = _with_requires_txt(metadata, os.path.join(found.path, "requires.txt"))
        name = _canonical(name)
    else:
        name = found.key
    record: Record | None = None
    installer: str | None = None
    tags: tuple[str, ...] = ()
    record_identity: tuple[int, int, int, int, int] | None = None
    deferred = False
    if parts is not None or os.path.isdir(found.path):  # a remembered dist-info is a directory
        if read_record and defer_record:
            deferred = True
        elif read_record:
            record_identity, record, problem = read_record_of(found.path, legacy)
            if problem is not None:
                problems.append(problem)
        if parts is not None:
            installer, tags = parts[6], parts[7]
        else:
            installer = _read_line(os.path.join(found.path, "INSTALLER"))
            if read_metadata and not legacy:
                tags = _read_wheel_tags(os.path.join(found.path, "WHEEL"))
            if memo is not None and fingerprints is not None and metadata is not None:
                m = metadata
                kept = (name, m.name, m.version, m.requires_dist, m.requires_python, m.provides_extra, installer, tags)
                memo.keep(found.path, fingerprints, kept)
    elif read_record:
        problems.append(_no_record(legacy))
    return InstalledDistribution(
        name=name,
        version=version,
        path=found.path,
        location=found.location,
        root=root,
        installer=installer,
        record=record,
        problems=tuple(problems),
        metadata=metadata,
        active=active,
        wheel_tags=tags,
        record_identity=record_identity,
        record_deferred=deferred,
    )


def read_record_of(
    path: str, legacy: bool
) -> tuple[tuple[int, int, int, int, int] | None, Record | None, Finding | None]:
    """(identity, record, problem) of the RECORD in metadata directory ``path``; the identity first."""
    identity = settled_record_identity(path)
    record, problem = _read_record(os.path.join(path, "RECORD"), legacy)
    return identity, record, problem


def with_record(dist: InstalledDistribution) -> InstalledDistribution:
    """``dist`` with its deferred RECORD read, exactly as :func:`load_distribution` reads it."""
    if not dist.record_deferred:
        return dist
    identity, record, problem = read_record_of(dist.path, dist.legacy)
    problems = dist.problems if problem is None else (*dist.problems, problem)
    return replace(dist, record=record, record_identity=identity, problems=problems, record_deferred=False)


def _canonical(name: str) -> NormalizedName:
    from packaging.utils import canonicalize_name

    return canonicalize_name(name)


def _no_record(legacy: bool) -> Finding:
    why = "an .egg-info install records no files" if legacy else "the dist-info has no RECORD"
    return Finding(code=Code.NO_RECORD, kind=Kind.UNVERIFIABLE, path="RECORD", message=f"nothing to verify: {why}")


def _read_record(path: str, legacy: bool) -> tuple[Record | None, Finding | None]:
    from wheeldoctor.formats.record import decode_record  # with csv: only where RECORD is read

    data = read_regular(path, METADATA_LIMIT)
    if isinstance(data, ReadError):
        if data.missing:
            return None, _no_record(legacy)
        return None, Finding(code=Code.RECORD_UNDECODABLE, kind=Kind.MALFORMED, path="RECORD", message=data.message)
    return decode_record(data), None


def _read_line(path: str) -> str | None:
    data = read_regular(path, 4096)
    if isinstance(data, ReadError):
        return None
    text = data.decode("utf-8", "replace").strip()
    return text.splitlines()[0].strip() if text else None


def _read_wheel_tags(path: str) -> tuple[str, ...]:
    data = read_regular(path, 1 << 20)
    if isinstance(data, ReadError):
        return ()
    lines = data.decode("utf-8", "replace").splitlines()
    return tuple(line.partition(":")[2].strip() for line in lines if line.lower().startswith("tag:"))


def _read_metadata(path: str, dir_name: str, dir_version: str) -> tuple[Metadata | None, Finding | None]:
    filename = os.path.basename(path)
    data = read_regular(path, METADATA_LIMIT)
    if isinstance(data, ReadError):
        return None, Finding(code=Code.METADATA_PROBLEM, kind=Kind.MALFORMED, path=filename, message=data.message)
    fields = header_fields(data)
    name, version, requires_python = (fields.get(f, [None])[0] for f in ("name", "version", "requires-python"))
    if not name or not version:
        missing = " and ".join(f for f, v in (("Name", name), ("Version", version)) if not v)
        return None, Finding(
            code=Code.METADATA_PROBLEM, kind=Kind.MALFORMED, path=filename, message=f"has no {missing} field"
        )
    return (
        Metadata(
            name=name.strip(),
            version=version.strip(),
            requires_dist=tuple(v.strip() for v in fields.get("requires-dist", ())),
            requires_python=requires_python.strip() if requires_python else None,
            provides_extra=tuple(v.strip() for v in fields.get("provides-extra", ())),
        ),
        None,
    )


def _with_requires_txt(metadata: Metadata, path: str) -> Metadata:
    """An egg-info's metadata with what its ``requires.txt`` adds where PKG-INFO has none, as pip reads it."""
    if metadata.requires_dist and metadata.provides_extra:
        return metadata
    data = read_regular(path, METADATA_LIMIT)
    if isinstance(data, ReadError):  # none (most egg-infos of projects without requirements), or unreadable
        return metadata
    from wheeldoctor.formats.requires_txt import parse_requires_txt  # packaging: only where an egg-info has one

    found = parse_requires_txt(data.decode("utf-8", "replace"))
    return replace(
        metadata,
        requires_dist=metadata.requires_dist or found.requires_dist,
        provides_extra=metadata.provides_extra or found.provides_extra,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Reading:
    """How :func:`load_environment` reads each dist-info.

    ``records=False`` reads metadata only; ``defer_records`` leaves RECORDs for the
    verification to read (see :func:`load_distribution`). With ``memos``, what each
    dist-info gave is kept, and taken again while its files are unchanged
    (:mod:`wheeldoctor.engine.distinfo_memo`).
    """

    records: bool = True
    defer_records: bool = False
    memos: MemoFor | None = None


def load_environment(
    label: str,
    paths: Sequence[str],
    prefixes: Sequence[str],
    *,
    python: str | None = None,
    markers: Sequence[tuple[str, str]] = (),
    tags: Sequence[str] | None = None,
    startup: Startup | None = None,
    reading: Reading = Reading(),
) -> Environment:
    """Read every distribution on ``paths`` as ``reading`` says; the first of each name is the active one."""
    locations = site_locations(paths)  # as given, each real directory once
    all_prefixes = tuple(prefix_forms(prefixes))
    seen: set[str] = set()
    distributions: list[InstalledDistribution] = []
    for location in locations:
        root = root_for(location, all_prefixes)
        memo = reading.memos(location) if reading.memos is not None else None
        for found in scan_location(location):
            dist = load_distribution(
                found, root, active=True, read_record=reading.records, defer_record=reading.defer_records, memo=memo
            )
            if dist.name in seen:
                dist = replace(dist, active=False)
            seen.add(dist.name)
            distributions.append(dist)
        if memo is not None:
            memo.save()
    return Environment(
        label=label,
        python=python,
        paths=tuple(locations),
        prefixes=all_prefixes,
        distributions=tuple(distributions),
        markers=tuple(markers),
        tags=None if tags is None else tuple(tags),
        startup=startup,
    )


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))

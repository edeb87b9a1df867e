"""An environment against its lock: membership, and the locked wheels' RECORDs as the claims.

Pure judgement on data: a selected :class:`~wheeldoctor.formats.lock.Lock`, the
installed distributions' identities, and the RECORDs fetched for the locked wheels
(:mod:`wheeldoctor.fetch.remote`). Two jobs:

- :func:`membership`: locked but missing, another version, installed from a wheel the
  lock does not list, installed but not locked;
- :func:`lock_claims`: the claims to verify a distribution's files with, taken from the
  locked wheel's RECORD instead of the installed one, and a ``RECORD rewritten`` finding
  for every installed row that the wheel's RECORD contradicts. The files are then judged
  by the same verifier as any other claims.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from wheeldoctor.formats.lock import Lock, LockedPackage
from wheeldoctor.formats.lock_fetched import FetchedRecord
from wheeldoctor.formats.record import decode_record
from wheeldoctor.formats.wheelfile import WheelFile, install_target, requires_of, unsafe_path, wheel_from_record
from wheeldoctor.model.findings import Code, Finding, Kind
from wheeldoctor.model.record import Record, RecordRow

#: dist-info files an installer writes that no wheel ships; judged by the installed RECORD.
INSTALLER_FILES = frozenset({"INSTALLER", "REQUESTED", "direct_url.json", "RECORD", "uv_cache.json", "uv_build.json"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Installed:
    """What membership needs of an installed distribution (read by the caller)."""

    name: str
    version: str
    wheel_tags: tuple[str, ...] = ()
    direct_url: str | None = None
    """``url`` of its ``direct_url.json``, when it has one."""
    direct_kind: str | None = None
    """``archive_info``, ``dir_info`` or ``vcs_info``: what direct_url.json says it came from."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Membership:
    """Membership findings per distribution name, and the locked names not installed."""

    findings: Mapping[str, tuple[Finding, ...]]
    missing: tuple[LockedPackage, ...]
    seeded: tuple[Installed, ...] = ()
    """Installed, not in the lock, and one of the packages ``venv`` seeds: said once, not a finding."""


def venv_seeds(python_version: str) -> frozenset[str]:
    """What ``python -m venv`` installs (ensurepip): pip, and setuptools before Python 3.12."""
    from packaging.version import InvalidVersion, Version

    try:
        old = Version(python_version) < Version("3.12")
    except InvalidVersion:
        old = False
    return frozenset({"pip", "setuptools"} if old else {"pip"})


def membership(lock: Lock, installed: Sequence[Installed], seeds: frozenset[str] = frozenset()) -> Membership:
    """Judge what is installed against what the lock selects for this interpreter.

    ``seeds`` (:func:`venv_seeds`): names that, when the lock holds them for no target at
    all, are taken as the environment's seed packages, not as WD083.
    """
    from packaging.version import Version

    by_name = {d.name: d for d in installed}
    locked = {p.name: p for p in lock.packages}
    found: dict[str, list[Finding]] = {}
    missing = []
    for package in lock.packages:
        dist = by_name.get(package.name)
        if dist is None:
            if package.source != "virtual":  # a uv project that is not a package is never installed
                missing.append(package)
            continue
        here = found.setdefault(dist.name, [])
        if package.version is not None:
            try:
                same = Version(package.version) == Version(dist.version)
            except ValueError:  # InvalidVersion, or digits past int()'s limit
                same = package.version == dist.version
            if not same:
                here.append(
                    Finding(
                        code=Code.LOCKED_OTHER_VERSION,
                        kind=Kind.MODIFIED,
                        path=None,
                        message="is installed at another version than the lock's",
                        expected=package.version,
                        found=dist.version,
                    )
                )
                continue
        if package.source == "wheel":
            problem = _provenance(package, dist)
            if problem is not None:
                here.append(problem)
    seeded = []
    for dist in installed:
        if dist.name not in lock.listed and dist.name in seeds:
            seeded.append(dist)
            continue
        if dist.name not in locked:
            # Locked for another platform, Python, extra or group: the lock knows it, this target does not take it.
            why = (
                "locks it only for other markers, extras or groups" if dist.name in lock.listed else "does not lock it"
            )
            found.setdefault(dist.name, []).append(
                Finding(
                    code=Code.NOT_LOCKED,
                    kind=Kind.UNLOCKED,
                    path=None,
                    message=f"is installed but {lock.path} {why}",
                )
            )
    return Membership(
        findings={k: tuple(v) for k, v in found.items() if v},
        missing=tuple(missing),
        seeded=tuple(sorted(seeded, key=lambda d: d.name)),
    )


@dataclass(frozen=True, slots=True)
class LockVerdict:
    """What a lock adds to a check: findings per installed distribution, and the locked ones not installed."""

    findings: Mapping[str, tuple[Finding, ...]]
    missing: tuple[tuple[str, Finding], ...] = ()
    added: tuple[WheelFile, ...] = ()
    """The locked wheels the lock would install (not installed, or at another version): their hooks are judged."""


def missing_finding(package: LockedPackage, lock_path: str) -> Finding:
    """The finding for a locked package that is not installed."""
    return Finding(
        code=Code.LOCKED_MISSING,
        kind=Kind.MISSING,
        path=None,
        message=f"is locked by {lock_path} but not installed",
        expected=package.version,
        found=None,
    )


def not_judged_finding(package: LockedPackage) -> Finding:
    """The finding for an installed package the lock installs from no wheel: nothing to judge it against."""
    return Finding(
        code=Code.LOCK_NOT_JUDGED,
        kind=Kind.UNVERIFIABLE,
        path=None,
        message=f"is not judged against the lock: it locks a {package.source}, no wheel whose RECORD could be compared",
    )


def _provenance(package: LockedPackage, dist: Installed) -> Finding | None:
    """A finding when the dist-info says it came from a wheel the lock does not list."""
    filenames = {w.filename for w in package.wheels}
    if dist.direct_kind in ("dir_info", "vcs_info"):
        return Finding(
            code=Code.NOT_FROM_LOCKED_WHEEL,
            kind=Kind.MODIFIED,
            path="direct_url.json",
            message="was installed from a directory or VCS checkout, not a locked wheel",
            expected=", ".join(sorted(filenames)) or None,
            found=dist.direct_url,
        )
    if dist.direct_url is not None and dist.direct_kind == "archive_info":
        import urllib.parse

        base = urllib.parse.unquote(posixpath.basename(urllib.parse.urlsplit(dist.direct_url).path))
        urls = {w.url for w in package.wheels if w.url}
        if base not in filenames and dist.direct_url not in urls:
            return Finding(
                code=Code.NOT_FROM_LOCKED_WHEEL,
                kind=Kind.MODIFIED,
                path="direct_url.json",
                message="was installed from a file the lock does not list",
                expected=", ".join(sorted(filenames)) or None,
                found=base,
            )
    if dist.wheel_tags:
        tags = set(dist.wheel_tags)
        if not any(tags <= w.tags or tags & w.tags for w in package.wheels):
            return Finding(
                code=Code.NOT_FROM_LOCKED_WHEEL,
                kind=Kind.MODIFIED,
                path="WHEEL",
                message="was installed from a wheel whose tags no locked wheel has (built locally, or from elsewhere)",
                expected=", ".join(sorted({t for w in package.wheels for t in w.tags})) or None,
                found=", ".join(sorted(tags)),
            )
    return None


@dataclass(frozen=True, slots=True)
class LockClaims:
    """The RECORD to verify a distribution's files with, and what the installed RECORD got wrong."""

    record: Record
    findings: tuple[Finding, ...]


def lock_claims(installed: Record | None, wheel_record: bytes, dist_info: str) -> LockClaims:
    """Claims from the locked wheel's RECORD, with the installer's own files from the installed one.

    Every row of the wheel that installs under site-packages is claimed as the wheel has
    it. The installed RECORD keeps the files an installer writes or moves (INSTALLER,
    REQUESTED, direct_url.json, RECORD, byte-code of the wheel's modules, scripts and
    ``.data`` files placed outside site-packages): those are judged by their installed
    rows. Any other disagreement is a ``RECORD rewritten`` finding: an installed row whose
    digest differs from the wheel's (both given), a wheel file the installed RECORD
    omits, or an installed row for a file the wheel does not ship.
    """
    wheel = decode_record(wheel_record)
    findings: list[Finding] = [
        Finding(
            code=f.code,
            kind=f.kind,
            path=f.path,
            message=f"locked wheel's RECORD: {f.message}",
            expected=f.expected,
            found=f.found,
        )
        for f in wheel.problems
    ]
    ours = {r.path: r for r in installed.rows} if installed is not None else {}
    listed = installed.listed if installed is not None else frozenset()
    claimed: dict[str, RecordRow] = {}
    for row in wheel.rows:
        target = install_target(row.path, dist_info)
        if target is None:
            findings.append(unsafe_path(row.path, whose="locked wheel"))
            continue
        if target.startswith("<"):
            continue  # scripts (shebangs rewritten), headers, data: placed by scheme, judged by the installed row
        claimed[target] = RecordRow(target, row.algorithm, row.digest, row.size, row.line)
        mine = ours.get(target)
        if mine is None:
            if installed is not None:
                why = "is in the locked wheel's RECORD but the installed RECORD omits it"
                if target in listed:
                    why = "has a hash in the locked wheel's RECORD but none in the installed RECORD"
                findings.append(
                    Finding(
                        code=Code.RECORD_REWRITTEN,
                        kind=Kind.MODIFIED,
                        path=target,
                        message=why,
                        expected=row.hash_text,
                        found=None,
                    )
                )
        elif (mine.algorithm, mine.digest, mine.size) != (row.algorithm, row.digest, row.size):
            findings.append(
                Finding(
                    code=Code.RECORD_REWRITTEN,
                    kind=Kind.MODIFIED,
                    path=target,
                    message="RECORD rewritten: the installed row differs from the locked wheel's",
                    expected=_row_text(row),
                    found=_row_text(mine),
                )
            )
    sources = {p for p in claimed if p.endswith(".py")}
    kept: list[RecordRow] = []
    for path, mine in ours.items():
        if path in claimed:
            continue
        kept.append(mine)
        if not _installer_written(path, dist_info, sources):
            findings.append(
                Finding(
                    code=Code.RECORD_REWRITTEN,
                    kind=Kind.MODIFIED,
                    path=path,
                    message="RECORD rewritten: the installed RECORD lists a file the locked wheel does not ship",
                    expected=None,
                    found=mine.hash_text,
                )
            )
    rows = (*claimed.values(), *kept)
    return LockClaims(Record(rows, (), frozenset(listed | claimed.keys())), tuple(findings))


def _row_text(row: RecordRow) -> str | None:
    text = row.hash_text
    if text is None:
        return None
    return f"{text} ({row.size} bytes)" if row.size is not None else text


def _installer_written(path: str, dist_info: str, sources: set[str]) -> bool:
    head, _, base = path.rpartition("/")
    if head == dist_info and base in INSTALLER_FILES:
        return True
    if path.startswith("../") or path.startswith("/"):
        return True  # scripts and .data files moved to the scheme's places: not comparable to the wheel
    if "/__pycache__/" in f"/{path}" and base.endswith(".pyc"):
        module = base.partition(".")[0]
        directory = posixpath.dirname(head)
        return (f"{directory}/{module}.py" if directory else f"{module}.py") in sources
    return False


def locked_wheel_files(fetched: Sequence[FetchedRecord], packages: Sequence[LockedPackage]) -> list[WheelFile]:
    """Fetched RECORDs as :class:`WheelFile` values for ``preflight`` (the ``wheels`` judge)."""
    by_wheel = {id(p.selected): p for p in packages if p.selected is not None}
    files = []
    for item in fetched:
        package = by_wheel.get(id(item.wheel))
        name = str(package.name) if package is not None else item.wheel.filename.partition("-")[0]
        version = (package.version if package is not None else None) or item.wheel.filename.split("-")[1]
        where = item.wheel.url or item.wheel.path or item.wheel.filename
        if item.record is None or item.dist_info is None:
            files.append(WheelFile(path=where, name=name, version=version, members=(), findings=item.findings))
            continue
        requires = requires_of(item.metadata) if item.metadata is not None else ()
        files.append(
            wheel_from_record(
                where,
                name,
                version,
                item.record,
                item.dist_info,
                requires_dist=requires,
                findings=item.findings,
                hooks=item.hooks,
            )
        )
    return files

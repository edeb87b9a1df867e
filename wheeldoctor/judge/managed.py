"""Distributions a system package manager owns, judged by that manager's own record.

dpkg's md5sums (what ``dpkg --verify`` and debsums check), conda's ``paths_data`` and
``rpm -V`` decide such a distribution's verdict, not its RECORD: distributions strip
shared objects after the wheel's RECORD was written, spell digests their own way, move
scripts, or ship no RECORD at all (egg-info). Where RECORD holds a stronger digest of a
file the manager also lists, both are checked, and a file that matches both is counted
as verified by the stronger one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from wheeldoctor.formats.rpm import altered
from wheeldoctor.judge.claims import Claim, matches, resolve
from wheeldoctor.model.environment import InstalledDistribution
from wheeldoctor.model.files import FileState, FileStatus
from wheeldoctor.model.findings import Code, Finding, Kind
from wheeldoctor.model.managed import ManagedBy
from wheeldoctor.model.record import RecordRow, fast_tuple
from wheeldoctor.model.sitedirs import dir_prefix

#: The ``line`` of a row made from a package manager's record: RECORD's rows count from 1.
MANAGER_LINE = 0
#: Stronger than md5, in the order a file verified by several is credited to.
_STRONG = ("sha512", "sha384", "sha256")
#: RECORD's own problems (no RECORD, malformed rows) say nothing once the manager's record judges.
_RECORD_CODES = frozenset({Code.NO_RECORD, Code.RECORD_UNDECODABLE, Code.RECORD_ROW_MALFORMED})


def judged_by_manager(dist: InstalledDistribution) -> bool:
    """Whether ``dist``'s manager record, not its RECORD, decides its verdict."""
    return dist.managed_by is not None and dist.managed_by.judges


def resolve_managed(dist: InstalledDistribution) -> tuple[list[Claim], list[Finding]]:
    """One claim per file the manager records, plus RECORD's rows for those same files.

    RECORD's rows for files the manager does not list (scripts Debian moved elsewhere,
    a RECORD of the upstream wheel) are left out: the package defines what is installed.
    """
    managed = dist.managed_by
    assert managed is not None
    prefix = dir_prefix(dist.location)
    make = fast_tuple
    claims: list[Claim] = []
    for file in managed.files:
        shown = file.path[len(prefix) :] if file.path.startswith(prefix) else file.path
        row = make(RecordRow, (shown, file.algorithm, file.digest, file.size, MANAGER_LINE))
        claims.append(make(Claim, (dist, row, file.path)))
    packaged = {file.path for file in managed.files}
    if dist.record is not None and packaged:
        record_claims, _ = resolve(dist)
        claims += [c for c in record_claims if c.path in packaged and c.row.algorithm in _STRONG]
    return claims, []


def judge_managed(
    dist: InstalledDistribution,
    claims: Sequence[Claim],
    states: Mapping[str, FileState],
    owners: Mapping[str, Sequence[Claim]],
) -> tuple[list[Finding], dict[str, int]]:
    """The findings on ``dist`` by its manager's record, and how many files each digest verified."""
    managed = dist.managed_by
    assert managed is not None
    findings = [p for p in dist.problems if p.code not in _RECORD_CODES]
    if managed.unverifiable is not None:
        findings.append(Finding(Code.MANAGER_UNVERIFIABLE, Kind.UNVERIFIABLE, None, managed.unverifiable))
        return findings, {}
    if managed.verdicts is not None:
        return findings + _rpm_findings(managed), {}
    stronger: dict[str, RecordRow] = {c.path: c.row for c in claims if c.row.line != MANAGER_LINE}
    verified: dict[str, int] = {}
    for claim in claims:
        row = claim.row
        if row.line != MANAGER_LINE:
            continue
        state = states[claim.path]
        if matches(row, state):
            strong = stronger.get(claim.path)
            algorithm = strong.algorithm if strong is not None and matches(strong, state) else row.algorithm
            key = algorithm or "unknown"
            verified[key] = verified.get(key, 0) + 1
            continue
        if state.status is FileStatus.MISSING and claim.path in managed.skipped:
            continue  # dpkg's path-exclude kept it from being unpacked: as debsums, not missed
        findings.append(_finding(claim, state, managed, stronger.get(claim.path), owners.get(claim.path, ())))
    return findings, verified


def digest_text(algorithm: str, digest: bytes | None) -> str:
    """A manager's digest as its own tools print it: hex (``md5sum``, ``sha256sum``)."""
    return f"{algorithm}={digest.hex()}" if digest is not None else algorithm


def _whose(managed: ManagedBy) -> str:
    return f"{managed.tool.value} package {managed.package}" if managed.package else managed.tool.value


def _record_name(managed: ManagedBy) -> str:
    """The manager's record as its users know it: ``python3-pip's md5sums (dpkg)``."""
    kind = {"dpkg": "md5sums", "conda": "conda-meta record"}.get(managed.tool.value, "record")
    return f"{managed.package}'s {kind} ({managed.tool.value})" if managed.package else f"{managed.tool.value}'s {kind}"


def _finding(
    claim: Claim, state: FileState, managed: ManagedBy, strong: RecordRow | None, others: Sequence[Claim]
) -> Finding:
    row, whose = claim.row, _whose(managed)
    expected = f"{digest_text(row.algorithm or '', row.digest)} ({whose})"
    if state.status is FileStatus.MISSING:
        return Finding(Code.MISSING, Kind.MISSING, row.path, f"is missing; {whose} installed it", expected)
    if state.status is FileStatus.NOT_REGULAR:
        return Finding(Code.NOT_REGULAR, Kind.UNREADABLE, row.path, f"{state.detail}, not a regular file; not read")
    if state.status is FileStatus.CHANGED:
        return Finding(
            Code.CHANGED_WHILE_READ, Kind.UNREADABLE, row.path, f"{state.detail}; check again once it is quiet"
        )
    if state.status is FileStatus.UNREADABLE:
        return Finding(Code.UNREADABLE, Kind.UNREADABLE, row.path, f"cannot be read: {state.detail}")
    # HASHED, or SIZE_ONLY: a size no claimant records, so it was never read.
    source = next(
        (o.dist.name for o in others if o.dist is not claim.dist and o.row.algorithm and matches(o.row, state)), None
    )
    if row.size is not None and state.size != row.size:
        what, code = "size differs", Code.SIZE_MISMATCH
        expected, found = f"{row.size} bytes ({whose})", f"{state.size} bytes"
    else:
        what, code = "content differs", Code.HASH_MISMATCH
        found = digest_text(row.algorithm or "", state.digest(row.algorithm or ""))
    record = _record_name(managed)
    if source is not None:
        message = f"holds {source}'s bytes ({what} from {record})"
    elif strong is not None and matches(strong, state):
        message = f"holds the bytes its RECORD lists, not the ones {whose} installed ({what} from {record})"
    elif strong is not None:
        message = f"altered; {what} from {record} and from RECORD"
    else:
        message = f"altered; {what} from {record}"
    return Finding(code, Kind.MODIFIED, row.path, message, expected, found, source, state.links)


def _rpm_findings(managed: ManagedBy) -> list[Finding]:
    findings = []
    whose = _whose(managed)
    for verdict in managed.verdicts or ():
        if not altered(verdict):
            continue  # mode, owner or mtime only: the bytes are the packaged ones
        if verdict.missing:
            findings.append(Finding(Code.MISSING, Kind.MISSING, verdict.path, f"is missing; {whose} installed it"))
        else:
            code = Code.HASH_MISMATCH if "5" in verdict.flags else Code.SIZE_MISMATCH
            message = f"altered; rpm -V {managed.package} reports {verdict.flags}"
            findings.append(Finding(code, Kind.MODIFIED, verdict.path, message, None, verdict.flags))
    return findings

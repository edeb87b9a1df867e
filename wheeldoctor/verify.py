"""Distributions -> findings: every recorded file checked against the bytes on disk.

All distributions of an environment are planned together: each real file is stat'ed
and hashed once, however many distributions claim it, and with every algorithm and at
every size that any claimant recorded. That one pass is what lets a modified file be
attributed to the distribution whose bytes it holds.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from wheeldoctor.environment import InstalledDistribution, is_within
from wheeldoctor.findings import BREAKING_KINDS, Code, Finding, Kind
from wheeldoctor.hashing import FileState, FileStatus, HashRequest, Progress, hash_files
from wheeldoctor.record import RecordRow


class Status(str, Enum):
    """A distribution's verdict; the JSON ``status`` field."""

    INTACT = "intact"
    BROKEN = "broken"
    UNVERIFIABLE = "unverifiable"
    NOT_INSTALLED = "not-installed"


class ProgressSink(Protocol):
    """Receives the size of the work once, then advances from worker threads."""

    def begin(self, files: int, total_bytes: int) -> None:
        """The work ahead: this many files, about this many bytes."""

    def advance(self, files: int, done_bytes: int) -> None:
        """Some files are done."""


@dataclass(frozen=True, slots=True)
class Claim:
    """One RECORD row of one distribution, resolved to an absolute path."""

    dist: InstalledDistribution
    row: RecordRow
    path: str


@dataclass(frozen=True, slots=True)
class DistributionReport:
    """The verdict on one distribution, with every finding behind it."""

    name: str
    version: str | None
    location: str | None
    installer: str | None
    status: Status
    findings: tuple[Finding, ...]
    dist: InstalledDistribution | None = None


def status_of(findings: Iterable[Finding]) -> Status:
    """Broken if any finding breaks trust in the bytes; unverifiable if some could not be checked."""
    kinds = {f.kind for f in findings}
    if kinds & BREAKING_KINDS:
        return Status.BROKEN
    if kinds:
        return Status.UNVERIFIABLE
    return Status.INTACT


def resolve(dist: InstalledDistribution) -> tuple[list[Claim], list[Finding]]:
    """Resolve a distribution's RECORD rows; rows that climb out of its root are findings."""
    claims: list[Claim] = []
    outside: list[Finding] = []
    if dist.record is None:
        return claims, outside
    prefix = dist.location.rstrip(os.sep) + os.sep
    root = dist.root
    normpath, isabs = os.path.normpath, os.path.isabs
    for row in dist.record.rows:
        # Concatenation instead of os.path.join: this loop runs once per recorded file.
        path = normpath(row.path if isabs(row.path) else prefix + row.path)
        if is_within(path, root):
            claims.append(Claim(dist, row, path))
        else:
            outside.append(
                Finding(Code.OUTSIDE, Kind.OUTSIDE, row.path, f"resolves to {path}, outside {root}; not read")
            )
    return claims, outside


def plan(claims: Iterable[Claim]) -> dict[str, HashRequest]:
    """One hash request per real path, covering every claimant's algorithm and size."""
    by_path: dict[str, list[RecordRow]] = {}
    for claim in claims:
        by_path.setdefault(claim.path, []).append(claim.row)
    requests: dict[str, HashRequest] = {}
    for path, rows in by_path.items():
        algorithms = frozenset(row.algorithm for row in rows if row.algorithm)
        sizes = (
            None
            if any(row.size is None for row in rows)
            else frozenset(row.size for row in rows if row.size is not None)
        )
        requests[path] = HashRequest(path, algorithms, sizes)
    return requests


def hash_claims(
    claims: Sequence[Claim], jobs: int | None = None, progress: ProgressSink | None = None
) -> dict[str, FileState]:
    """Look at every claimed file once; return its state by absolute path."""
    requests = list(plan(claims).values())
    advance: Progress | None = None
    if progress is not None:
        progress.begin(len(requests), sum(r.size_hint for r in requests))
        advance = progress.advance
    states = hash_files(requests, jobs=jobs, progress=advance)
    return {request.path: state for request, state in zip(requests, states, strict=True)}


def judge(claim: Claim, state: FileState, others: Sequence[Claim] = ()) -> Finding | None:
    """Compare one recorded row with what is on disk; ``others`` are rival claimants."""
    row = claim.row
    expected_hash = row.hash_text
    expected_size = f"{row.size} bytes" if row.size is not None else None
    if state.status is FileStatus.MISSING:
        return Finding(Code.MISSING, Kind.MISSING, row.path, "is missing", expected_hash, None)
    if state.status is FileStatus.NOT_REGULAR:
        return Finding(Code.NOT_REGULAR, Kind.UNREADABLE, row.path, f"{state.detail}, not a regular file; not read")
    if state.status is FileStatus.UNREADABLE:
        return Finding(Code.UNREADABLE, Kind.UNREADABLE, row.path, f"cannot be read: {state.detail}")
    if state.status is FileStatus.CHANGED:
        return Finding(
            Code.CHANGED_WHILE_READ, Kind.UNREADABLE, row.path, f"{state.detail}; check again once it is quiet"
        )
    source = _content_from(claim, state, others)
    if row.size is not None and state.size != row.size:
        return Finding(
            Code.SIZE_MISMATCH,
            Kind.MODIFIED,
            row.path,
            _modified_message("size differs", source),
            expected_size,
            f"{state.size} bytes",
            source,
            state.links,
        )
    assert row.algorithm is not None and row.digest is not None  # rows without a hash never reach here
    digest = state.digest(row.algorithm)
    if digest != row.digest:
        found = f"{row.algorithm}={_encode(digest)}" if digest is not None else None
        return Finding(
            Code.HASH_MISMATCH,
            Kind.MODIFIED,
            row.path,
            _modified_message("content differs", source),
            expected_hash,
            found,
            source,
            state.links,
        )
    return None


def _encode(digest: bytes) -> str:
    from wheeldoctor.record import encode_digest

    return encode_digest(digest)


def _content_from(claim: Claim, state: FileState, others: Sequence[Claim]) -> str | None:
    """The rival claimant whose recorded bytes are the ones on disk, if any."""
    if state.status is not FileStatus.HASHED:
        return None
    for other in others:
        row = other.row
        if other.dist is claim.dist or row.algorithm is None or (row.size is not None and row.size != state.size):
            continue
        if state.digest(row.algorithm) == row.digest:
            return other.dist.name
    return None


def _modified_message(what: str, source: str | None) -> str:
    if source is not None:
        return f"holds {source}'s bytes ({what} from RECORD)"
    return f"altered; no installed distribution ships these bytes ({what} from RECORD)"


@dataclass(frozen=True, slots=True)
class Verification:
    """Everything one verification pass learnt, for the checks built on top of it."""

    reports: tuple[DistributionReport, ...]
    owners: Mapping[str, tuple[Claim, ...]]
    """Every real path that any distribution records, with all its claimants."""
    states: Mapping[str, FileState]
    """What was found on disk, for every path a checked distribution records."""


def verify_environment(
    checked: Sequence[InstalledDistribution],
    everyone: Sequence[InstalledDistribution] = (),
    *,
    jobs: int | None = None,
    progress: ProgressSink | None = None,
) -> Verification:
    """Verify ``checked``; ``everyone`` (the whole environment) is used for attribution."""
    resolved = {id(d): resolve(d) for d in _unique_dists([*checked, *everyone])}
    grouped: dict[str, list[Claim]] = {}
    for claims, _ in resolved.values():
        for claim in claims:
            grouped.setdefault(claim.path, []).append(claim)
    owners = {path: tuple(claims) for path, claims in grouped.items()}
    wanted = dict.fromkeys(claim.path for d in checked for claim in resolved[id(d)][0])
    # Rival claims travel with the checked ones so their sizes and algorithms are planned.
    states = hash_claims([c for path in wanted for c in owners[path]], jobs=jobs, progress=progress)
    reports = []
    for dist in checked:
        claims, outside = resolved[id(dist)]
        findings: list[Finding] = [*dist.problems, *(dist.record.problems if dist.record else ()), *outside]
        for claim in claims:
            finding = judge(claim, states[claim.path], owners[claim.path])
            if finding is not None:
                findings.append(finding)
        reports.append(report_for(dist, findings))
    return Verification(tuple(reports), owners, states)


def verify(
    checked: Sequence[InstalledDistribution],
    everyone: Sequence[InstalledDistribution] = (),
    *,
    jobs: int | None = None,
    progress: ProgressSink | None = None,
) -> list[DistributionReport]:
    """Verify ``checked`` and return one report each (see :func:`verify_environment`)."""
    return list(verify_environment(checked, everyone, jobs=jobs, progress=progress).reports)


def report_for(dist: InstalledDistribution, findings: Sequence[Finding]) -> DistributionReport:
    """Wrap a distribution's findings with its verdict."""
    return DistributionReport(
        dist.name, dist.version, dist.location, dist.installer, status_of(findings), tuple(findings), dist
    )


def not_installed(name: str) -> DistributionReport:
    """The report for a distribution that was asked for but is not installed."""
    return DistributionReport(name, None, None, None, Status.NOT_INSTALLED, ())


def _unique_dists(dists: Iterable[InstalledDistribution]) -> list[InstalledDistribution]:
    return list({id(d): d for d in dists}.values())



"""A recorded file's claim and its state on disk -> a finding; findings -> a distribution's verdict.

Each real file is stat'ed and hashed once however many distributions claim it
(:mod:`wheeldoctor.engine.verify`); that is what lets a modified file be attributed here
to the distribution whose bytes it holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from wheeldoctor.judge.claims import Claim, matches, recorded_bytes
from wheeldoctor.model.code_paths import runs_as_code
from wheeldoctor.model.environment import InstalledDistribution
from wheeldoctor.model.files import FileState, FileStatus
from wheeldoctor.model.findings import AS_INSTALLED_KINDS, BREAKING_KINDS, LOCK_MEMBERSHIP_CODES, Code, Finding, Kind
from wheeldoctor.model.record import bytes_match
from wheeldoctor.model.record_fields import encode_digest


class Status(str, Enum):
    """A distribution's verdict; the JSON ``status`` field."""

    INTACT = "intact"
    BROKEN = "broken"
    UNVERIFIABLE = "unverifiable"
    NOT_INSTALLED = "not-installed"
    #: Every difference is an overlay's bytes (WD060 ``replaced``); fails only with ``--strict``.
    OVERLAID = "overlaid"
    #: Every finding was accepted by a rule or a baseline.
    ACCEPTED = "accepted"


#: Statuses that fail every run; ``--strict`` adds unverifiable and overlaid ones.
FAILING_STATUSES = frozenset({Status.BROKEN, Status.NOT_INSTALLED})


@dataclass(frozen=True, slots=True, kw_only=True)
class DistributionReport:
    """The verdict on one distribution, with every finding behind it."""

    name: str
    version: str | None
    location: str | None
    installer: str | None
    status: Status
    findings: tuple[Finding, ...]
    dist: InstalledDistribution | None = None
    verified_by: tuple[tuple[str, int], ...] = ()
    """For a distribution judged by its package manager's record: files verified per digest
    (``sha256`` where RECORD and the manager agree, else the manager's own, e.g. ``md5``)."""


def status_of(findings: Iterable[Finding]) -> Status:
    """Broken if any finding breaks trust in the bytes; unverifiable if some could not be checked.

    Accepted findings do not count, except that a distribution with nothing but accepted
    findings is ``accepted``, not ``intact``; one whose only other findings are an
    overlay's bytes (``replaced``) is ``overlaid``.
    """
    # A .pyc the installer recompiled, a shebang it flagged: as the installer made them, not a problem.
    seen = [f for f in findings if f.kind not in AS_INSTALLED_KINDS]
    kinds = {f.kind for f in seen if f.accepted is None}
    if kinds & BREAKING_KINDS:
        return Status.BROKEN
    if Kind.REPLACED in kinds:
        return Status.OVERLAID
    if kinds:
        return Status.UNVERIFIABLE
    return Status.ACCEPTED if seen else Status.INTACT


def off_the_lock(report: DistributionReport) -> bool:
    """Whether a broken distribution fails only for not being the lock's (WD081, WD083): its files passed.

    It is still a failing status; the words say "not as locked", never "broken"."""
    breaking = [f for f in report.findings if f.kind in BREAKING_KINDS and f.accepted is None]
    return report.status is Status.BROKEN and bool(breaking) and all(f.code in LOCK_MEMBERSHIP_CODES for f in breaking)


def judge(claim: Claim, state: FileState, others: Sequence[Claim] = ()) -> Finding | None:
    """Compare one recorded row with what is on disk; ``others`` are rival claimants."""
    row = claim.row
    if state.status is FileStatus.MISSING:
        return Finding(
            code=Code.MISSING,
            kind=Kind.MISSING,
            path=row.path,
            message="is missing",
            expected=row.hash_text,
            found=None,
        )
    if state.status is FileStatus.NOT_REGULAR:
        return Finding(
            code=Code.NOT_REGULAR,
            kind=Kind.UNREADABLE,
            path=row.path,
            message=f"{state.detail}, not a regular file; not read",
        )
    if state.status is FileStatus.UNREADABLE:
        return Finding(
            code=Code.UNREADABLE, kind=Kind.UNREADABLE, path=row.path, message=f"cannot be read: {state.detail}"
        )
    if state.status is FileStatus.CHANGED:
        return Finding(
            code=Code.CHANGED_WHILE_READ,
            kind=Kind.UNREADABLE,
            path=row.path,
            message=f"{state.detail}; check again once it is quiet",
        )
    if recorded_bytes(row, state):
        return None  # the common case, decided before looking for whose bytes these are
    source = _content_from(claim, state, others)
    if row.size is not None and state.size != row.size:
        return _size_finding(claim, state, source)
    assert row.algorithm is not None and row.digest is not None  # rows without a hash never reach here
    digest = state.digest(row.algorithm)
    if not bytes_match(row.digest, row.size, state.size, digest):
        found = f"{row.algorithm}={encode_digest(digest)}" if digest is not None else None
        return Finding(
            code=Code.HASH_MISMATCH,
            kind=Kind.MODIFIED,
            path=row.path,
            message=_modified_message("content differs", source, own=claim.dist.name),
            expected=row.hash_text,
            found=found,
            content_from=source.name if source is not None else None,
            links=state.links,
        )
    return None


def _size_finding(claim: Claim, state: FileState, source: InstalledDistribution | None) -> Finding:
    """WD002, with the file's own digest as ``found`` when it was read (so it can be pinned).

    A file longer than recorded whose first ``size`` bytes are RECORD's is RECORD's bytes
    with more appended (a CA bundle with a corporate root, say): ``appended_bytes`` says
    how many.
    """
    row = claim.row
    sizes = f"{row.size} bytes recorded, {state.size} on disk"
    digest = state.digest(row.algorithm) if row.algorithm is not None else None
    appended = None
    if row.algorithm is not None and row.size is not None and state.size is not None and row.size < state.size:
        head = state.prefix_digest(row.size, row.algorithm)
        if head is not None and bytes_match(row.digest, row.size, row.size, head):  # the first bytes are the row's
            appended = state.size - row.size
    if appended is not None and runs_as_code(row.path):
        message = f"RECORD's {row.size} bytes, with {appended} byte(s) of code appended (it runs)"
    elif appended is not None:
        message = f"RECORD's {row.size} bytes are intact, with {appended} byte(s) appended"
    else:
        message = _modified_message("size differs", source, f": {sizes}", claim.dist.name)
    expected: str | None
    if digest is None:  # not read: the sizes are the evidence
        expected, found = f"{row.size} bytes", f"{state.size} bytes"
    else:
        expected, found = row.hash_text, f"{row.algorithm}={encode_digest(digest)}"
    return Finding(
        code=Code.SIZE_MISMATCH,
        kind=Kind.MODIFIED,
        path=row.path,
        message=message,
        expected=expected,
        found=found,
        content_from=source.name if source is not None else None,
        links=state.links,
        appended_bytes=appended,
    )


def _content_from(claim: Claim, state: FileState, others: Sequence[Claim]) -> InstalledDistribution | None:
    """The rival claimant whose recorded bytes are the ones on disk, if any."""
    if state.status is not FileStatus.HASHED:
        return None
    for other in others:
        if other.dist is not claim.dist and matches(other.row, state):
            return other.dist
    return None


def _modified_message(what: str, source: InstalledDistribution | None, detail: str = "", own: str = "") -> str:
    if source is not None:
        # Another dist-info of the same project (a stale one beside it) is named with its version.
        whose = f"{source.name} {source.version}" if source.name == own else source.name
        return f"holds {whose}'s bytes ({what} from RECORD{detail})"
    return f"altered; no installed distribution ships these bytes ({what} from RECORD{detail})"


def report_for(
    dist: InstalledDistribution, findings: Sequence[Finding], verified_by: tuple[tuple[str, int], ...] = ()
) -> DistributionReport:
    """Wrap a distribution's findings with its verdict."""
    return DistributionReport(
        name=dist.name,
        version=dist.version,
        location=dist.location,
        installer=dist.installer,
        status=status_of(findings),
        findings=tuple(findings),
        dist=dist,
        verified_by=verified_by,
    )


def not_installed(name: str) -> DistributionReport:
    """The report for a distribution that was asked for but is not installed."""
    return DistributionReport(
        name=name, version=None, location=None, installer=None, status=Status.NOT_INSTALLED, findings=()
    )

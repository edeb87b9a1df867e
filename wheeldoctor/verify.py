"""Distributions -> findings: every recorded file checked against the bytes on disk.

All distributions of an environment are planned together: each real file is stat'ed
and hashed once, however many distributions claim it, and with every algorithm and at
every size that any claimant recorded. That one pass is what lets a modified file be
attributed to the distribution whose bytes it holds.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, NamedTuple, Protocol

from wheeldoctor import cache, hashing
from wheeldoctor.environment import InstalledDistribution
from wheeldoctor.findings import BREAKING_KINDS, Code, Finding, Kind
from wheeldoctor.hashing import (
    FileState,
    FileStatus,
    Fingerprint,
    HashRequest,
    Known,
    Progress,
    can_fork,
    default_jobs,
    hash_files,
)
from wheeldoctor.record import RecordRow
from wheeldoctor.record_fields import encode_digest
from wheeldoctor.sitedirs import is_plain, is_within, plain_prefix

if TYPE_CHECKING:
    from wheeldoctor.proof_processes import Candidate


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


class Claim(NamedTuple):
    """One RECORD row of one distribution, resolved to an absolute path.

    A named tuple, like :class:`RecordRow`: one is made per recorded file.
    """

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
    # A plain path below a normal location inside the root is normal and inside: no normpath.
    plain = plain_prefix(dist.location, root)
    make = tuple.__new__  # skips the named tuple's Python-level __new__, as in record.py
    for row in dist.record.rows:
        text = row.path
        if plain is not None and is_plain(text):
            claims.append(make(Claim, (dist, row, plain + text)))
            continue
        # Concatenation instead of os.path.join: this loop runs once per recorded file.
        path = normpath(text if isabs(text) else prefix + text)
        if not is_within(path, root) and root == dist.location and not isabs(text):
            # `pip install --target DIR` installs through a staging --home whose purelib is
            # HOME/lib/python, so its RECORD says ../../bin/x for what lands in DIR/bin/x.
            staged = normpath(prefix + "lib/python/" + text)
            if is_within(staged, root):
                path = staged
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
    # Shared sets: this loop runs once per recorded file, nearly always with one claimant.
    algorithm_sets: dict[str | None, frozenset[str]] = {}
    for path, rows in by_path.items():
        if len(rows) == 1:
            row = rows[0]
            algorithms = algorithm_sets.get(row.algorithm)
            if algorithms is None:
                algorithms = algorithm_sets[row.algorithm] = frozenset((row.algorithm,) if row.algorithm else ())
            sizes = None if row.size is None else frozenset((row.size,))
        else:
            algorithms = frozenset(row.algorithm for row in rows if row.algorithm)
            sizes = (
                None
                if any(row.size is None for row in rows)
                else frozenset(row.size for row in rows if row.size is not None)
            )
        requests[path] = HashRequest(path, algorithms, sizes)
    return requests


def hash_claims(
    owners: Mapping[str, Sequence[Claim]],
    jobs: int | None = None,
    progress: ProgressSink | None = None,
    known: Known | None = None,
    processes: bool = False,
) -> dict[str, FileState]:
    """Look at every path of ``owners`` (each with all its claimants) once; return its state by path."""
    candidates: list[Candidate] = []
    claims: list[Claim] = []
    if processes and (jobs or default_jobs()) > 1:
        candidates, claims = _provable(owners, known)
    else:
        claims = [claim for claimants in owners.values() for claim in claimants]
    requests = list(plan(claims).values())
    advance: Progress | None = None
    if progress is not None:
        progress.begin(
            len(candidates) + len(requests),
            sum(c[1] for c in candidates) + sum(r.size_hint for r in requests),
        )
        advance = progress.advance
    states: dict[str, FileState] = {}
    if candidates:
        states = _prove(candidates, jobs, advance)
        if len(states) < len(candidates):
            unproven = [claim for path, *_ in candidates if path not in states for claim in owners[path]]
            requests.extend(plan(unproven).values())
    hashed = hash_files(requests, jobs=jobs, progress=advance, known=known, processes=processes)
    states.update((request.path, state) for request, state in zip(requests, hashed, strict=True))
    return states


def _provable(owners: Mapping[str, Sequence[Claim]], known: Known | None = None) -> tuple[list[Candidate], list[Claim]]:
    """Split off the paths worth proving in workers (one claimant, with a hash and a size); the rest's claims.

    Where ``known`` holds RECORD's digest at some fingerprint, the candidate carries that
    fingerprint: a file that still has it needs no reading. Where it holds another digest,
    the path is left to the exact path, which decides from it as it would without workers.
    """
    provable: list[Candidate] = []
    rest: list[Claim] = []
    hashed = FileStatus.HASHED
    for claims in owners.values():
        if len(claims) == 1:
            path, row = claims[0].path, claims[0].row
            if row.digest is not None and row.size is not None and row.algorithm:
                prior = known(path) if known is not None else None
                if prior is None:
                    provable.append((path, row.size, row.algorithm, row.digest, None))
                    continue
                fingerprint = prior.fingerprint
                if (
                    fingerprint is not None
                    and prior.status is hashed
                    and prior.size == row.size
                    and prior.digest(row.algorithm) == row.digest
                ):
                    provable.append((path, row.size, row.algorithm, row.digest, fingerprint))
                    continue
        rest.extend(claims)
    if len(provable) < hashing.PROCESS_MIN_FILES or not can_fork():
        return [], [claim for claims in owners.values() for claim in claims]
    return provable, rest


def _prove(candidates: Sequence[Candidate], jobs: int | None, progress: Progress | None) -> dict[str, FileState]:
    """The states of the candidates that forked workers proved intact; the rest are left out.

    A proven file's state is exactly what :func:`hash_file` would have returned for it.
    """
    from wheeldoctor.proof_processes import prove_in_processes

    states: dict[str, FileState] = {}
    hashed = FileStatus.HASHED
    # tuple.__new__ skips the named tuples' Python-level __new__: a third of the cost, per file.
    make = tuple.__new__
    for index, mtime, ctime, inode, device, links in prove_in_processes(candidates, jobs or default_jobs(), progress):
        path, size, algorithm, digest, vouched = candidates[index]
        fingerprint = make(Fingerprint, (size, mtime, ctime, inode, device))
        cached = fingerprint == vouched  # proven by the cache's fingerprint, not by reading
        states[path] = make(FileState, (hashed, size, ((algorithm, digest),), "", links, fingerprint, cached))
    return states


def judge(claim: Claim, state: FileState, others: Sequence[Claim] = ()) -> Finding | None:
    """Compare one recorded row with what is on disk; ``others`` are rival claimants."""
    row = claim.row
    if state.status is FileStatus.MISSING:
        return Finding(Code.MISSING, Kind.MISSING, row.path, "is missing", row.hash_text, None)
    if state.status is FileStatus.NOT_REGULAR:
        return Finding(Code.NOT_REGULAR, Kind.UNREADABLE, row.path, f"{state.detail}, not a regular file; not read")
    if state.status is FileStatus.UNREADABLE:
        return Finding(Code.UNREADABLE, Kind.UNREADABLE, row.path, f"cannot be read: {state.detail}")
    if state.status is FileStatus.CHANGED:
        return Finding(
            Code.CHANGED_WHILE_READ, Kind.UNREADABLE, row.path, f"{state.detail}; check again once it is quiet"
        )
    if (row.size is None or state.size == row.size) and state.digest(row.algorithm or "") == row.digest:
        return None  # the common case, decided before looking for whose bytes these are
    source = _content_from(claim, state, others)
    if row.size is not None and state.size != row.size:
        return Finding(
            Code.SIZE_MISMATCH,
            Kind.MODIFIED,
            row.path,
            _modified_message("size differs", source),
            f"{row.size} bytes",
            f"{state.size} bytes",
            source,
            state.links,
        )
    assert row.algorithm is not None and row.digest is not None  # rows without a hash never reach here
    digest = state.digest(row.algorithm)
    if digest != row.digest:
        found = f"{row.algorithm}={encode_digest(digest)}" if digest is not None else None
        return Finding(
            Code.HASH_MISMATCH,
            Kind.MODIFIED,
            row.path,
            _modified_message("content differs", source),
            row.hash_text,
            found,
            source,
            state.links,
        )
    return None


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
    cache_dir: str | None = None,
    processes: bool = False,
) -> Verification:
    """Verify ``checked``; ``everyone`` (the whole environment) is used for attribution.

    With ``cache_dir``, files whose fingerprint the cache holds are not read again, and
    what was learnt is written back (see :mod:`wheeldoctor.cache`). ``processes`` is for
    commands only (see :func:`wheeldoctor.hashing.hash_files`).
    """
    started = time.time_ns()
    entries: dict[int, cache.Entry] = {}
    known: Known | None = None
    if cache_dir is not None:
        entries = _recall(cache_dir, checked)
        if entries:
            known = _cached_states(entries.values()).get
    resolved = {id(d): resolve(d) for d in _unique_dists([*checked, *everyone])}
    owners: dict[str, tuple[Claim, ...]] = {}
    for claims, _ in resolved.values():
        for claim in claims:
            prior = owners.get(claim.path)
            owners[claim.path] = (claim,) if prior is None else (*prior, claim)
    # Rival claims travel with the checked ones so their sizes and algorithms are planned.
    if len({id(d) for d in checked}) == len(resolved):  # every distribution is checked
        wanted = owners
    else:
        wanted = {claim.path: owners[claim.path] for d in checked for claim in resolved[id(d)][0]}
    states = hash_claims(wanted, jobs=jobs, progress=progress, known=known, processes=processes)
    reports = []
    hashed = FileStatus.HASHED
    for dist in checked:
        claims, outside = resolved[id(dist)]
        findings: list[Finding] = [*dist.problems, *(dist.record.problems if dist.record else ()), *outside]
        for claim in claims:
            state, row = states[claim.path], claim.row
            # judge's common case, decided without the call: this loop runs once per recorded file.
            if state.status is hashed and state.size == row.size and state.digest(row.algorithm or "") == row.digest:
                continue
            finding = judge(claim, state, owners[claim.path])
            if finding is not None:
                findings.append(finding)
        reports.append(report_for(dist, findings))
    if cache_dir is not None:
        for dist, report in zip(checked, reports, strict=True):
            _remember(cache_dir, dist, report, resolved[id(dist)][0], states, entries.get(id(dist)), started)
    return Verification(tuple(reports), owners, states)


def _recall(cache_dir: str, dists: Sequence[InstalledDistribution]) -> dict[int, cache.Entry]:
    """The cache entries of ``dists`` that were made from their current RECORD."""
    if not cache.usable(cache_dir):
        return {}
    entries = {}
    for dist in dists:
        if dist.record_identity is not None:
            entry = cache.load(cache_dir, dist.path, dist.record_identity)
            if entry is not None:
                entries[id(dist)] = entry
    return entries


def _cached_states(entries: Iterable[cache.Entry]) -> dict[str, FileState]:
    """What the cache knows, as file states; used only while each fingerprint still holds."""
    states: dict[str, FileState] = {}
    hashed = FileStatus.HASHED
    make = tuple.__new__  # skips the named tuples' Python-level __new__: this runs once per cached file
    for entry in entries:
        if not all(map(cache.is_file_record, entry.files)):
            continue  # a malformed entry: none of it is used
        for path, identity, digests in entry.files:
            if path not in states:
                states[path] = make(FileState, (hashed, identity[0], digests, "", 1, make(Fingerprint, identity), True))
    return states


def _remember(
    cache_dir: str,
    dist: InstalledDistribution,
    report: DistributionReport,
    claims: Sequence[Claim],
    states: Mapping[str, FileState],
    before: cache.Entry | None,
    started: int,
) -> None:
    """Write back the files of ``dist`` that matched RECORD, and the verdict if all did."""
    if dist.record_identity is None:
        return
    files = []
    for claim in claims:
        state = states[claim.path]
        fingerprint = state.fingerprint
        if fingerprint is None or not matches(claim.row, state):
            continue
        identity = (fingerprint.size, fingerprint.mtime_ns, fingerprint.ctime_ns, fingerprint.inode, fingerprint.device)
        # A file changed in the tick its hashing started could change again unseen.
        if state.cached or cache.settled(identity, started):
            files.append((claim.path, identity, state.digests))
    intact = report.status is Status.INTACT and len(files) == len(claims)
    entry = cache.Entry(dist.path, dist.record_identity, dist.root if intact else None, tuple(files))
    if entry != before and (files or before is not None):
        cache.store(cache_dir, entry)


def matches(row: RecordRow, state: FileState) -> bool:
    """Whether the bytes seen on disk are the ones ``row`` records."""
    return (
        state.status is FileStatus.HASHED
        and row.algorithm is not None
        and (row.size is None or row.size == state.size)
        and state.digest(row.algorithm) == row.digest
    )


def verify(
    checked: Sequence[InstalledDistribution],
    everyone: Sequence[InstalledDistribution] = (),
    *,
    jobs: int | None = None,
    progress: ProgressSink | None = None,
    cache_dir: str | None = None,
) -> list[DistributionReport]:
    """Verify ``checked`` and return one report each (see :func:`verify_environment`)."""
    return list(verify_environment(checked, everyone, jobs=jobs, progress=progress, cache_dir=cache_dir).reports)


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

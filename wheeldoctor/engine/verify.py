"""One verification pass: RECORDs read, file states obtained (cache, threads or forked workers), then judged.

The states come from the cache, a thread pool or the spread over forked workers
(:mod:`.spread`); every file is judged by :mod:`wheeldoctor.judge.files`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from typing import TYPE_CHECKING, cast

from wheeldoctor.engine import cache, cached, hashing
from wheeldoctor.engine.fork import can_fork
from wheeldoctor.engine.hashing import default_jobs
from wheeldoctor.engine.link_memo import link_memo
from wheeldoctor.engine.messages import AT_PARSE
from wheeldoctor.engine.spread import rows_estimate
from wheeldoctor.engine.states import ProgressSink, hash_claims
from wheeldoctor.judge.claims import Claim, ownership, recorded_bytes, resolve
from wheeldoctor.judge.files import DistributionReport, Status, judge, report_for
from wheeldoctor.judge.links import inside, link_findings
from wheeldoctor.judge.managed import judge_managed, judged_by_manager, resolve_managed
from wheeldoctor.model.environment import InstalledDistribution
from wheeldoctor.model.files import FileState, FileStatus, Known
from wheeldoctor.model.findings import Finding
from wheeldoctor.model.record import RecordRow, fast_tuple
from wheeldoctor.where.environment import with_record
from wheeldoctor.where.links import in_uv_cache, real_roots, through_links

if TYPE_CHECKING:
    from wheeldoctor.engine.messages import Row
    from wheeldoctor.engine.spread import Parsed
    from wheeldoctor.model.fingerprint import Identity


@dataclass(frozen=True, slots=True)
class Verification:
    """Everything one verification pass learnt, for the checks built on top of it."""

    reports: tuple[DistributionReport, ...]
    owners: Mapping[str, tuple[Claim, ...]]
    """Every real path that two or more RECORD rows claim (the clashes' raw material), with all its claimants."""
    states: Mapping[str, FileState]
    """What was found on disk, for every path a checked distribution records."""


Recorded = tuple[Sequence[str], Sequence[str], "Identity | None", "dict[str, str] | None"]
"""What the link check is given of a checked distribution (see :func:`_linked_out`)."""
_UNRECORDED: Recorded = ((), (), None, None)


def verify_environment(
    checked: Sequence[InstalledDistribution],
    everyone: Sequence[InstalledDistribution] = (),
    *,
    jobs: int | None = None,
    progress: ProgressSink | None = None,
    cache_dir: str | None = None,
    processes: bool = False,
    meanwhile: Iterator[object] | None = None,
) -> Verification:
    """Verify ``checked``; ``everyone`` (the whole environment) is used for attribution.

    With ``cache_dir``, files whose fingerprint the cache holds are not read again, and
    what was learnt is written back (see :mod:`wheeldoctor.engine.cache`). ``processes`` is for
    commands only (see :func:`wheeldoctor.engine.hashing.hash_files`); where it forks,
    ``meanwhile``'s steps are taken while the parent waits on its workers (else not at all).
    """
    started = time.time_ns()
    everybody = unique([*checked, *everyone])
    workers = jobs or default_jobs()
    estimates = spread_estimates(everybody, processes=processes)
    if estimates is not None:
        recorded: dict[str, Recorded] = {}
        spread_out = _verify_spread(
            checked, everybody, workers, progress, cache_dir, started, estimates, meanwhile, recorded
        )
        return _linked_out(spread_out, everybody, recorded, cache_dir)
    read = {id(d): with_record(d) for d in everybody}  # deferred RECORDs are read here, in turn
    checked = [read[id(d)] for d in checked]
    entries: dict[int, cache.Entry] = {}
    known: Known | None = None
    # A manager-judged verdict is not RECORD's: it must never be cached as RECORD's.
    by_record = [d for d in checked if not judged_by_manager(d)]
    if cache_dir is not None:
        entries = cached.recall(cache_dir, by_record)
        if entries:
            known = cached.cached_states(entries.values()).get
    resolved = {id(d): resolve_managed(d) if judged_by_manager(d) else resolve(d) for d in read.values()}
    owners = ownership(claims for claims, _ in resolved.values())
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
        if judged_by_manager(dist):
            found, verified = judge_managed(dist, claims, states, owners)
            reports.append(report_for(dist, found, tuple(sorted(verified.items()))))
            continue
        findings: list[Finding] = [*dist.problems, *(dist.record.problems if dist.record else ()), *outside]
        for claim in claims:
            state, row = states[claim.path], claim.row
            if state.status is hashed and recorded_bytes(row, state):  # judge's common case
                continue
            finding = judge(claim, state, owners[claim.path])
            if finding is not None:
                findings.append(finding)
        reports.append(report_for(dist, findings))
    shared = {path: claims for path, claims in owners.items() if len(claims) > 1}
    if cache_dir is not None:
        for dist, report in zip(checked, reports, strict=True):
            if judged_by_manager(dist):
                continue
            intact = report.status is Status.INTACT
            claims, outside = resolved[id(dist)]
            # Files kept as judged only where every finding is a file's (see cached.remember).
            apart = None if outside or (dist.record is not None and dist.record.problems) else shared
            cached.remember(cache_dir, dist, intact, claims, states, entries.get(id(dist)), started, apart)
    # The engine's stats follow links: each file's own kind is unknown, so each is lstat-ed.
    looked: dict[str, Recorded] = {}
    for dist in checked:
        paths = [c.path for c in resolved[id(dist)][0]]
        looked[dist.path] = (paths, paths, dist.record_identity, None)
    return _linked_out(Verification(tuple(reports), shared, states), everybody, looked, cache_dir)


def spread_estimates(everybody: Sequence[InstalledDistribution], *, processes: bool) -> list[int] | None:
    """Each one's :func:`rows_estimate` where :func:`verify_environment` spreads over forked workers, else None.

    It spreads for a command (``processes``) where forking is safe now, nothing is judged
    by a package manager's record, and there are enough rows: with one job too, over one
    worker. Only a worker settles a distribution on its cache verdict without parsing its
    RECORD; the thread path reads and parses every RECORD, warm or not.
    """
    if not processes or not can_fork():
        return None
    if any(map(judged_by_manager, everybody)):  # a package manager's record: judged here
        return None
    estimates = list(map(rows_estimate, everybody))
    return estimates if sum(estimates) >= hashing.PROCESS_MIN_FILES else None


def _linked_out(
    verification: Verification,
    everybody: Sequence[InstalledDistribution],
    recorded: Mapping[str, Recorded],
    cache_dir: str | None = None,
) -> Verification:
    """Each report with a WD008 for every recorded path a symbolic link takes outside the environment.

    ``recorded`` gives, by dist-info path, a distribution's recorded paths, those of its
    files no ``lstat`` has yet seen as regular files, its RECORD's fingerprint, and the
    paths a directory link takes elsewhere where a worker looked already (else None); the
    paths below its site directory that pass through a link are found by
    :func:`wheeldoctor.where.links.through_links`. With ``cache_dir``, that no directory
    on the way is a link is kept (:mod:`wheeldoctor.engine.link_memo`), and while it holds
    only the unproven files are looked at. RECORD is read again only for a distribution
    that has one. A system package manager's files are its own to judge.
    """
    judged = [
        (dist, recorded[dist.path][2])
        for report in verification.reports
        if (dist := report.dist) is not None and not dist.system_managed and dist.path in recorded
    ]
    memo = link_memo(cache_dir, judged)
    clear = memo is not None and memo.holds()
    read = None if memo is None or clear else memo.read
    roots: tuple[str, ...] | None = None
    reports = []
    anything = False
    for report in verification.reports:
        dist = report.dist
        paths, unproven, _, linked = recorded.get(dist.path, _UNRECORDED) if dist is not None else _UNRECORDED
        if dist is None or dist.system_managed:
            resolved = {}
        elif linked is not None and memo is None:  # its worker looked at the directories: the files are left
            resolved = {**linked, **through_links(paths, dist.location, unproven, directories=False)}
        else:
            resolved = through_links(paths, dist.location, unproven, directories=not clear, read=read)
        anything = anything or bool(resolved)
        if dist is None or not resolved:
            reports.append(report)
            continue
        if roots is None:
            roots = real_roots(chain.from_iterable((d.location, d.root) for d in everybody))
        outside = {path: target for path, target in resolved.items() if not inside(target, roots)}
        if not outside:
            reports.append(report)
            continue
        claims = resolve(with_record(dist))[0]
        uv = (dist.installer or "").strip().lower() == "uv"
        kept = [target for target in outside.values() if uv and in_uv_cache(target)]
        named = {c.path: c.row.path for c in claims if c.path in outside}
        found = link_findings(outside, named, roots, kept)
        reports.append(report_for(dist, [*report.findings, *found], report.verified_by) if found else report)
    if memo is not None and not clear and not anything:
        memo.keep()  # nothing was found: no directory on the way is a link
    return replace(verification, reports=tuple(reports))


def _verify_spread(
    checked: Sequence[InstalledDistribution],
    everybody: list[InstalledDistribution],
    jobs: int,
    progress: ProgressSink | None,
    cache_dir: str | None,
    started: int,
    estimates: Sequence[int],
    meanwhile: Iterator[object] | None,
    recorded: dict[str, Recorded],
) -> Verification:
    """:func:`verify_environment`, with RECORDs read and files proved in forked workers.

    ``recorded`` is filled for the link check (see :func:`_linked_out`): each checked
    distribution's paths, those its workers did not prove (a proof ``lstat``-s a
    regular file; a held cache verdict proved every file so), its RECORD's fingerprint,
    and the paths a directory link takes elsewhere where its worker looked (else None).

    The parent keeps what needs the whole picture: the paths that several rows claim, and
    whatever the workers could not prove, which it judges exactly as the threads do.
    """
    from wheeldoctor.engine.proven import ProvenStates
    from wheeldoctor.engine.spread import Parsed, repeated, spread

    wanted = {id(d) for d in checked}
    flags = [id(d) in wanted for d in everybody]
    sink = (progress.begin, progress.advance) if progress is not None else (None, None)
    found = spread(everybody, flags, jobs, cache_dir, started, estimates, sink[1], sink[0], meanwhile)

    def read_here(dist: InstalledDistribution) -> Parsed:
        read = with_record(dist)
        claims, outside = resolve(read)
        problems = (*read.problems[len(dist.problems) :], *(read.record.problems if read.record else ()))
        rows = cast("list[Row]", [tuple(c.row) for c in claims])
        return Parsed(read.record_identity, [c.path for c in claims], rows, None, problems, tuple(outside))

    # None: a worker died before it read this RECORD, so it is read here.
    parsed = [read_here(dist) if result is None else result for dist, result in zip(everybody, found, strict=True)]
    here = {i for i, result in enumerate(found) if result is None}  # no worker read their cache entries
    shared = repeated([done.paths for done in parsed])
    for i, done in enumerate(parsed):
        if done.rows is None and not shared.isdisjoint(done.paths):
            # The cache's verdict held, but a shared path is judged with its rivals' rows: read
            # RECORD here; its files are judged on the exact path (which asks the cache first).
            parsed[i] = read_here(everybody[i])
            here.add(i)
    make = fast_tuple
    built: dict[int, list[Claim]] = {}

    def claims_of(i: int) -> list[Claim]:
        claims = built.get(i)
        if claims is None:
            dist, done = everybody[i], parsed[i]
            assert done.rows is not None  # a settled distribution sharing a path was read again
            claims = built[i] = [
                make(Claim, (dist, make(RecordRow, row), path)) for path, row in zip(done.paths, done.rows, strict=True)
            ]
        return claims

    def claim_at(i: int, k: int) -> Claim:
        """Row ``k``'s claim alone: a distribution with one changed file costs that file, not every row."""
        claims = built.get(i)
        if claims is not None:
            return claims[k]
        rows = parsed[i].rows
        assert rows is not None
        return make(Claim, (everybody[i], make(RecordRow, rows[k]), parsed[i].paths[k]))

    owners: dict[str, tuple[Claim, ...]] = {}
    if shared:
        for i, done in enumerate(parsed):
            if not shared.isdisjoint(done.paths):
                for claim in claims_of(i):
                    if claim.path in shared:
                        prior = owners.get(claim.path)
                        owners[claim.path] = (claim,) if prior is None else (*prior, claim)
    exact: dict[str, tuple[Claim, ...]] = {}
    unproven: dict[int, list[int]] = {}
    given: dict[str, FileState] = {}
    states = ProvenStates(given, cache_dir)
    for i, done in enumerate(parsed):
        if not flags[i]:
            continue
        paths, rows = done.paths, done.rows
        if rows is None:  # the cache's verdict held: nothing to judge but the files it kept as judged
            assert done.identity is not None
            states.settle(everybody[i].path, done.identity)
            for kept in done.judged:
                given[kept[0]] = cached.judged_state(kept)
            continue
        states.add(paths, rows, done.proofs)
        if len(done.proofs) < len(rows) or not shared.isdisjoint(paths):
            proven = {proof[0] for proof in done.proofs}
            todo = unproven[i] = [k for k, path in enumerate(paths) if k not in proven or path in shared]
            for k in todo:
                exact[paths[k]] = owners.get(paths[k]) or (claim_at(i, k),)
    if exact:
        known: Known | None = None
        if cache_dir is not None and cache.usable(cache_dir):
            keys = [(everybody[i].path, identity) for i in unproven if (identity := parsed[i].identity) is not None]
            entries = [entry for path, identity in keys if (entry := cache.load(cache_dir, path, identity)) is not None]
            known = cached.cached_states(entries, exact).get if entries else None
        given.update(hash_claims(exact, jobs=jobs, known=known))
    index = {id(d): i for i, d in enumerate(everybody)}
    reports = []
    for dist in checked:
        i = index[id(dist)]
        done = parsed[i]
        left = [done.paths[k] for k in unproven[i]] if i in unproven else []
        recorded[dist.path] = (done.paths, left, done.identity, done.linked)
        findings: list[Finding] = [*dist.problems, *done.problems, *done.outside]
        if i in unproven:
            for k in unproven[i]:
                claim = claim_at(i, k)
                finding = judge(claim, states[claim.path], owners.get(claim.path) or (claim,))
                if finding is not None:
                    findings.append(finding)
        for kept in done.judged:  # judged again from the states kept (none of its paths is shared)
            claim = make(Claim, (dist, make(RecordRow, kept[1]), kept[0]))
            finding = judge(claim, given[kept[0]], (claim,))
            if finding is not None:
                findings.append(finding)
        reports.append(report_for(dist, findings))
    for dist, report in zip(checked, reports, strict=True):
        i, intact = index[id(dist)], report.status is Status.INTACT
        identity = parsed[i].identity
        if cache_dir is None or identity is None:
            continue
        # Files kept as judged only where every finding is a file's (see cached.remember).
        apart = None if parsed[i].problems or parsed[i].outside else shared
        if i in here:  # read here, not by a worker: the general rule, with the claims
            before = cache.load(cache_dir, dist.path, identity)
            keyed = replace(dist, record_identity=identity)
            cached.remember(cache_dir, keyed, intact, claims_of(i), states, before, started, apart)
        elif (rows := parsed[i].rows) is not None:  # the workers made the records of the files they proved
            pieces = parsed[i].files
            files = list(chain.from_iterable(pieces[first] for first in sorted(pieces)))
            odd: list[tuple[int, Claim]] = []  # the files that did not match, with their rows' places
            if i in unproven:  # and those judged here: their own records (a shared path proved has one)
                proofs = {proof[0] for proof in parsed[i].proofs}
                for k in unproven[i]:
                    if k in proofs:
                        continue
                    claim = claim_at(i, k)
                    if record := cached.file_record(claim, states, started):
                        files.append(record)
                    else:
                        odd.append((k, claim))
            if i in unproven or (AT_PARSE in pieces and len(pieces) > 1):
                # Each piece's records are in row order, but not one after another: put them in
                # RECORD's order, as every other writer does, or each would rewrite the other's entry.
                row = {path: k for k, path in enumerate(parsed[i].paths)}
                files.sort(key=lambda record: row[record[0]])
            cached.remember_proven(
                cache_dir,
                dist,
                identity,
                intact,
                tuple(files),
                len(rows),
                parsed[i].found,
                parsed[i].before,
                cached.judged_files(odd, states, started, apart),
            )
        # Else the cache's verdict held (see spread_worker._settled): its entry stands as it is.
    return Verification(tuple(reports), owners, states)


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


def unique(dists: Iterable[InstalledDistribution]) -> list[InstalledDistribution]:
    """``dists`` without repeats (the same object twice), in order."""
    return list({id(d): d for d in dists}.values())

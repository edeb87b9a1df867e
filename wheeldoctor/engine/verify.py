"""One verification, one pipeline for every caller: plan, obtain, then judge and remember.

1. *Plan*: each distribution to look at (a package manager's record is claimed here), in
   batches, the heaviest first (:mod:`.schedule`).
2. *Obtain*: an executor (:mod:`.executors`) runs the tasks (:mod:`.tasks`): forked
   workers for a command on Linux with enough files (one job: one worker), threads
   otherwise; what a worker leaves undone, this process does with threads.
3. *Judge and remember*: here, once. The paths several rows claim, and every file no task
   proved, are looked at again on the exact path, with every claimant's algorithms and
   sizes; each row is judged (:mod:`wheeldoctor.judge.files`); what was learnt is written
   back to the cache (:mod:`.remember`); a recorded path a symbolic link takes out of the
   environment is found last.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from typing import Any, NamedTuple

from wheeldoctor.engine import cache
from wheeldoctor.engine.executors import Threads, Workers, default_jobs, examine_all
from wheeldoctor.engine.fork import can_fork
from wheeldoctor.engine.remember import file_record, judged_files, remember
from wheeldoctor.engine.schedule import Learnt, ProgressSink, Schedule, look_batches
from wheeldoctor.engine.states import FileStates, cached_states, kept_state
from wheeldoctor.engine.store import Memo
from wheeldoctor.engine.tasks import Context, entry_seen, rows_estimate
from wheeldoctor.engine.wire import Result, Task
from wheeldoctor.judge.claims import Claim, plan, resolve
from wheeldoctor.judge.files import DistributionReport, Status, judge, report_for
from wheeldoctor.judge.links import inside, link_findings
from wheeldoctor.judge.managed import judge_managed, judged_by_manager, resolve_managed
from wheeldoctor.model.environment import Environment, InstalledDistribution
from wheeldoctor.model.files import FileState, Known
from wheeldoctor.model.findings import Finding
from wheeldoctor.model.fingerprint import Identity
from wheeldoctor.model.record import RecordRow, fast_tuple
from wheeldoctor.where.environment import with_record
from wheeldoctor.where.fingerprint import Read
from wheeldoctor.where.links import in_uv_cache, real_roots, through_links

#: A command forks workers for this many recorded files or more; fewer are verified by threads.
PROCESS_MIN_FILES = 2000


@dataclass(frozen=True, slots=True, kw_only=True)
class Verification:
    """Everything one verification pass learnt, for the checks built on top of it."""

    reports: tuple[DistributionReport, ...]
    owners: Mapping[str, tuple[Claim, ...]]
    """Every real path that two or more RECORD rows claim (the clashes' raw material), with all its claimants."""
    states: Mapping[str, FileState]
    """What was found on disk, for every path a checked distribution records."""
    audit: list[Any] | None = None
    """The start-up hooks' owners and the unowned files, where asked (:func:`wheeldoctor.engine.audit.audit_data`)."""


class Recorded(NamedTuple):
    """What the link check is given of a checked distribution."""

    paths: Sequence[str]
    unproven: Sequence[str]
    """Its files no ``lstat`` saw as regular files (a proof does; a held verdict did, for every file)."""
    record: Identity | None
    linked: dict[str, str] | None
    """The paths a directory link takes elsewhere, where a task looked already."""


def verify_environment(
    checked: Sequence[InstalledDistribution],
    everyone: Sequence[InstalledDistribution] = (),
    *,
    jobs: int | None = None,
    progress: ProgressSink | None = None,
    cache_dir: str | None = None,
    processes: bool = False,
    audit: Environment | None = None,
) -> Verification:
    """Verify ``checked``; ``everyone`` (the whole environment) is used for attribution.

    With ``cache_dir``, files whose fingerprint the cache holds are not read again, and
    what was learnt is written back (see :mod:`wheeldoctor.engine.cache`). ``processes``
    lets a command fork workers (never a library caller inside someone else's process).
    ``audit``: also find who owns ``audit``'s start-up hooks and which of its files nobody
    recorded, beside the verification (see :attr:`Verification.audit`).
    """
    everybody = unique([*checked, *everyone])
    wanted = {id(d) for d in checked}
    context = Context(
        dists=everybody,
        checked=[id(d) in wanted for d in everybody],
        cache_dir=cache_dir,
        usable=cache_dir is not None and cache.usable(cache_dir),
        started=time.time_ns(),
        links=cache_dir is None,
        env=audit,
    )
    jobs = jobs or default_jobs()
    read = {i: with_record(d) for i, d in enumerate(everybody) if judged_by_manager(d)}
    planned = {i: _claimed(d) for i, d in read.items()}
    estimates = [len(planned[i].paths) if i in planned else rows_estimate(d) for i, d in enumerate(everybody)]
    looks = look_batches(estimates, [i for i in range(len(everybody)) if i not in planned], jobs)
    schedule = Schedule(context.checked, looks, planned, audit=audit is not None, progress=progress)
    if processes and can_fork() and sum(estimates) >= PROCESS_MIN_FILES:
        Workers(jobs).run(schedule, context.run)
    if schedule.adopt():  # not forked, or what no worker did
        Threads[Task, Result](jobs).run(schedule, context.run)
    learnt = [found for found in schedule.learnt if found is not None]
    assert len(learnt) == len(everybody)
    judged = _Judgement(context, learnt, read, jobs)
    reports, recorded = judged.reports(checked)
    verification = Verification(
        reports=tuple(reports), owners=judged.owners, states=judged.states, audit=schedule.audited
    )
    return _linked_out(verification, everybody, recorded, cache_dir)


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


def _claimed(dist: InstalledDistribution) -> Learnt:
    """A distribution judged by its package manager's record: its claims, made here (:mod:`.judge.managed`)."""
    claims, _ = resolve_managed(dist)
    return Learnt(identity=None, paths=[c.path for c in claims], rows=[c.row for c in claims])


def repeated(lists: Sequence[Sequence[str]]) -> set[str]:
    """The paths that more than one row claims, over all of ``lists``.

    Nearly always none: one set of every path shows that (cheaper than counting them),
    and only then are they counted.
    """
    seen: set[str] = set()
    for paths in lists:
        seen.update(paths)
    if len(seen) == sum(map(len, lists)):
        return set()
    counts = Counter(chain.from_iterable(lists))
    return {path for path, n in counts.items() if n > 1}


class _Judgement:
    """The parent's one pass: the shared and unproven files on the exact path, every row judged, the cache written."""

    def __init__(
        self, context: Context, learnt: list[Learnt], read: dict[int, InstalledDistribution], jobs: int
    ) -> None:
        self._context = context
        self._learnt = learnt
        self._read = read  # the distributions a package manager's record judges, RECORD read
        self._built: dict[int, list[Claim]] = {}
        self._given: dict[str, FileState] = {}
        self._unproven: dict[int, list[int]] = {}
        self.states = FileStates(self._given, context.cache_dir)
        self.shared = repeated([found.paths for found in learnt])
        for i, found in enumerate(learnt):
            if found.rows is None and not self.shared.isdisjoint(found.paths):
                # The cache's verdict held, but a shared path is judged with its rivals' rows: read
                # RECORD here; its files are judged on the exact path (which asks the cache first).
                learnt[i] = self._reread(i)
        self.owners = self._owners()
        self._exact(jobs)

    def _reread(self, i: int) -> Learnt:
        again = Learnt.of(self._context.parse(i, prove=False))
        cache_dir, identity = self._context.cache_dir, again.identity
        if cache_dir is not None and identity is not None:
            again.entry = entry_seen(cache.load(cache_dir, self._context.dists[i].path, identity))
        return again

    def claims_of(self, i: int) -> list[Claim]:
        """Distribution ``i``'s claims, made once."""
        claims = self._built.get(i)
        if claims is None:
            found, dist, make = self._learnt[i], self._dist(i), fast_tuple
            assert found.rows is not None  # a settled distribution sharing a path was read again
            claims = self._built[i] = [
                make(Claim, (dist, row, path)) for path, row in zip(found.paths, found.rows, strict=True)
            ]
        return claims

    def claim_at(self, i: int, k: int) -> Claim:
        """Row ``k``'s claim alone: a distribution with one changed file costs that file, not every row."""
        claims = self._built.get(i)
        if claims is not None:
            return claims[k]
        found = self._learnt[i]
        assert found.rows is not None
        return fast_tuple(Claim, (self._dist(i), found.rows[k], found.paths[k]))

    def _dist(self, i: int) -> InstalledDistribution:
        return self._read.get(i) or self._context.dists[i]

    def _owners(self) -> dict[str, tuple[Claim, ...]]:
        owners: dict[str, tuple[Claim, ...]] = {}
        if self.shared:
            for i, found in enumerate(self._learnt):
                if not self.shared.isdisjoint(found.paths):
                    for claim in self.claims_of(i):
                        if claim.path in self.shared:
                            owners[claim.path] = (*owners.get(claim.path, ()), claim)
        return owners

    def _exact(self, jobs: int) -> None:
        """The states of the shared paths and of every file no task proved, on the exact path."""
        exact: dict[str, tuple[Claim, ...]] = {}
        for i, found in enumerate(self._learnt):
            if not self._context.checked[i]:
                continue
            if found.rows is None:  # the cache's verdict held: nothing to judge but the files it kept as judged
                assert found.identity is not None
                self.states.settle(self._context.dists[i].path, found.identity)
                self._given.update((kept.path, kept_state(kept)) for kept in found.kept)
                continue
            self.states.add(found.paths, found.rows, found.proofs)
            if len(found.proofs) < len(found.rows) or not self.shared.isdisjoint(found.paths):
                proven = {proof.row for proof in found.proofs}
                todo = self._unproven[i] = [
                    k for k, path in enumerate(found.paths) if k not in proven or path in self.shared
                ]
                for k in todo:
                    exact[found.paths[k]] = self.owners.get(found.paths[k]) or (self.claim_at(i, k),)
        if exact:
            requests = list(plan(claim for claims in exact.values() for claim in claims).values())
            states = examine_all(requests, jobs, known=self._known(exact))
            self._given.update((request.path, state) for request, state in zip(requests, states, strict=True))

    def _known(self, exact: Mapping[str, object]) -> Known | None:
        """What the cache entries of the distributions with unproven files hold of ``exact``'s paths."""
        cache_dir = self._context.cache_dir
        if cache_dir is None or not self._context.usable:
            return None
        dists = self._context.dists
        keys = [(dists[i].path, identity) for i in self._unproven if (identity := self._learnt[i].identity)]
        entries = [entry for path, identity in keys if (entry := cache.load(cache_dir, path, identity)) is not None]
        return cached_states(entries, exact).get if entries else None

    def reports(self, checked: Sequence[InstalledDistribution]) -> tuple[list[DistributionReport], dict[str, Recorded]]:
        """One report per checked distribution, in order, each remembered; what the link check needs of each."""
        index = {id(d): i for i, d in enumerate(self._context.dists)}
        reports = []
        recorded: dict[str, Recorded] = {}
        for dist in checked:
            i = index[id(dist)]
            found = self._learnt[i]
            left = [found.paths[k] for k in self._unproven.get(i, ())]
            recorded[dist.path] = Recorded(found.paths, left, found.identity, found.linked)
            if i in self._read:
                read = self._read[i]
                claims = self.claims_of(i)
                findings, verified = judge_managed(read, claims, self.states, self.owners)
                reports.append(report_for(read, findings, tuple(sorted(verified.items()))))
                continue
            report = report_for(dist, self._findings(i, dist))
            reports.append(report)
            if self._context.cache_dir is not None and found.identity is not None:
                self._remember(i, dist, report.status is Status.INTACT)
        return reports, recorded

    def _findings(self, i: int, dist: InstalledDistribution) -> list[Finding]:
        found = self._learnt[i]
        findings: list[Finding] = [*dist.problems, *found.problems, *found.outside]
        for k in self._unproven.get(i, ()):
            claim = self.claim_at(i, k)
            finding = judge(claim, self.states[claim.path], self.owners.get(claim.path) or (claim,))
            if finding is not None:
                findings.append(finding)
        for kept in found.kept:  # judged again from the states kept (none of its paths is shared)
            claim = fast_tuple(Claim, (dist, fast_tuple(RecordRow, kept.row), kept.path))
            finding = judge(claim, self._given[kept.path], (claim,))
            if finding is not None:
                findings.append(finding)
        return findings

    def _remember(self, i: int, dist: InstalledDistribution, intact: bool) -> None:
        """Write back what was learnt of distribution ``i`` (a held verdict's entry stands as it is)."""
        found, started = self._learnt[i], self._context.started
        if found.rows is None or found.identity is None:
            return
        assert self._context.cache_dir is not None
        pieces = found.records
        files = list(chain.from_iterable(pieces[first] for first in sorted(pieces)))
        odd: list[tuple[int, Claim]] = []  # the files that did not match, with their rows' places
        proven = {proof.row for proof in found.proofs}
        for k in self._unproven.get(i, ()):
            if k in proven:
                continue  # a shared path proved: its record is among the workers'
            claim = self.claim_at(i, k)
            record = file_record(claim, self.states, started)
            if record is not None:
                files.append(record)
            else:
                odd.append((k, claim))
        if i in self._unproven or (-1 in pieces and len(pieces) > 1):
            # Each piece's records are in row order, but not one after another: put them in
            # RECORD's order, as every other writer does, or each would rewrite the other's entry.
            row = {path: k for k, path in enumerate(found.paths)}
            files.sort(key=lambda record: row[record.path])
        # Files kept as judged only where every finding is a file's (see remember.judged_files).
        apart = None if found.problems or found.outside else self.shared
        judged = judged_files(odd, self.states, started, apart)
        cache_dir, rows = self._context.cache_dir, len(found.rows)
        remember(cache_dir, dist, found.identity, files, judged, intact=intact, rows=rows, before=found.entry)


def _linked_out(
    verification: Verification,
    everybody: Sequence[InstalledDistribution],
    recorded: Mapping[str, Recorded],
    cache_dir: str | None = None,
) -> Verification:
    """Each report with a WD008 for every recorded path a symbolic link takes outside the environment.

    The paths below a distribution's site directory that pass through a link are found by
    :func:`wheeldoctor.where.links.through_links`. With ``cache_dir``, that no directory on
    the way is a link is kept (:func:`_link_memo`), and while it holds only the unproven files
    are looked at. RECORD is read again only for a distribution that has one. A system
    package manager's files are its own to judge.
    """
    judged = [
        (dist, recorded[dist.path].record)
        for report in verification.reports
        if (dist := report.dist) is not None and not dist.system_managed and dist.path in recorded
    ]
    memo, read = _link_memo(cache_dir, judged), Read()
    clear = memo is not None and memo.get() is True
    roots: tuple[str, ...] | None = None
    reports = []
    anything = False
    for report in verification.reports:
        dist = report.dist
        seen = recorded.get(dist.path) if dist is not None and not dist.system_managed else None
        if dist is None or seen is None:
            reports.append(report)
            continue
        if seen.linked is not None and memo is None:  # a task looked at the directories: the files are left
            resolved = {**seen.linked, **through_links(seen.paths, dist.location, seen.unproven, directories=False)}
        else:
            noted = None if memo is None or clear else read
            resolved = through_links(seen.paths, dist.location, seen.unproven, directories=not clear, read=noted)
        anything = anything or bool(resolved)
        if not resolved:
            reports.append(report)
            continue
        if roots is None:
            roots = real_roots(chain.from_iterable((d.location, d.root) for d in everybody))
        reports.append(_with_links(report, dist, resolved, roots))
    if memo is not None and not clear and not anything:
        memo.keep(read, True)  # nothing was found: no directory on the way is a link
    return replace(verification, reports=tuple(reports))


def _with_links(
    report: DistributionReport, dist: InstalledDistribution, resolved: dict[str, str], roots: tuple[str, ...]
) -> DistributionReport:
    """``report`` with a WD008 for each of ``resolved``'s paths that leaves ``roots``."""
    outside = {path: target for path, target in resolved.items() if not inside(target, roots)}
    if not outside:
        return report
    claims = resolve(with_record(dist))[0]
    uv = (dist.installer or "").strip().lower() == "uv"
    kept = [target for target in outside.values() if uv and in_uv_cache(target)]
    named = {c.path: c.row.path for c in claims if c.path in outside}
    found = link_findings(outside, named, roots, kept)
    return report_for(dist, [*report.findings, *found], report.verified_by) if found else report


def _link_memo(cache_dir: str | None, judged: Sequence[tuple[InstalledDistribution, Identity | None]]) -> Memo | None:
    """That no directory on these distributions' recorded paths is a link, kept (see :class:`.store.Memo`).

    Inputs: each one's dist-info, site directory, root and RECORD fingerprint (the recorded
    paths follow from them). What was read: each directory holding one on the way, by its
    fingerprint (an unchanged directory lists the same names of the same kinds). None where
    none is kept: no cache, or a RECORD without a settled fingerprint.
    """
    if cache_dir is None or not judged or any(identity is None for _, identity in judged):
        return None
    inputs = tuple((d.path, d.location, d.root, identity) for d, identity in judged)
    return Memo(cache_dir, "\0".join(["links", *sorted({d.location for d, _ in judged})]), "links", 1, inputs)

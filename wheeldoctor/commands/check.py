"""``check``: verify the named distributions (or all) of one environment."""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from typing import TYPE_CHECKING, Any

from wheeldoctor.engine.beside import Beside
from wheeldoctor.engine.hashing import default_jobs
from wheeldoctor.engine.verify import spread_estimates, unique, verify_environment
from wheeldoctor.judge.files import DistributionReport, Status, not_installed, status_of
from wheeldoctor.model.environment import Environment

if TYPE_CHECKING:
    from wheeldoctor.engine.states import ProgressSink
    from wheeldoctor.judge.hooks import HookAudit
    from wheeldoctor.judge.locked import LockVerdict
    from wheeldoctor.judge.policy import Acceptances, Policy
    from wheeldoctor.judge.requirements import RequirementGraph, Requirements
    from wheeldoctor.model.ownership import UnownedScan
    from wheeldoctor.results.check import CheckResult

#: The walk for unowned files is spread over at most this many forked walkers, beside the
#: verification's own workers (on a 16-core GPU host's warm check of 49k files, the walk
#: then ended about 50 ms after the verification instead of 150 ms; 8 walked it in 34-41
#: ms where 4 took 43-56).
_WALKERS = 8
#: With this many jobs or fewer, the parent asks the audit's memo itself (see ``_Audit``): on
#: two cores a child's fork and imports took CPU from the workers (a warm check of the 2-core
#: machine's python3 ended 9 ms sooner without it), where on a 16-core GPU host a child costs
#: a spare core nothing and the parent's stats held up its workers (10 ms later). With one job
#: there is one worker, and a child would take the one CPU from it.
_ASK_IN_PARENT = 2

#: What a check needs only once its files are verified: imported while the workers verify
#: (the parent waits on them then), not before they are forked, nor after they are done.
LATER = (
    "wheeldoctor.judge.clash",
    "wheeldoctor.judge.requirements",
    "wheeldoctor.judge.overlay",
    "wheeldoctor.judge.policy",
    "wheeldoctor.judge.hook_policy",
    "wheeldoctor.results.check",
    "wheeldoctor.where.recompiled",
    "wheeldoctor.engine.registry_memo",
    "wheeldoctor.engine.unowned",
    "wheeldoctor.where.hooks",
    "wheeldoctor.repair.repairs",
)


def import_stepwise(modules: Iterable[str]) -> Iterator[None]:
    """Import ``modules`` one a step: work for a parent that waits on its workers (``meanwhile``)."""
    for module in modules:
        importlib.import_module(module)
        yield


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckRequest:
    """What a check verifies and how; the defaults are a plain ``check --all``'s, in threads."""

    names: Sequence[str] | None = None
    """The distributions to verify (canonicalised here); None: every active one."""
    jobs: int | None = None
    """Hashing threads or forked workers (None: the usable CPUs)."""
    progress: ProgressSink | None = None
    """Told how far the hashing has gone (the progress bar)."""
    strict: bool = False
    """Unverifiable distributions fail the run."""
    strict_overlays: bool = False
    """Overlaid distributions (WD060 ``replaced`` only) fail the run."""
    cache_dir: str | None = None
    """Files unchanged since a cached hash are not read again."""
    processes: bool = False
    """A command's check may hash many small files in forked workers."""
    policy: Policy | None = None
    """Accepts findings by rule or baseline, hooks' and unowned modules' too."""
    audit: bool | None = None
    """Audit start-up hooks and files nobody recorded (None: when every distribution is checked)."""
    meanwhile: Iterable[object] = ()
    """The caller's own work, done a step at a time while forked workers verify (see :func:`import_stepwise`)."""
    lock: LockVerdict | None = None
    """The lock's findings (``check --lock``): the environment holds the locked wheels' claims."""
    requirements: Requirements | None = None
    """``env``'s requirement model when the caller shares it with another check (``doctor``, ``fix``)."""


def run_check(env: Environment, request: CheckRequest = CheckRequest()) -> CheckResult:
    """Verify the distributions ``request`` names (None: every active one) in ``env``.

    The ownership of every path is always computed over the whole environment, so a
    named distribution's clashes with any other are found and attributed. Findings an
    intact overlay explains become WD060 ``replaced`` (see :mod:`wheeldoctor.judge.overlay`).
    """
    names, jobs, cache_dir = request.names, request.jobs, request.cache_dir
    processes, lock = request.processes, request.lock
    active = env.active()
    if names is None:
        checked = active
        missing: list[str] = []
    else:
        from packaging.utils import canonicalize_name

        wanted = list(dict.fromkeys(canonicalize_name(n) for n in names))
        checked = [d for n in wanted if (d := env.find(n)) is not None]
        missing = [n for n in wanted if env.find(n) is None]
    auditing = names is None if request.audit is None else request.audit
    # Who owns the hooks and which files nobody owns needs every RECORD but nothing from the
    # hashing: with processes, a child reads them and walks while the workers hash.
    walkers = min(_WALKERS, jobs or default_jobs()) if processes else 1
    # Asked as a step while the workers verify: only where they will (else no step is taken).
    ask = (
        auditing
        and cache_dir is not None
        and (jobs or default_jobs()) <= _ASK_IN_PARENT
        and spread_estimates(unique([*checked, *active]), processes=processes) is not None
    )
    walk = _Audit(env, walkers, cache_dir, processes, ask) if auditing else None
    try:
        verification = verify_environment(
            checked,
            active,
            jobs=jobs,
            progress=request.progress,
            cache_dir=cache_dir,
            processes=processes,
            meanwhile=chain(walk.steps() if walk is not None else (), import_stepwise(LATER), request.meanwhile),
        )
        from datetime import date

        from wheeldoctor.judge.clash import find_clashes, pair_up
        from wheeldoctor.judge.overlay import resolve_overlays
        from wheeldoctor.judge.policy import Policy, accept, outcome
        from wheeldoctor.judge.requirements import RequirementGraph, Requirements
        from wheeldoctor.where.recompiled import explain_recompiled

        graph = RequirementGraph(request.requirements or Requirements.of(env))
        clashes = find_clashes(verification.owners, verification.states, involving=[d.name for d in checked])
        pairs = pair_up(clashes, active, graph)
        # Read, judge files, judge shared paths, then build the result: statuses once, at the end.
        judged = explain_recompiled(verification.reports)
        if lock is not None:
            judged = [replace(r, findings=(*r.findings, *lock.findings.get(r.name, ()))) for r in judged]
        helpers = _overlays_to_verify(env, judged, graph, jobs=jobs, cache_dir=cache_dir)
        policy = request.policy or Policy(today=date.today())
        first = accept([*judged, *helpers], policy)
        resolved = resolve_overlays(first.reports, clashes, graph)
        second = accept(resolved, policy)
        shown = {d.name for d in checked}
        reports = [replace(r, status=status_of(r.findings)) for r in second.reports if r.name in shown]
        reports.extend(not_installed(n) for n in missing)
        if lock is not None:
            reports.extend(replace(not_installed(n), findings=(f,)) for n, f in lock.missing)
        reports.sort(key=lambda r: r.name)
        hooks = unowned = None
        passes, judged_too = [first, second], list(reports)
        if walk is not None:
            hooks, unowned, third = _audit_startup(env, walk, reports, policy, cache_dir)
            passes.append(third)
            judged_too += third.reports  # rules naming hooks are used, counted or stale like any other
    except BaseException:
        if walk is not None:
            walk.cancel()  # no child outlives a failed check
        raise
    from wheeldoctor.repair.repairs import repairs_of
    from wheeldoctor.results.check import CheckResult

    return CheckResult(
        environment=env,
        distributions=tuple(reports),
        repairs=repairs_of(env, reports, pairs, strict=request.strict),
        clashes=tuple(clashes),
        pairs=tuple(pairs),
        strict=request.strict,
        strict_overlays=request.strict_overlays,
        policy=None if policy.empty else outcome(policy, judged_too, *passes),
        hooks=hooks,
        unowned=unowned,
    )


def _audit_startup(
    env: Environment, walk: _Audit, reports: list[DistributionReport], policy: Policy, cache_dir: str | None
) -> tuple[HookAudit, UnownedScan, Acceptances]:
    """The start-up hooks judged by who owns them, the unowned files, and what ``policy`` accepted of both."""
    from wheeldoctor.engine.registry_memo import shipped_hooks
    from wheeldoctor.engine.unowned import from_data
    from wheeldoctor.judge.hook_policy import accept_startup
    from wheeldoctor.where.hooks import audit_hooks

    intact = {r.name: r.status is Status.INTACT for r in reports if r.dist is not None}
    owner_of, scan = from_data(walk.result())
    registry = shipped_hooks(cache_dir) if cache_dir is not None else None  # else read if a hook runs code
    return accept_startup(audit_hooks(env, owner_of.get, intact, policy.config.known_hooks, registry), scan, policy)


class _Audit:
    """The hooks' owners and the unowned files (:func:`wheeldoctor.engine.unowned.audit_data`), beside the verification.

    ``ask``: the parent first asks the audit's memo, as its first step while the workers
    verify (:meth:`steps`): a warm check then forks no child for it. Where the memo does
    not hold, or is not asked, a child does the audit (forked then, or at once), while the
    workers hash; where none can be forked, or the step was never taken, it is done when
    its result is asked for.
    """

    def __init__(self, env: Environment, walkers: int, cache_dir: str | None, processes: bool, ask: bool) -> None:
        self._env, self._walkers, self._cache_dir = env, walkers, cache_dir
        self._hooks: list[str] | None = None
        self._kept: list[Any] | None = None
        self._asked = False
        self._walk = None if ask else Beside(self._work, fork=processes)

    def steps(self) -> Iterator[None]:
        """The parent's step: the memo asked (its stats taken), else the child forked."""
        if self._walk is None:
            from wheeldoctor.engine.unowned import kept_audit

            self._kept = kept_audit(self._env, self._hook_paths(), self._cache_dir)
            self._asked = True
            if self._kept is None:
                self._walk = Beside(self._work)
        yield

    def result(self) -> list[Any]:
        if self._kept is not None:
            return self._kept
        return (self._walk or Beside(self._work, fork=False)).result()

    def cancel(self) -> None:
        """Stop the child, if one runs: no child outlives a failed check."""
        if self._walk is not None:
            self._walk.cancel()

    def _hook_paths(self) -> list[str]:
        """The hook files, listed once: by the memo's step, else by the audit itself."""
        if self._hooks is None:
            from wheeldoctor.where.hook_files import hook_paths

            self._hooks = hook_paths(self._env)
        return self._hooks

    def _work(self) -> list[Any]:
        from wheeldoctor.engine.unowned import audit_data

        return audit_data(self._env, self._hook_paths(), self._walkers, self._cache_dir, asked=self._asked)


def _overlays_to_verify(
    env: Environment,
    reports: list[DistributionReport],
    graph: RequirementGraph,
    *,
    jobs: int | None,
    cache_dir: str | None,
) -> list[DistributionReport]:
    """Reports of unchecked distributions whose bytes lie on top of checked ones'.

    Whether an overlay explains a finding depends on the overlay being intact, so a
    named check verifies the overlays too (and theirs, up a chain); they are judged,
    not shown. Nothing is read when no finding holds a requiring distribution's bytes.
    """
    known = {r.name for r in reports}
    found: list[DistributionReport] = []
    pending = reports
    while pending:
        wanted = {
            f.content_from
            for r in pending
            for f in r.findings
            if f.content_from is not None and f.content_from not in known and graph.requires(f.content_from, r.name)
        }
        dists = [d for name in sorted(wanted) if (d := env.find(name)) is not None]
        if not dists:
            break
        known.update(wanted)
        pending = list(verify_environment(dists, env.active(), jobs=jobs, cache_dir=cache_dir).reports)
        found.extend(pending)
    return found

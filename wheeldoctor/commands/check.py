"""``check``: verify the named distributions (or all) of one environment."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import TYPE_CHECKING, Any

from wheeldoctor.commands.native import native_section
from wheeldoctor.commands.stale import verdicts
from wheeldoctor.engine.audit import from_data
from wheeldoctor.engine.verify import verify_environment
from wheeldoctor.judge.clash import find_clashes, pair_up
from wheeldoctor.judge.duplicates import stale_groups
from wheeldoctor.judge.files import DistributionReport, Status, not_installed, status_of
from wheeldoctor.judge.hook_policy import accept_startup
from wheeldoctor.judge.overlay import resolve_overlays
from wheeldoctor.judge.policy import Policy, accept, outcome
from wheeldoctor.judge.requirements import RequirementGraph, Requirements
from wheeldoctor.judge.stale import StaleVerdict, with_stale
from wheeldoctor.model.environment import Environment
from wheeldoctor.repair.repairs import repairs_of
from wheeldoctor.results.check import CheckResult
from wheeldoctor.where.hooks import audit_hooks
from wheeldoctor.where.rewrites import explain_rewrites

if TYPE_CHECKING:
    from wheeldoctor.engine.schedule import ProgressSink
    from wheeldoctor.formats.wheelfile import WheelFile
    from wheeldoctor.judge.clash import Clash
    from wheeldoctor.judge.hooks import HookAudit
    from wheeldoctor.judge.locked import LockVerdict
    from wheeldoctor.judge.policy import Acceptances
    from wheeldoctor.model.environment import InstalledDistribution
    from wheeldoctor.model.ownership import UnownedScan


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
    """A command's check may fork workers."""
    policy: Policy | None = None
    """Accepts findings by rule or baseline, hooks' and unowned modules' too."""
    audit: bool | None = None
    """Audit start-up hooks and files nobody recorded (None: when every distribution is checked)."""
    lock: LockVerdict | None = None
    """The lock's findings (``check --lock``): the environment holds the locked wheels' claims."""
    requirements: Requirements | None = None
    """``env``'s requirement model when the caller shares it with another check (``doctor``, ``fix``)."""
    bytecode: bool | None = None
    """Judge the ``.pyc`` rows RECORD lists without a hash by their code (WD063, ``probes/bytecode.py``);
    None: with ``strict`` or a ``lock``."""


def run_check(env: Environment, request: CheckRequest = CheckRequest()) -> CheckResult:
    """Verify the distributions ``request`` names (None: every active one) in ``env``.

    The ownership of every path is always computed over the whole environment, so a
    named distribution's clashes with any other are found and attributed. Findings an
    intact overlay explains become WD060 ``replaced`` (see :mod:`wheeldoctor.judge.overlay`).
    """
    names, jobs, cache_dir, lock = request.names, request.jobs, request.cache_dir, request.lock
    active = env.active()
    checked, missing = _chosen(env, names)
    # Stale dist-infos beside a checked one are verified too: whose files are on disk decides the repair.
    groups = stale_groups(env, {d.name for d in checked})
    siblings = [d for group in groups.values() for d in group[1:]]
    auditing = names is None if request.audit is None else request.audit
    verification = verify_environment(
        [*checked, *siblings], [*active, *siblings], jobs=jobs, progress=request.progress, cache_dir=cache_dir,
        processes=request.processes, audit=env if auditing else None,
    )  # fmt: skip
    judged, bytecode = _bytecode(env, verification.reports, request)
    graph = RequirementGraph(request.requirements or Requirements.of(env))
    clashes = find_clashes(verification.owners, verification.states, involving=[d.name for d in checked])
    pairs = pair_up(clashes, active, graph)
    policy = request.policy or Policy(today=date.today())
    verified, stale = _stale(groups, judged[: len(checked)], judged[len(checked) :])
    reports, passes = _judged(env, verified, clashes, graph, policy, lock, jobs=jobs, cache_dir=cache_dir)
    shown = {d.name for d in checked}
    reports = [replace(r, status=status_of(r.findings)) for r in reports if r.name in shown]
    reports.extend(not_installed(n) for n in missing)
    if lock is not None:
        reports.extend(replace(not_installed(n), findings=(f,)) for n, f in lock.missing)
    reports.sort(key=lambda r: r.name)
    hooks = unowned = native = None
    judged_too = list(reports)
    if verification.audit is not None:
        hooks, unowned, third = _startup(env, verification.audit, reports, policy)
        passes.append(third)
        judged_too += third.reports  # rules naming hooks are used, counted or stale like any other
        native, fourth = native_section(env, graph, policy, strict=request.strict, cache_dir=cache_dir)
        passes.append(fourth)
        judged_too += fourth.reports
    if lock is not None and lock.added:
        hooks, added = _lock_hooks(hooks, lock.added, policy)
        if added is not None:
            passes.append(added)
            judged_too += added.reports
    return CheckResult(
        environment=env,
        distributions=tuple(reports),
        repairs=repairs_of(env, reports, pairs, strict=request.strict, stale=stale),
        stale=tuple(stale.values()),
        clashes=tuple(clashes),
        pairs=tuple(pairs),
        strict=request.strict,
        strict_overlays=request.strict_overlays,
        policy=None if policy.empty else outcome(policy, judged_too, *passes),
        hooks=hooks,
        unowned=unowned,
        native=native,
        bytecode=bytecode,
    )


def _bytecode(
    env: Environment, reports: Sequence[DistributionReport], request: CheckRequest
) -> tuple[Sequence[DistributionReport], tuple[int, int] | None]:
    """``reports`` with WD063 findings, and the counts judged and not, where ``request`` asks for it."""
    wanted = request.bytecode if request.bytecode is not None else request.strict or request.lock is not None
    if not wanted:
        return reports, None
    from wheeldoctor.probes.bytecode import judge_bytecode

    judged = judge_bytecode(reports, env.python, request.cache_dir)
    return judged.reports, (judged.judged, judged.not_judged)


def _stale(
    groups: Mapping[str, Sequence[InstalledDistribution]],
    verified: Sequence[DistributionReport],
    siblings: Sequence[DistributionReport],
) -> tuple[list[DistributionReport], dict[str, StaleVerdict]]:
    """The checked reports, each that has stale dist-infos beside it with WD052 for them; the verdicts, by name."""
    if not groups:
        return list(verified), {}
    explained = explain_rewrites([*(r for r in verified if r.name in groups), *siblings])
    found = verdicts(groups, explained)
    by_name = {r.name: r for r in explained[: len(explained) - len(siblings)]}
    return [with_stale(by_name[r.name], found[r.name]) if r.name in found else r for r in verified], found


def _chosen(env: Environment, names: Sequence[str] | None) -> tuple[list[InstalledDistribution], list[str]]:
    """The distributions ``names`` asks for (None: every active one), and the names not installed."""
    if names is None:
        return env.active(), []
    from packaging.utils import canonicalize_name

    wanted = list(dict.fromkeys(canonicalize_name(n) for n in names))
    return [d for n in wanted if (d := env.find(n)) is not None], [n for n in wanted if env.find(n) is None]


def _judged(
    env: Environment,
    verified: Sequence[DistributionReport],
    clashes: Sequence[Clash],
    graph: RequirementGraph,
    policy: Policy,
    lock: LockVerdict | None,
    *,
    jobs: int | None,
    cache_dir: str | None,
) -> tuple[list[DistributionReport], list[Acceptances]]:
    """The verified reports, installers' known rewrites explained, the lock's findings added, overlays resolved,
    the policy applied (before and after the overlays are resolved); and the policy's passes."""
    judged = explain_rewrites(verified)
    if lock is not None:
        judged = [replace(r, findings=(*r.findings, *lock.findings.get(r.name, ()))) for r in judged]
    helpers = _overlays_to_verify(env, judged, graph, jobs=jobs, cache_dir=cache_dir)
    first = accept([*judged, *helpers], policy)
    resolved = resolve_overlays(first.reports, clashes, graph)
    second = accept(resolved, policy)
    return list(second.reports), [first, second]


def _startup(
    env: Environment, audit: list[Any], reports: list[DistributionReport], policy: Policy
) -> tuple[HookAudit, UnownedScan, Acceptances]:
    """The start-up hooks and unowned files the verification's audit found, judged, the policy applied."""
    intact = {r.name: r.status is Status.INTACT for r in reports if r.dist is not None}
    owner_of, scan = from_data(audit)
    hooks = audit_hooks(env, owner_of.get, intact, policy.config.known_hooks, None)  # the registry read where needed
    return accept_startup(hooks, scan, policy)


def _lock_hooks(
    hooks: HookAudit | None, wheels: Sequence[WheelFile], policy: Policy
) -> tuple[HookAudit | None, Acceptances | None]:
    """The environment's hooks (None: not audited) and the start-up hooks the lock's ``wheels`` would add, judged;
    the policy's pass over the latter (None: they are none)."""
    from wheeldoctor.judge.hooks import HookAudit
    from wheeldoctor.judge.wheel_hooks import wheel_hooks
    from wheeldoctor.model.ownership import UnownedScan

    found = HookAudit(tuple(h for w in wheels for h in wheel_hooks(w, policy.config.known_hooks)))
    if not found.hooks:
        return hooks, None
    marked, _, done = accept_startup(found, UnownedScan(files=(), importable=(), scanned=0, site_dirs=()), policy)
    return HookAudit((*(hooks.hooks if hooks is not None else ()), *marked.hooks)), done


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

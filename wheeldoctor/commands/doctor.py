"""``doctor``: every check at once (files and clashes, then deps), one result, one verdict."""

from __future__ import annotations

from dataclasses import replace

from wheeldoctor.commands.check import CheckRequest, run_check
from wheeldoctor.commands.deps import run_deps, select_deps
from wheeldoctor.commands.deps_policy import accept_deps, deps_reports, with_deps
from wheeldoctor.engine.schedule import ProgressSink
from wheeldoctor.judge.files import DistributionReport
from wheeldoctor.judge.locked import LockVerdict
from wheeldoctor.judge.policy import Policy
from wheeldoctor.model.environment import Environment
from wheeldoctor.results.check import DoctorResult


def run_doctor(
    env: Environment,
    *,
    jobs: int | None = None,
    progress: ProgressSink | None = None,
    strict: bool = False,
    cache_dir: str | None = None,
    policy: Policy | None = None,
    lock: LockVerdict | None = None,
) -> DoctorResult:
    """Verify every active distribution (with clashes, as ``check --all``), then run ``deps``.

    Clashes come with the check result (``CheckResult.clashes``); anything new that ``check``
    learns appears in ``doctor`` without a change here. Both read one requirement model.
    """
    from wheeldoctor.judge.requirements import Requirements

    requirements = Requirements.of(env)
    request = CheckRequest(
        jobs=jobs,
        progress=progress,
        strict=strict,
        cache_dir=cache_dir,
        processes=lock is None,  # the lock's claims are in ``env``; forked workers would read RECORD files
        strict_overlays=strict,
        policy=policy,
        lock=lock,
        requirements=requirements,
    )
    check = run_check(env, request)
    deps = run_deps(env, requirements, stale={verdict.name: verdict for verdict in check.stale})
    if policy is not None and not policy.empty:
        # Accept rules and baselines judge every kind of finding, dependencies included.
        deps = select_deps(deps, policy.selection)
        done = accept_deps(deps, policy)
        deps = done.deps
        if check.policy is not None:
            check = replace(check, policy=with_deps(check.policy, policy, done))
    # Unreadable metadata is already a file-level finding of the check: say it once.
    reported = {(r.name, f.code) for r in check.distributions for f in r.findings}
    compatibility = tuple(f for f in deps.compatibility if (f.dist, f.code) not in reported)
    return DoctorResult(check, replace(deps, compatibility=compatibility))


def baseline_reports(result: DoctorResult) -> tuple[DistributionReport, ...]:
    """What a baseline written now pins: the check's findings, then every failing dependency element."""
    return (*result.check.baseline_reports, *deps_reports(result.deps))

"""``check``: verify the named distributions (or all) of one environment."""

from __future__ import annotations

from collections.abc import Sequence

from wheeldoctor.checks.clash import find_clashes, pair_up
from wheeldoctor.checks.files import DistributionReport, Status, not_installed, verify_environment
from wheeldoctor.checks.hooks import audit_hooks
from wheeldoctor.checks.ownership import Owners
from wheeldoctor.checks.states import ProgressSink
from wheeldoctor.checks.unowned import from_data, scan_data
from wheeldoctor.commands.results import CheckResult
from wheeldoctor.disk.beside import Beside
from wheeldoctor.where.environment import Environment
from wheeldoctor.where.system_files import system_owners


def run_check(
    env: Environment,
    names: Sequence[str] | None,
    *,
    jobs: int | None = None,
    progress: ProgressSink | None = None,
    strict: bool = False,
    cache_dir: str | None = None,
    processes: bool = False,
    audit: bool | None = None,
) -> CheckResult:
    """Verify ``names`` (canonicalised; None for every active distribution) in ``env``.

    The ownership of every path is always computed over the whole environment, so a
    named distribution's clashes with any other are found and attributed. With
    ``cache_dir``, files unchanged since a cached hash are not read again; ``processes``
    lets a command hash many small files in forked workers. ``audit`` (by default: when
    every distribution is checked) also audits start-up hooks and files nobody recorded.
    """
    from packaging.utils import canonicalize_name

    active = env.active()
    if names is None:
        checked = active
        missing: list[str] = []
    else:
        wanted = list(dict.fromkeys(str(canonicalize_name(n)) for n in names))
        checked = [d for n in wanted if (d := env.find(n)) is not None]
        missing = [n for n in wanted if env.find(n) is None]
    auditing = names is None if audit is None else audit
    owners = Owners(env, system_owners(env)) if auditing else None
    # The walk for unowned files needs nothing from the hashing: with processes, a child
    # does it while the workers hash.
    walk = Beside(lambda: scan_data(env, owners), fork=processes) if owners is not None else None
    try:
        verification = verify_environment(
            checked, active, jobs=jobs, progress=progress, cache_dir=cache_dir, processes=processes
        )
    except BaseException:
        if walk is not None:
            walk.cancel()
        raise
    reports: list[DistributionReport] = list(verification.reports)
    reports.extend(not_installed(n) for n in missing)
    reports.sort(key=lambda r: r.name)
    clashes = find_clashes(verification.owners, verification.states, involving=[d.name for d in checked])
    hooks = unowned = None
    if owners is not None and walk is not None:
        intact = {r.name: r.status is Status.INTACT for r in reports if r.dist is not None}
        hooks, unowned = audit_hooks(env, owners, intact), from_data(walk.result())
    return CheckResult(
        env,
        tuple(reports),
        tuple(clashes),
        tuple(pair_up(clashes, active)),
        strict=strict,
        hooks=hooks,
        unowned=unowned,
    )

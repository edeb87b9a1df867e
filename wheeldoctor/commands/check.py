"""``check``: verify the named distributions (or all) of one environment."""

from __future__ import annotations

from collections.abc import Sequence

from wheeldoctor.checks.clash import find_clashes, pair_up
from wheeldoctor.checks.deps import RequirementGraph
from wheeldoctor.checks.files import DistributionReport, not_installed, verify_environment
from wheeldoctor.checks.states import ProgressSink
from wheeldoctor.commands.results import CheckResult
from wheeldoctor.where.environment import Environment


def run_check(
    env: Environment,
    names: Sequence[str] | None,
    *,
    jobs: int | None = None,
    progress: ProgressSink | None = None,
    strict: bool = False,
    cache_dir: str | None = None,
    processes: bool = False,
) -> CheckResult:
    """Verify ``names`` (canonicalised; None for every active distribution) in ``env``.

    The ownership of every path is always computed over the whole environment, so a
    named distribution's clashes with any other are found and attributed. With
    ``cache_dir``, files unchanged since a cached hash are not read again; ``processes``
    lets a command hash many small files in forked workers.
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
    verification = verify_environment(
        checked, active, jobs=jobs, progress=progress, cache_dir=cache_dir, processes=processes
    )
    reports: list[DistributionReport] = list(verification.reports)
    reports.extend(not_installed(n) for n in missing)
    reports.sort(key=lambda r: r.name)
    clashes = find_clashes(verification.owners, verification.states, involving=[d.name for d in checked])
    pairs = pair_up(clashes, active, RequirementGraph.of(env))
    return CheckResult(env, tuple(reports), tuple(clashes), tuple(pairs), strict=strict)

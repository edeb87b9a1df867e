"""``check``: verify the named distributions (or all) of one environment."""

from __future__ import annotations

from collections.abc import Sequence

from wheeldoctor.environment import Environment
from wheeldoctor.results import CheckResult
from wheeldoctor.verify import DistributionReport, ProgressSink, not_installed, verify


def run_check(
    env: Environment,
    names: Sequence[str] | None,
    *,
    jobs: int | None = None,
    progress: ProgressSink | None = None,
    strict: bool = False,
) -> CheckResult:
    """Verify ``names`` (canonicalised; None for every active distribution) in ``env``."""
    from packaging.utils import canonicalize_name

    active = env.active()
    if names is None:
        checked = active
        missing: list[str] = []
    else:
        wanted = list(dict.fromkeys(str(canonicalize_name(n)) for n in names))
        checked = [d for n in wanted if (d := env.find(n)) is not None]
        missing = [n for n in wanted if env.find(n) is None]
    reports: list[DistributionReport] = verify(checked, active, jobs=jobs, progress=progress)
    reports.extend(not_installed(n) for n in missing)
    reports.sort(key=lambda r: r.name)
    return CheckResult(env, tuple(reports), strict=strict)

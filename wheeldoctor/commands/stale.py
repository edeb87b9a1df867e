"""Whose files stale dist-infos hold: each project's dist-infos verified, then judged (:mod:`~wheeldoctor.judge.stale`).

``check`` verifies them with everything else and hands their reports here; ``deps``, which
reads metadata alone, verifies only these few dist-infos (:func:`verify_stale`), so that
its clean-up keeps the same version as ``check``'s, ``doctor``'s and ``fix``'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from wheeldoctor.judge.duplicates import stale_groups
from wheeldoctor.judge.files import DistributionReport
from wheeldoctor.judge.stale import StaleVerdict, judge_stale
from wheeldoctor.model.environment import Environment, InstalledDistribution
from wheeldoctor.where.environment import with_record


def recorded(dist: InstalledDistribution) -> InstalledDistribution:
    """``dist`` with its RECORD read (a metadata-only read left it unread)."""
    if dist.record is None and not dist.record_deferred and not dist.legacy:
        dist = replace(dist, record_deferred=True)
    return with_record(dist)


def verdicts(
    groups: Mapping[str, Sequence[InstalledDistribution]], reports: Iterable[DistributionReport]
) -> dict[str, StaleVerdict]:
    """Each group judged from its dist-infos' verifications (``reports``, matched by dist-info path)."""
    by_path = {r.dist.path: r for r in reports if r.dist is not None}
    return {name: judge_stale([recorded(d) for d in dists], by_path) for name, dists in groups.items()}


def verify_stale(env: Environment, cache_dir: str | None = None) -> dict[str, StaleVerdict]:
    """The verdict on each project with stale dist-infos in ``env``, by name; its dist-infos alone are verified."""
    groups = stale_groups(env)
    if not groups:
        return {}
    from wheeldoctor.engine.verify import verify_environment
    from wheeldoctor.where.rewrites import explain_rewrites

    read = {name: [recorded(d) for d in group] for name, group in groups.items()}
    dists = [d for group in read.values() for d in group]
    reports = explain_rewrites(verify_environment(dists, dists, cache_dir=cache_dir).reports)
    return verdicts(read, reports)

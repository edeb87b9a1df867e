"""What one run of a command found: the single value every renderer takes."""

from __future__ import annotations

from dataclasses import dataclass

from wheeldoctor.checks.clash import Clash, ClashPair, Relation
from wheeldoctor.checks.files import FAILING_STATUSES, DistributionReport, Status
from wheeldoctor.checks.policy import PolicyOutcome
from wheeldoctor.commands.deps import DepsResult
from wheeldoctor.where.environment import Environment


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The outcome of ``wheeldoctor check`` for one environment."""

    environment: Environment
    distributions: tuple[DistributionReport, ...]
    clashes: tuple[Clash, ...] = ()
    pairs: tuple[ClashPair, ...] = ()
    strict: bool = False
    """Distributions that cannot be verified fail the run."""
    strict_overlays: bool = False
    """Overlaid distributions (WD060 ``replaced`` only) fail the run too."""
    policy: PolicyOutcome | None = None
    """What accept rules and a baseline did; None when there were none."""

    @property
    def healthy(self) -> bool:
        """Whether the run found nothing that fails it (this decides the exit code).

        Besides failing statuses, a pair of unrelated distributions that write the same
        paths fails: uninstalling either one would delete the other's files.
        """
        failing = set(FAILING_STATUSES)
        if self.strict:
            failing.add(Status.UNVERIFIABLE)
        if self.strict_overlays:
            failing.add(Status.OVERLAID)
        return not any(d.status in failing for d in self.distributions) and not self.unrelated

    @property
    def unrelated(self) -> tuple[ClashPair, ...]:
        """Clashing pairs of a reported distribution where neither requires the other: a failure
        whoever holds the paths (a result narrowed to one distribution keeps only its own)."""
        names = {d.name for d in self.distributions}
        return tuple(
            p
            for p in self.pairs
            if p.relation is Relation.UNRELATED and (p.first.name in names or p.second.name in names)
        )


@dataclass(frozen=True, slots=True)
class DoctorResult:
    """The outcome of ``wheeldoctor doctor``: files and clashes (``check``) plus ``deps``, one verdict."""

    check: CheckResult
    deps: DepsResult

    @property
    def environment(self) -> Environment:
        """The environment both parts looked at."""
        return self.check.environment

    @property
    def healthy(self) -> bool:
        """Healthy only when every part is."""
        return self.check.healthy and self.deps.healthy

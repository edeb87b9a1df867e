"""What one run of a command found: the single value every renderer takes."""

from __future__ import annotations

from dataclasses import dataclass

from wheeldoctor.checks.clash import Clash, ClashPair
from wheeldoctor.checks.files import DistributionReport, Status
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

    @property
    def healthy(self) -> bool:
        """Whether the run found nothing that fails it (this decides the exit code)."""
        failing = {Status.BROKEN, Status.NOT_INSTALLED}
        if self.strict:
            failing.add(Status.UNVERIFIABLE)
        return not any(d.status in failing for d in self.distributions)


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

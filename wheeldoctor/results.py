"""What one run of a command found: the single value every renderer takes."""

from __future__ import annotations

from dataclasses import dataclass

from wheeldoctor.clash import Clash, ClashPair
from wheeldoctor.environment import Environment
from wheeldoctor.verify import DistributionReport, Status


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

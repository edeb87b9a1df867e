"""What one run of a command found: the single value every renderer takes."""

from __future__ import annotations

from dataclasses import dataclass

from wheeldoctor.checks.clash import Clash, ClashPair
from wheeldoctor.checks.files import DistributionReport, Status
from wheeldoctor.checks.hooks import HookAudit
from wheeldoctor.checks.unowned import UnownedScan
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
    hooks: HookAudit | None = None
    """The start-up hooks of the environment; None when not audited (a check of named distributions)."""
    unowned: UnownedScan | None = None
    """Files in site directories nobody recorded; None when not scanned."""
    show_unowned: bool = False
    """The report lists every unowned file (``--show-unowned``), not only their count."""

    @property
    def healthy(self) -> bool:
        """Whether the run found nothing that fails it (this decides the exit code).

        Besides failing statuses: a start-up hook that runs code and is neither known nor
        accepted (WD070, WD071), and an unowned importable module (WD072).
        """
        failing = {Status.BROKEN, Status.NOT_INSTALLED}
        if self.strict:
            failing.add(Status.UNVERIFIABLE)
        if any(d.status in failing for d in self.distributions):
            return False
        return not (self.hooks is not None and self.hooks.findings) and not (self.unowned and self.unowned.findings)


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

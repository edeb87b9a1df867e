"""What ``check`` and ``doctor`` found: the single value every renderer of theirs takes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a renderer asks isinstance of these classes: that must not import the verifier
    from wheeldoctor.formats.lock_fetched import FetchSummary
    from wheeldoctor.judge.clash import Clash, ClashPair
    from wheeldoctor.judge.files import DistributionReport
    from wheeldoctor.judge.hooks import HookAudit, StartupHook
    from wheeldoctor.judge.native_audit import NativeAudit, NativeFinding
    from wheeldoctor.judge.policy import PolicyOutcome
    from wheeldoctor.judge.stale import StaleVerdict
    from wheeldoctor.model.environment import Environment
    from wheeldoctor.model.findings import Finding
    from wheeldoctor.model.ownership import UnownedScan
    from wheeldoctor.repair.repairs import Repairs
    from wheeldoctor.results.deps import DepsResult


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckResult:
    """The outcome of ``wheeldoctor check`` for one environment."""

    environment: Environment
    distributions: tuple[DistributionReport, ...]
    repairs: Repairs
    """The repair of each broken distribution and clash pair, made once: every renderer shows these."""
    clashes: tuple[Clash, ...] = ()
    pairs: tuple[ClashPair, ...] = ()
    strict: bool = False
    """Distributions that cannot be verified fail the run."""
    strict_overlays: bool = False
    """Overlaid distributions (WD060 ``replaced`` only) fail the run too."""
    policy: PolicyOutcome | None = None
    """What accept rules and a baseline did; None when there were none."""
    hooks: HookAudit | None = None
    """The start-up hooks of the environment; None when not audited (a check of named distributions)."""
    unowned: UnownedScan | None = None
    """Files in site directories nobody recorded; None when not scanned."""
    show_unowned: bool = False
    """The report lists every unowned file (``--show-unowned``), not only their count."""
    fetched: FetchSummary | None = None
    """With ``--lock``: how the locked wheels' RECORDs were had (bytes, requests, sources); None without."""
    stale: tuple[StaleVerdict, ...] = ()
    """For each checked distribution with stale dist-infos beside it: whose files are on disk."""
    native: NativeAudit | None = None
    """The environment's shared objects as the loader sees them; None when not audited (as ``hooks``)."""
    bytecode: tuple[int, int] | None = None
    """Unhashed ``.pyc`` rows judged by their code (WD063), and those not judged; None when not asked."""

    @property
    def healthy(self) -> bool:
        """Whether the run found nothing that fails it (this decides the exit code).

        Besides failing statuses, a pair of unrelated distributions that write the same
        paths fails: uninstalling either one would delete the other's files. So does a
        start-up hook that runs code and is neither known nor accepted (WD070, WD071), an
        unowned importable module (WD072) not accepted, and a native library finding that
        fails (WD090, WD092, WD093; WD094 with ``strict``) not accepted.
        """
        return not self.failing_parts

    @property
    def failing_parts(self) -> tuple[str, ...]:
        """What fails the run, by category, in report order: ``files``, ``lock membership`` (only not the
        lock's: files intact), ``clashes``, ``start-up hooks``, ``unowned modules``, ``native libraries``
        (empty when healthy); a verdict names these, never a category that passed."""
        from wheeldoctor.judge.files import FAILING_STATUSES, Status, off_the_lock

        failing = set(FAILING_STATUSES)
        if self.strict:
            failing.add(Status.UNVERIFIABLE)
        if self.strict_overlays:
            failing.add(Status.OVERLAID)
        failed = [d for d in self.distributions if d.status in failing]
        parts = (
            ("files", any(not off_the_lock(d) for d in failed)),
            ("lock membership", any(off_the_lock(d) for d in failed)),
            ("clashes", bool(self.unrelated)),
            ("start-up hooks", bool(self.failing_hooks)),
            ("unowned modules", bool(self.failing_unowned)),
            ("native libraries", bool(self.failing_native)),
        )
        return tuple(name for name, fails in parts if fails)

    def pairs_failing(self, name: str) -> tuple[ClashPair, ...]:
        """The unrelated pairs that fail ``name`` whatever its own files hold."""
        return tuple(p for p in self.unrelated if name in (p.first.name, p.second.name))

    @property
    def baseline_reports(self) -> tuple[DistributionReport, ...]:
        """Every report whose findings a baseline written now pins: distributions', then the start-up audit's."""
        from wheeldoctor.judge.hook_policy import startup_reports
        from wheeldoctor.judge.native_policy import native_reports

        return (*self.distributions, *startup_reports(self.hooks, self.unowned), *native_reports(self.native))

    @property
    def failing_native(self) -> tuple[NativeFinding, ...]:
        """The native findings that fail the run (see :attr:`NativeAudit.failing`)."""
        return self.native.failing if self.native is not None else ()

    @property
    def failing_hooks(self) -> tuple[StartupHook, ...]:
        """The hooks whose WD070/WD071 no rule accepted."""
        return self.hooks.failing if self.hooks is not None else ()

    @property
    def failing_unowned(self) -> tuple[Finding, ...]:
        """The WD072 findings no rule accepted."""
        return tuple(f for f in self.unowned.findings if f.accepted is None) if self.unowned is not None else ()

    @property
    def unrelated(self) -> tuple[ClashPair, ...]:
        """Clashing pairs of a reported distribution where neither requires the other: a failure
        whoever holds the paths (a result narrowed to one distribution keeps only its own)."""
        from wheeldoctor.judge.clash import Relation

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

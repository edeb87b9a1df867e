"""What ``imports`` found: each module's import report, and the forbidden effects it showed."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wheeldoctor.probes.imports import ImportReport


class Effect(str, Enum):
    """What ``--forbid`` can turn into a failure."""

    GPU_INIT = "gpu-init"
    THREADS = "threads"
    PROCESSES = "processes"
    DEVICES = "devices"
    SLOW = "slow"


@dataclass(frozen=True, slots=True)
class Forbid:
    """The effects that fail a run; ``slow_seconds`` is the limit for :attr:`Effect.SLOW`."""

    effects: frozenset[Effect] = frozenset({Effect.GPU_INIT})
    slow_seconds: float | None = None

    @classmethod
    def parse(cls, text: str) -> Forbid:
        """Read ``gpu-init,threads,processes,devices,slow:SECONDS``; ValueError names what is wrong."""
        effects: set[Effect] = set()
        slow: float | None = None
        for token in (t.strip() for t in text.split(",")):
            if not token:
                continue
            name, _, value = token.partition(":")
            try:
                effect = Effect(name)
            except ValueError:
                known = ", ".join(e.value for e in Effect)
                raise ValueError(f"--forbid: unknown effect {name!r} (known: {known}, as slow:SECONDS)") from None
            if (effect is Effect.SLOW) != bool(value):
                raise ValueError(f"--forbid: {token!r}: only slow takes a value, and it needs one (slow:SECONDS)")
            if effect is Effect.SLOW:
                try:
                    slow = float(value)
                except ValueError:
                    raise ValueError(f"--forbid: {token!r}: SECONDS must be a number") from None
                if not slow >= 0:
                    raise ValueError(f"--forbid: {token!r}: SECONDS must be a number >= 0")
            effects.add(effect)
        return cls(frozenset(effects), slow)

    def tokens(self) -> tuple[str, ...]:
        """The forbidden effects as ``--forbid`` spells them, in a stable order."""
        return tuple(
            f"slow:{self.slow_seconds:g}" if e is Effect.SLOW else e.value for e in Effect if e in self.effects
        )

    def violations(self, report: ImportReport) -> tuple[Effect, ...]:
        """The forbidden effects that ``report`` shows."""
        shown = {
            Effect.GPU_INIT: report.gpu_driver_initialized,
            Effect.THREADS: report.threads_started > 0,
            Effect.PROCESSES: report.processes_started > 0,
            Effect.DEVICES: bool(report.open_device_files),
            Effect.SLOW: self.slow_seconds is not None and report.seconds > self.slow_seconds,
        }
        return tuple(e for e in Effect if e in self.effects and shown[e])


@dataclass(frozen=True, slots=True)
class ImportVerdict:
    """One module's report and the forbidden effects it showed."""

    report: ImportReport
    forbidden: tuple[Effect, ...]

    @property
    def failed(self) -> bool:
        """An import that raised, died or timed out fails, as does any forbidden effect."""
        return bool(self.forbidden) or self.report.error is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportsResult:
    """The outcome of ``wheeldoctor imports``."""

    python: str
    forbid: Forbid
    timeout: float
    verdicts: tuple[ImportVerdict, ...]

    @property
    def healthy(self) -> bool:
        """Whether every module imported cleanly and showed nothing forbidden."""
        return not any(v.failed for v in self.verdicts)

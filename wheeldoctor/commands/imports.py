"""``wheeldoctor imports``: import each module in a fresh target process and judge what it did.

This command's whole job is to run the target environment's code (see probes/imports.py).
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from enum import Enum

from wheeldoctor.probes.accelerators import GPU_DEVICE_NODES, GPU_RUNTIME_LIBRARIES, DevicePattern, LibraryPattern
from wheeldoctor.probes.imports import ImportProbeError, ImportReport, probe_import


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


def resolve_python(python: str | None) -> str:
    """The interpreter to run: ``python`` as a path or a name on PATH; this one by default."""
    if python is None:
        return sys.executable
    found = shutil.which(python)
    if found is None:
        raise ImportProbeError(f"no such interpreter: {python}")
    return found


def run_imports(
    modules: tuple[str, ...],
    python: str | None = None,
    *,
    forbid: Forbid | None = None,
    timeout: float = 60.0,
    devices: tuple[DevicePattern, ...] = GPU_DEVICE_NODES,
    libraries: tuple[LibraryPattern, ...] = GPU_RUNTIME_LIBRARIES,
) -> ImportsResult:
    """Import each of ``modules`` in its own fresh process and judge it against ``forbid``.

    Raises ImportProbeError when the probe cannot run at all (not Linux, no such interpreter).
    """
    if not sys.platform.startswith("linux"):
        raise ImportProbeError("wheeldoctor imports reads /proc: it runs on Linux only")
    if not modules:
        raise ImportProbeError("name at least one module to import")
    if timeout <= 0:
        raise ImportProbeError("--timeout must be more than 0 seconds")
    rules = Forbid() if forbid is None else forbid
    interpreter = resolve_python(python)
    verdicts = []
    for module in modules:
        report = probe_import(module, interpreter, timeout=timeout, devices=devices, libraries=libraries)
        verdicts.append(ImportVerdict(report, rules.violations(report)))
    return ImportsResult(python=interpreter, forbid=rules, timeout=timeout, verdicts=tuple(verdicts))

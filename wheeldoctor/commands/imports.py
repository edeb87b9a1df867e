"""``wheeldoctor imports``: import each module in a fresh target process and judge what it did.

This command's whole job is to run the target environment's code (see probes/imports.py).
"""

from __future__ import annotations

import shutil
import sys

from wheeldoctor.probes.accelerators import GPU_DEVICE_NODES, GPU_RUNTIME_LIBRARIES, DevicePattern, LibraryPattern
from wheeldoctor.probes.imports import ImportProbeError, probe_import
from wheeldoctor.results.imports import Forbid, ImportsResult, ImportVerdict


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

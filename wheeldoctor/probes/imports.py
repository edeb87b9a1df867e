"""What importing one module does to a process: time, threads, processes, device files, libraries.

This RUNS the target environment's code: each module is imported in a fresh process of the
target interpreter, observed by the standard-library probe ``wheeldoctor/probes/import_probe.py``
(passed to it as ``python -B -c``: nothing of wheeldoctor's is imported there, and no bytecode
is written). Linux only: the probe reads ``/proc/self``.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wheeldoctor.probes.accelerators import (
    GPU_DEVICE_NODES,
    GPU_RUNTIME_LIBRARIES,
    DevicePattern,
    LibraryPattern,
    gpu_vendor,
    is_gpu_runtime,
)

_PROBE = Path(__file__).resolve().parent.parent / "probes" / "import_probe.py"
_HEAVIEST = 10
_STDERR_TAIL = 1 << 16


class ImportProbeError(Exception):
    """The probe could not run at all (no such interpreter, one too old); one line for the user."""


@dataclass(frozen=True, slots=True)
class Origin:
    """The module whose own code did something, and the chain of importers that led to it."""

    module: str
    chain: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceFile:
    """A device node a module opened; ``gpu_vendor`` is set when it is an accelerator's."""

    path: str
    opened_by: Origin
    still_open: bool
    gpu_vendor: str | None


@dataclass(frozen=True, slots=True)
class Started:
    """OS threads or child processes that one module started."""

    by: Origin
    count: int


@dataclass(frozen=True, slots=True)
class SharedLibrary:
    """A shared library newly mapped while a module ran."""

    path: str
    loaded_by: Origin
    gpu_runtime: bool


@dataclass(frozen=True, slots=True)
class ModuleTime:
    """A module's cumulative import time (its own code and everything it imported)."""

    module: str
    seconds: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportReport:
    """Everything one import did, each effect attributed to the innermost module that caused it.

    ``device_files`` holds every device node opened (``still_open`` says whether it was open
    when the import returned); threads count those alive when their module's code finished;
    processes count those started (audit events) or alive at that point, whichever is more.
    """

    module: str
    seconds: float
    modules_loaded: int = 0
    heaviest: tuple[ModuleTime, ...] = ()
    device_files: tuple[DeviceFile, ...] = ()
    threads: tuple[Started, ...] = ()
    processes: tuple[Started, ...] = ()
    shared_libraries: tuple[SharedLibrary, ...] = ()
    error: str | None = None
    timed_out: bool = False

    @property
    def open_device_files(self) -> tuple[DeviceFile, ...]:
        """Device files still open when the import returned, each path once per module that opened it.

        (A CUDA context holds /dev/nvidia0 open some twenty times.)
        """
        seen: dict[tuple[str, Origin], DeviceFile] = {}
        for d in self.device_files:
            if d.still_open:
                seen.setdefault((d.path, d.opened_by), d)
        return tuple(seen.values())

    @property
    def gpu_initialized_by(self) -> Origin | None:
        """The module that first opened an accelerator's device node, or None."""
        return next((d.opened_by for d in self.device_files if d.gpu_vendor is not None), None)

    @property
    def gpu_driver_initialized(self) -> bool:
        """Whether any accelerator's device node was opened during the import."""
        return self.gpu_initialized_by is not None

    @property
    def threads_started(self) -> int:
        """OS threads started by the import (alive when their module's code finished)."""
        return sum(s.count for s in self.threads)

    @property
    def processes_started(self) -> int:
        """Child processes started by the import."""
        return sum(s.count for s in self.processes)


def probe_import(
    module: str,
    python: str,
    *,
    timeout: float = 60.0,
    devices: tuple[DevicePattern, ...] = GPU_DEVICE_NODES,
    libraries: tuple[LibraryPattern, ...] = GPU_RUNTIME_LIBRARIES,
) -> ImportReport:
    """Import ``module`` in a fresh ``python`` process and report what it did.

    An import that raises, dies or outlives ``timeout`` seconds is a report with ``error`` set
    (the exception's last line; a timeout kills the probe's whole process group). Raises
    ImportProbeError when the probe itself cannot run.
    """
    if not all(part.isidentifier() for part in module.split(".")):
        raise ImportProbeError(f"{module!r} is not a module name")
    try:
        proc = subprocess.Popen(
            [python, "-B", "-S", "-c", _PROBE.read_text(encoding="utf-8"), module],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group, so a timeout can kill all of it
        )
    except OSError as e:
        raise ImportProbeError(f"cannot run {python}: {e.strerror or e}") from None
    try:
        out, err, timed_out = _collect(proc, timeout)
    finally:
        _kill_group(proc.pid)  # a timed-out import, and whatever any import left running
        proc.wait()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
    return _report(module, python, out, err, proc.returncode, timeout if timed_out else None, devices, libraries)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # nothing left of it
        os.killpg(pgid, signal.SIGKILL)


def _collect(proc: subprocess.Popen[bytes], timeout: float) -> tuple[bytes, bytes, bool]:
    """The probe's stdout and the tail of its stderr, and whether ``timeout`` ran out first.

    Done once stdout is closed and the probe has exited: a daemon the import started may hold
    stderr open for ever, and is not waited for.
    """
    assert proc.stdout is not None and proc.stderr is not None
    deadline = time.monotonic() + timeout
    out: list[bytes] = []
    err = bytearray()
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        selector.register(proc.stderr, selectors.EVENT_READ)
        while selector.get_map():
            stdout_open = proc.stdout in (key.fileobj for key in selector.get_map().values())
            if not stdout_open and proc.poll() is not None:
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return b"".join(out), bytes(err), True
            for key, _ in selector.select(timeout=min(remaining, 0.1) if not stdout_open else remaining):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fileobj)
                elif key.fileobj is proc.stdout:
                    out.append(chunk)
                else:  # only the last line is ever shown: keep a bounded tail
                    err += chunk
                    del err[:-_STDERR_TAIL]
    return b"".join(out), bytes(err), False


def _report(
    module: str,
    python: str,
    out: bytes,
    err: bytes,
    returncode: int | None,
    timed_out: float | None,
    devices: tuple[DevicePattern, ...],
    libraries: tuple[LibraryPattern, ...],
) -> ImportReport:
    """The report of one probe from its output; ``timed_out`` is the timeout it outlived (None if it did not)."""
    ready = False
    active: list[str] = []
    started: set[str] = set()
    for raw in out.split(b"\n"):
        line = raw.decode("utf-8", "surrogateescape")
        if line == "ready":
            ready = True
        elif line.startswith("+"):
            active.append(line[1:])
            started.add(line[1:])
        elif line.startswith("-") and line[1:] in active:
            del active[len(active) - 1 - active[::-1].index(line[1:])]
        elif line.startswith("="):
            with contextlib.suppress(ValueError):  # cut short by a kill: as if never written
                return _from_result(json.loads(line[1:]), devices, libraries)
    where = f" while importing {' -> '.join(active)}" if active else ""
    if timed_out is not None:
        error = f"timed out after {timed_out:g} s{where}; its process group was killed"
        return ImportReport(module=module, seconds=timed_out, modules_loaded=len(started), error=error, timed_out=True)
    if not ready:
        last = err.decode("utf-8", "replace").strip().splitlines()
        detail = last[-1] if last else f"exit status {returncode}"
        raise ImportProbeError(f"the import probe could not run in {python} (it needs Python 3.7+): {detail}")
    if returncode is not None and returncode < 0:
        try:
            how = f"died of {signal.Signals(-returncode).name}"
        except ValueError:
            how = f"died of signal {-returncode}"
    else:
        how = f"exited with status {returncode}"
    return ImportReport(module=module, seconds=0.0, modules_loaded=len(started), error=f"the interpreter {how}{where}")


def _origin(entry: dict[str, Any]) -> Origin:
    return Origin(str(entry["module"]), tuple(str(m) for m in entry["chain"]))


def _from_result(
    data: dict[str, Any], devices: tuple[DevicePattern, ...], libraries: tuple[LibraryPattern, ...]
) -> ImportReport:
    module = str(data["module"])
    return ImportReport(
        module=module,
        seconds=max(float(data["seconds"]), 0.0),
        modules_loaded=int(data["modules_loaded"]),
        heaviest=tuple(ModuleTime(str(m), max(float(s), 0.0)) for m, s in data["times"] if m != module)[:_HEAVIEST],
        device_files=tuple(
            DeviceFile(
                path=str(d["path"]),
                opened_by=_origin(d),
                still_open=bool(d["open"]),
                gpu_vendor=gpu_vendor(str(d["path"]), devices),
            )
            for d in data["devices"]
        ),
        threads=tuple(Started(_origin(t), int(t["count"])) for t in data["threads"]),
        processes=tuple(Started(_origin(p), int(p["count"])) for p in data["processes"] if p["count"]),
        shared_libraries=tuple(
            SharedLibrary(str(lib["path"]), _origin(lib), is_gpu_runtime(str(lib["path"]), libraries))
            for lib in data["libraries"]
        ),
        error=data["error"],
    )

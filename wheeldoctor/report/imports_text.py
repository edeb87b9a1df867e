"""``wheeldoctor imports`` results -> a short table per module (rich on a terminal, plain when piped)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from wheeldoctor.probes.imports import Origin, Started
from wheeldoctor.report import inert
from wheeldoctor.results.imports import ImportsResult, ImportVerdict

if TYPE_CHECKING:  # rich is imported only when a table is drawn
    from rich.console import Console

_HEAVIEST_SHOWN = 5


def origin(who: Origin) -> str:
    """``leaf (a -> b -> leaf)``: the module named, then how the import got there."""
    if len(who.chain) <= 1:
        return who.module
    return f"{who.module} ({' -> '.join(who.chain)})"


def _started(items: tuple[Started, ...]) -> str:
    total = sum(s.count for s in items)
    if not total:
        return "none"
    return f"{total}: " + "; ".join(f"{s.count} by {origin(s.by)}" for s in items)


def verdict_line(verdict: ImportVerdict) -> str:
    """``MODULE: ok`` or ``MODULE: FAILED (forbidden: gpu-init; error)``."""
    problems = []
    if verdict.forbidden:
        problems.append("forbidden: " + ", ".join(e.value for e in verdict.forbidden))
    if verdict.report.error is not None:
        problems.append("error")
    return f"{verdict.report.module}: " + (f"FAILED ({'; '.join(problems)})" if problems else "ok")


def rows(verdict: ImportVerdict) -> list[tuple[str, str]]:
    """The table's rows for one module: (what, detail)."""
    r = verdict.report
    out = [("time", f"{r.seconds:.3f} s, {r.modules_loaded} modules loaded")]
    if r.heaviest:
        out.append(
            ("heaviest", ", ".join(f"{t.module} {t.seconds * 1000:.1f} ms" for t in r.heaviest[:_HEAVIEST_SHOWN]))
        )
    gpu = r.gpu_initialized_by
    out.append(("gpu driver", f"initialised by {origin(gpu)}" if gpu is not None else "not initialised"))
    by_origin: dict[Origin, list[str]] = {}
    for d in r.open_device_files:
        by_origin.setdefault(d.opened_by, []).append(d.path + (f" [{d.gpu_vendor}]" if d.gpu_vendor else ""))
    for who, paths in by_origin.items():
        out.append(("device files", f"{', '.join(paths)} opened by {origin(who)}"))
    out.append(("threads", _started(r.threads)))
    out.append(("processes", _started(r.processes)))
    gpu_libs = [lib for lib in r.shared_libraries if lib.gpu_runtime]
    out.append(("libraries", f"{len(r.shared_libraries)} new shared libraries, {len(gpu_libs)} of a GPU runtime"))
    out.extend(("gpu library", f"{lib.path} loaded by {origin(lib.loaded_by)}") for lib in gpu_libs)
    if r.error is not None:
        out.append(("error", r.error))
    return out


def render_plain(result: ImportsResult) -> Iterable[str]:
    """Plain lines: a verdict line per module, then its rows indented; untrusted text made inert."""
    return inert.lines(_plain(result))


def _plain(result: ImportsResult) -> Iterable[str]:
    for verdict in result.verdicts:
        yield verdict_line(verdict)
        table = rows(verdict)
        width = max(len(what) for what, _ in table)
        for what, detail in table:
            yield f"  {what.ljust(width)}  {detail}"
    failed = sum(1 for v in result.verdicts if v.failed)
    yield f"{len(result.verdicts)} module(s) imported with {result.python}, {failed} failed" + (
        f" (forbidden: {', '.join(result.forbid.tokens())})" if result.forbid.tokens() else ""
    )


def render_rich(result: ImportsResult, console: Console) -> None:
    """A table per module on a terminal."""
    from rich.table import Table
    from rich.text import Text

    for verdict in result.verdicts:
        style = "bold red" if verdict.failed else "green"
        table = Table(
            title=Text(inert.text(verdict_line(verdict))), title_style=style, title_justify="left", show_header=False
        )
        table.add_column("what", style="bold")
        table.add_column("detail", overflow="fold")
        for what, detail in rows(verdict):
            # Text, not markup: "[nvidia]" and module names are data.
            row_style = "red" if what == "error" else None
            table.add_row(Text(inert.text(what)), Text(inert.text(detail)), style=row_style)
        console.print(table)
    for line in list(render_plain(result))[-1:]:
        console.print(line, markup=False)

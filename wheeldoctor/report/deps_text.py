"""``deps`` and ``doctor`` results -> text for people: plain lines when piped, tables on a terminal.

Lines read like every other finding: ``subject: code: what is wrong (wanted …, found …)``,
then ``Tip:`` lines with the exact commands, in the order to run them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from wheeldoctor.judge.compat import CompatibilityFinding
from wheeldoctor.judge.deps import DependencyConflict
from wheeldoctor.judge.duplicates import Duplicate
from wheeldoctor.report.finding_text import cleanup_tips
from wheeldoctor.results.deps import DepsResult

if TYPE_CHECKING:  # rich is imported only when a table is drawn
    from rich.console import Console
    from rich.table import Table

if TYPE_CHECKING:
    # Only doctor renders check results: deps must not import the file verifier.
    from wheeldoctor.results.check import DoctorResult


def conflict_line(conflict: DependencyConflict) -> str:
    """``a 1.0: WD041: requires b>=2, but b 1.0 is installed (wanted b>=2, found b 1.0)``."""
    return (
        f"{conflict.dist} {conflict.version}: {conflict.code.value}: {conflict.message} "
        f"(wanted {conflict.wanted}, found {conflict.found})"
    )


def duplicate_line(duplicate: Duplicate) -> str:
    """``foo: WD050: 2 dist-infos; Python uses …; stale: …``."""
    return f"{duplicate.name}: {duplicate.code.value}: {duplicate.message}"


def compatibility_line(finding: CompatibilityFinding) -> str:
    """``bar 1.0: WD030: requires Python >=3.12, the target is 3.11.7 (expected …, found …)``."""
    parts = [f"{label} {value}" for label, value in (("expected", finding.expected), ("found", finding.found)) if value]
    evidence = f" ({', '.join(parts)})" if parts else ""
    return f"{finding.dist} {finding.version}: {finding.code.value}: {finding.message}{evidence}"


def summary(result: DepsResult) -> str:
    """``N distributions, M requirements: …`` with every count, zero included."""
    deps = result.dependencies
    stale = sum(1 for d in result.duplicates if d.failing)
    return (
        f"{deps.distributions} distribution(s), {deps.requirements} requirement(s): "
        f"{len(deps.conflicts)} dependency conflict(s) ({len(deps.pip_comparable())} of them pip check's too), "
        f"{len(result.duplicates)} duplicated project(s) ({stale} with stale dist-infos), "
        f"{len(result.compatibility)} compatibility finding(s)"
    )


def tips(result: DepsResult) -> list[str]:
    """The commands that fix what was found: duplicates first (they decide what is installed)."""
    env = result.environment
    repairs = result.repairs
    lines = []
    for duplicate in result.duplicates:
        cleanup = repairs.duplicate(duplicate)
        commands = cleanup.remedy
        if duplicate.failing:
            lines.extend(
                cleanup_tips(
                    duplicate.name, duplicate.active.location, duplicate.keep.version, commands, cleanup.refused
                )
            )
        for location, command in cleanup.elsewhere.items():
            if command is None:
                lines.append(
                    f"Tip: {duplicate.name}: the copy in {location} was installed by another tool; "
                    "remove it with that tool if it is not needed"
                )
            else:
                lines.append(f"Tip: {duplicate.name}: Python never imports the copy in {location}; optional: {command}")
    for refit in repairs.refits:
        why = f"{refit.name} {refit.version} does not fit this interpreter"
        fresh = refit.command if refit.refused is None else f"no command: {refit.refused}"
        lines.append(f"Tip: {why}; let the installer pick a build that does: {fresh}")
    if repairs.install is not None:
        lines.append(f"Tip: ask the installer for everything wanted at once: {repairs.install}")
    if repairs.breaks_system_packages:
        lines.append(
            f"Note: {env.python} is EXTERNALLY-MANAGED (PEP 668), so these pip and uv commands carry "
            "--break-system-packages; prefer the system package manager or a venv"
        )
    return lines


def render_plain(result: DepsResult, *, header: bool = True) -> Iterable[str]:
    """Plain lines for pipes and logs: one per finding, then notes, the summary and tips."""
    if header:
        yield f"environment: {result.environment.label}"
    yield from (conflict_line(c) for c in result.dependencies.conflicts)
    yield from (duplicate_line(d) for d in result.duplicates)
    yield from (compatibility_line(f) for f in result.compatibility)
    yield from (f"note: {n}" for n in result.notes)
    yield summary(result)
    yield from tips(result)


def render_rich(result: DepsResult, console: Console, *, header: bool = True) -> None:
    """Tables of conflicts, duplicates and compatibility findings, then the summary and tips."""
    from wheeldoctor.report.inert import markup as escape  # inert, and never markup

    if header:
        console.print(f"[bold]environment:[/] {escape(result.environment.label)}")
    conflicts = result.dependencies.conflicts
    if conflicts:
        table = _table("distribution", "code", "requirement", "wanted", "found")
        for c in conflicts:
            via = f" (extra {c.via_extra!r} for {', '.join(c.requested_by)})" if c.via_extra else ""
            row = (f"{c.dist} {c.version}", c.code.value, c.requirement + via, c.wanted, c.found)
            table.add_row(*(escape(v) for v in row), style="red")
        console.print(table)
    if result.duplicates:
        table = _table("project", "code", "used by Python", "stale", "shadowed")
        for d in result.duplicates:
            row = (
                d.name,
                d.code.value,
                f"{d.active.path} ({d.active.version})",
                "\n".join(f"{s.path} ({s.version})" for s in d.stale),
                "\n".join(f"{s.path} ({s.version})" for s in d.shadowed),
            )
            table.add_row(*(escape(v) for v in row), style="red" if d.failing else "yellow")
        console.print(table)
    if result.compatibility:
        table = _table("distribution", "code", "problem", "expected", "found")
        for f in result.compatibility:
            row = (f"{f.dist} {f.version}", f.code.value, f.message, f.expected or "", f.found or "")
            table.add_row(*(escape(v) for v in row), style="red")
        console.print(table)
    for note in result.notes:
        console.print(f"[yellow]note:[/] {escape(note)}", soft_wrap=True)
    console.print(f"[{'green' if result.healthy else 'bold red'}]{escape(summary(result))}[/]")
    for tip in tips(result):
        console.print(f"[cyan]{escape(tip)}[/]", soft_wrap=True)


def _table(*columns: str) -> Table:
    from rich.table import Table

    table = Table(show_lines=False, header_style="bold")
    for column in columns:
        table.add_column(column, overflow="fold", min_width=len(column))  # a header is never split
    return table


def doctor_verdict(result: DoctorResult) -> str:
    """The one line that ends a doctor report."""
    if result.healthy:
        return "doctor: healthy"
    failed = list(result.check.failing_parts)
    failed += [
        name
        for name, ok in (
            ("dependencies", not result.deps.dependencies.conflicts),
            ("duplicates", not any(d.failing for d in result.deps.duplicates)),
            ("compatibility", not result.deps.compatibility),
        )
        if not ok
    ]
    return f"doctor: problems in {', '.join(failed)}"


def render_doctor_plain(
    result: DoctorResult, show_accepted: bool = False, header: bool = True, verbose: bool = False
) -> Iterable[str]:
    """The check report (``header``: with its environment line), then the deps report, then one verdict."""
    from wheeldoctor.report import text

    yield from text.render_plain(result.check, show_accepted=show_accepted, header=header, verbose=verbose)
    yield from render_plain(result.deps, header=False)
    yield doctor_verdict(result)


def render_doctor_rich(
    result: DoctorResult, console: Console, show_accepted: bool = False, verbose: bool = False, header: bool = True
) -> None:
    """The check tables (``header``: with the environment line), then the deps tables, then one verdict."""
    from wheeldoctor.report import check_table
    from wheeldoctor.report.inert import markup as escape  # inert, and never markup

    check_table.render_rich(result.check, console, show_accepted=show_accepted, verbose=verbose, header=header)
    render_rich(result.deps, console, header=False)
    console.print(f"[{'green' if result.healthy else 'bold red'}]{escape(doctor_verdict(result))}[/]")

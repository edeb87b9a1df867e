"""Results -> text for people: a rich table on a terminal, plain lines when piped.

A finding reads ``subject: code: path what is wrong (expected …, found …)``, followed by
``Tip:`` lines with the exact command that repairs it.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from wheeldoctor.findings import Finding
from wheeldoctor.repair import reinstall_command
from wheeldoctor.results import CheckResult
from wheeldoctor.verify import DistributionReport, Status

_STYLE = {
    Status.INTACT: "green",
    Status.BROKEN: "bold red",
    Status.UNVERIFIABLE: "yellow",
    Status.NOT_INSTALLED: "red",
}


def subject(report: DistributionReport) -> str:
    """``name version`` as findings are introduced."""
    return f"{report.name} {report.version}" if report.version else report.name


def evidence(finding: Finding) -> str:
    """``(expected …, found …)``, or empty when there is no evidence to show."""
    parts = []
    if finding.expected is not None:
        parts.append(f"expected {finding.expected}")
    if finding.found is not None:
        parts.append(f"found {finding.found}")
    return f" ({', '.join(parts)})" if parts else ""


def finding_line(report: DistributionReport, finding: Finding) -> str:
    """The one-line plain form of a finding."""
    where = f"{finding.path} " if finding.path else ""
    return f"{subject(report)}: {finding.code.value}: {where}{finding.message}{evidence(finding)}"


def tips(result: CheckResult) -> list[str]:
    """One repair command per broken distribution."""
    lines = []
    for report in result.distributions:
        if report.status is Status.BROKEN and report.dist is not None:
            lines.append(f"Tip: {reinstall_command(report.dist, result.environment.python)}")
        elif report.status is Status.NOT_INSTALLED:
            lines.append(f"Tip: {report.name} is not installed in {result.environment.label}")
    return lines


def summary(result: CheckResult) -> str:
    """``N checked: a intact, b broken, …`` with only the non-zero counts."""
    counts: dict[Status, int] = {}
    for report in result.distributions:
        counts[report.status] = counts.get(report.status, 0) + 1
    parts = [f"{n} {status.value}" for status, n in sorted(counts.items(), key=lambda kv: list(Status).index(kv[0]))]
    findings = sum(len(r.findings) for r in result.distributions)
    return f"{len(result.distributions)} checked: {', '.join(parts) or 'nothing'}; {findings} finding(s)"


def render_plain(result: CheckResult) -> Iterable[str]:
    """Plain lines for pipes and logs: one per finding, then the summary and tips."""
    yield f"environment: {result.environment.label}"
    for report in result.distributions:
        if report.status is Status.NOT_INSTALLED:
            yield f"{report.name}: not installed"
        for finding in report.findings:
            yield finding_line(report, finding)
    yield summary(result)
    yield from tips(result)


def render_rich(result: CheckResult, console: Console) -> None:
    """A table of findings per environment, then the summary and tips."""
    console.print(f"[bold]environment:[/] {escape(result.environment.label)}")
    problems = [r for r in result.distributions if r.findings or r.status is Status.NOT_INSTALLED]
    if problems:
        table = Table(show_lines=False, header_style="bold")
        for column in ("distribution", "code", "path", "problem", "expected", "found"):
            table.add_column(column, overflow="fold")
        for report in problems:
            style = _STYLE[report.status]
            if report.status is Status.NOT_INSTALLED:
                table.add_row(f"[{style}]{escape(report.name)}[/]", "", "", "not installed", "", "")
            for f in report.findings:
                table.add_row(
                    f"[{style}]{escape(subject(report))}[/]",
                    f.code.value,
                    escape(f.path or ""),
                    escape(f.message),
                    escape(f.expected or ""),
                    escape(f.found or ""),
                )
        console.print(table)
    style = "green" if result.healthy else "bold red"
    console.print(f"[{style}]{escape(summary(result))}[/]")
    for tip in tips(result):
        console.print(f"[cyan]{escape(tip)}[/]", soft_wrap=True)

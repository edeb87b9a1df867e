"""A check result -> the terminal: a block per clash pair, then a table of the other findings where it
fits, one line per finding where not.

No column wraps a digest, a code or a header: digests are abbreviated in the table
(``--verbose``: whole), and when the table would not fit the console each finding is one
word-wrapped line, as the plain report (:mod:`wheeldoctor.report.text`) writes it. A clash
pair's findings are its block (:mod:`wheeldoctor.report.clash_text`): a count and a few
example paths, every one with ``--verbose``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wheeldoctor.judge.clash import Relation
from wheeldoctor.judge.files import DistributionReport, Status
from wheeldoctor.model.findings import Finding
from wheeldoctor.report import hooks_text, native_text
from wheeldoctor.report.clash_text import PairBlock, grouped, pair_blocks, pair_line, pair_tips, side_lines
from wheeldoctor.report.finding_text import accepted_note, shown, subject
from wheeldoctor.report.text import finding_lines, managed_lines, pair_failure_lines, policy_lines, summary, tips
from wheeldoctor.results.check import CheckResult

if TYPE_CHECKING:  # rich is imported only when a table is drawn
    from rich.console import Console

_STYLE = {
    Status.INTACT: "green",
    Status.BROKEN: "bold red",
    Status.UNVERIFIABLE: "yellow",
    Status.NOT_INSTALLED: "red",
    Status.OVERLAID: "cyan",
    Status.ACCEPTED: "green",
}

#: How much of a digest the terminal table shows (``sha256=`` and this many characters, then ``…``).
DIGEST_SHOWN = 10
_NARROWEST = {"path": 16, "problem": 16}
"""The least a folding column gets before the table falls back to one line per finding."""


def short_digest(value: str) -> str:
    """``sha256=N7i6c7XGaY…`` for a digest as RECORD writes it; anything else unchanged."""
    algorithm, sep, digest = value.partition("=")
    if not sep or not algorithm.isalnum() or len(digest) <= DIGEST_SHOWN + 1 or " " in digest:
        return value
    return f"{algorithm}={digest[:DIGEST_SHOWN]}…"


def _table_rows(
    result: CheckResult, show_accepted: bool, verbose: bool, blocked: frozenset[tuple[str, Finding]]
) -> list[tuple[DistributionReport, tuple[str, ...]]]:
    """The table's cells, unescaped: one row per shown finding not in a clash block (``blocked``),
    digests abbreviated unless ``verbose``."""
    digest = (lambda v: v) if verbose else short_digest
    out: list[tuple[DistributionReport, tuple[str, ...]]] = []
    for report in result.distributions:
        if report.status is Status.NOT_INSTALLED:
            out.append((report, (report.name, "", "", "not installed", "", "")))
        for f in report.findings:
            if shown(f, show_accepted) and (report.name, f) not in blocked:
                cells = (
                    subject(report),
                    f.code.value,
                    f.path or "",
                    f.message + accepted_note(f),
                    digest(f.expected or ""),
                    digest(f.found or ""),
                )
                out.append((report, cells))
    return out


_COLUMNS = ("distribution", "code", "path", "problem", "expected", "found")


def _table_fits(rows: list[tuple[str, ...]], width: int) -> bool:
    """Whether the table fits ``width`` with no digest, code or header wrapped (rich's borders and padding counted)."""
    needed = 1 + 3 * len(_COLUMNS)
    for index, column in enumerate(_COLUMNS):
        widest = max([len(column), *(len(r[index]) for r in rows)])
        needed += min(widest, _NARROWEST.get(column, widest)) if column in _NARROWEST else widest
    return needed <= width


def render_rich(
    result: CheckResult, console: Console, show_accepted: bool = False, verbose: bool = False, header: bool = True
) -> None:
    """The environment (``header``), a block per clash pair, a table of the other findings, the summary, tips.

    Digests are abbreviated in the table (``verbose``: in full, and every finding of a clash
    block listed); no column wraps a digest, a code or a header: where the table would not fit
    the console, each finding is one line, word-wrapped, as the plain report writes it.
    """
    from wheeldoctor.report.inert import markup as escape  # inert, and never markup

    if header:
        console.print(f"[bold]environment:[/] {escape(result.environment.label)}")
    for line in managed_lines(result):
        console.print(escape(line), soft_wrap=True)
    blocks = pair_blocks(result)
    for block in blocks:
        _print_block(block, result, console, verbose)
    _print_findings(result, console, show_accepted, verbose, grouped(blocks))
    for line in pair_failure_lines(result):
        console.print(f"[bold red]{escape(line)}[/]", overflow="fold")
    for pair in result.pairs:
        if pair.relation is Relation.OVERLAY and pair.settled:
            console.print(f"[cyan]{escape(pair_line(pair))}[/]", overflow="fold")
    for line in hooks_text.hook_lines(result.hooks):
        console.print(f"[{'bold red' if ': WD07' in line else 'dim'}]{escape(line)}[/]", overflow="fold")
    for line in hooks_text.unowned_lines(result.unowned, show=result.show_unowned):
        console.print(f"[{'bold red' if ': WD07' in line else 'dim'}]{escape(line)}[/]", overflow="fold")
    failing = {f"{native_text.subject(f)}: {f.finding.code.value}:" for f in result.failing_native}
    for line in native_text.native_lines(result.native, show_accepted=show_accepted):
        console.print(f"[{'bold red' if line.startswith(tuple(failing)) else 'dim'}]{escape(line)}[/]", overflow="fold")
    style = "green" if result.healthy else "bold red"
    console.print(f"[{style}]{escape(summary(result))}[/]")
    for line in policy_lines(result):
        console.print(escape(line), overflow="fold")
    # Tips stay whole lines (soft wrap): they are commands and rules to copy.
    for tip in [*tips(result), *hooks_text.hook_tips(result.hooks)]:
        console.print(f"[cyan]{escape(tip)}[/]", soft_wrap=True)


def _print_block(block: PairBlock, result: CheckResult, console: Console, verbose: bool) -> None:
    """A clash pair's block: its line, its tips whole (commands to copy), each side's count and examples."""
    from wheeldoctor.report.inert import markup as escape  # inert, and never markup

    console.print(f"[bold yellow]{escape(pair_line(block.pair))}[/]", overflow="fold")
    for tip in pair_tips(block.pair, result):
        if tip.startswith("Note:"):  # words, wrapped
            console.print(escape(tip), overflow="fold")
        else:  # a command to copy: one whole line
            console.print(f"[cyan]{escape(tip)}[/]", soft_wrap=True)
    for side in block.sides:
        style = _STYLE[side.report.status]
        for line in side_lines(side, verbose):
            console.print(f"[{'dim' if line.startswith('  ') else style}]{escape(line)}[/]", overflow="fold")


def _print_findings(
    result: CheckResult,
    console: Console,
    show_accepted: bool,
    verbose: bool,
    blocked: frozenset[tuple[str, Finding]],
) -> None:
    """The findings no clash block shows: a table where it fits, else one word-wrapped line each."""
    from rich.table import Table

    from wheeldoctor.report.inert import markup as escape  # inert, and never markup

    rows = _table_rows(result, show_accepted, verbose, blocked)
    if rows and _table_fits([cells for _, cells in rows], console.width):
        table = Table(show_lines=False, header_style="bold")
        for column in _COLUMNS:
            folds = column in _NARROWEST
            table.add_column(
                column,
                overflow="fold",
                no_wrap=not folds,
                min_width=_NARROWEST[column] if folds else len(column),
            )
        for report, cells in rows:
            style = _STYLE[report.status]
            table.add_row(f"[{style}]{escape(cells[0])}[/]", *(escape(c) for c in cells[1:]))
        console.print(table)
    elif rows:
        for report, plain in finding_lines(result, show_accepted, blocked):
            console.print(f"[{_STYLE[report.status]}]{escape(plain)}[/]", overflow="fold")

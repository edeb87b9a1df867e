"""Cases -> GitHub Actions workflow commands (annotations) and a job-summary in Markdown.

RECORD paths come from the packages being scanned, so every value is escaped exactly as
the Actions toolkit does (``@actions/core``'s ``escapeData``/``escapeProperty``): a path
cannot end the command early or start another one. site-packages lies outside the
workspace, so the distribution, code and path go in ``title=``, never ``file=``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from wheeldoctor.report import inert
from wheeldoctor.report.cases import Cases

#: The job summary is appended to a file GitHub caps at 1 MiB per step; stay well under it.
SUMMARY_LIMIT = 256 * 1024


escape_data = inert.escape_data
escape_property = inert.escape_property


def workflow_command(name: str, properties: dict[str, str | None], message: str, *more: str) -> str:
    """``::name key=value,key=value::message``; empty properties are left out, as the toolkit does.

    Values are made inert first (:mod:`wheeldoctor.report.inert`): no escape sequence reaches
    the log, and a line break inside a value shows as ``\\n``. The lines ``more`` follow
    ``message`` on lines of the annotation's own (``%0A``), still on one line of the log.
    """
    given = ",".join(f"{key}={inert.github_property(value)}" for key, value in properties.items() if value)
    data = "\n".join(inert.text(line) for line in (message, *more))
    return f"::{name}{' ' + given if given else ''}::{inert.escape_data(data)}"


def render(cases: Cases) -> Iterator[str]:
    """One ``::error`` (fails the run) or ``::warning`` per item, its ``Tip:`` (the repair) on a second line;
    then a plain summary line."""
    errors = warnings = 0
    for case, item in cases.items():
        title = f"{case.subject}: {item.rule}" + (f": {item.path}" if item.path else "")
        # The tip's own lines (an accept rule to paste) are the report's: its values are quoted inside.
        tip = f"Tip: {item.tip}".split("\n") if item.tip else []
        yield workflow_command(item.level, {"title": title}, f"{case.subject}: {item.line()}", *tip)
        if item.level == "error":
            errors += 1
        else:
            warnings += 1
    verdict = "healthy" if cases.healthy else "problems found"
    where = f" in {cases.environment}" if cases.environment else ""
    if cases.config is not None:
        yield inert.text(f"config: {cases.config}")
    # A plain line, not a command: inert, so a path with a newline cannot start a command line.
    yield inert.text(f"wheeldoctor {cases.command}{where}: {verdict}: {errors} error(s), {warnings} warning(s)")


def _cell(value: str) -> str:
    """Text safe in Markdown: no HTML, link, image, emphasis, column break or line break."""
    return inert.markdown(value)


def summary(runs: Iterable[Cases], limit: int = SUMMARY_LIMIT) -> str:
    """A Markdown job summary: a table per command (per check for ``doctor``), at most ``limit`` bytes.

    A repair of several lines (an accept rule to paste) cannot sit in a table cell: its cell
    names it, and the rules follow the tables in a TOML code block, to be copied as they are.
    Rows that do not fit are counted, and the count is the last line.
    """
    head: list[str] = []
    tables: list[tuple[str, list[str]]] = []
    rules: list[str] = []
    for run in runs:
        verdict = "healthy" if run.healthy else "**problems found**"
        where = f" in {_cell(run.environment)}" if run.environment else ""
        head.append(f"### wheeldoctor {run.command}{where}: {verdict}")
        if run.config is not None:
            head.append(f"config: {_cell(run.config)}")
        for suite in dict.fromkeys(c.suite for c in run.cases):
            cases = [c for c in run.cases if c.suite == suite]
            failing = sum(c.failing for c in cases)
            title = f"**{suite}**: {len(cases)} checked, {failing} failing"
            rows = []
            for case in cases:
                for item in case.items:
                    repair = _repair_cell(item.tip, rules)
                    rows.append(
                        f"| {item.level} | {_cell(case.subject)} | {_cell(item.rule)} | {_cell(item.path or '')} "
                        f"| {_cell(item.message)} | {repair} |"
                    )
            tables.append((title, rows))
    out = ["\n".join(head)]
    size = len(out[0].encode())
    cut = 0
    block = _rules_block(rules)
    reserve = 200 + len(block.encode())  # the closing count line, and the rules the rows point to
    for title, rows in tables:
        lines = [f"\n{title}\n"]
        if rows:
            lines.append(
                "| level | distribution | code | path | problem | repair |\n| --- | --- | --- | --- | --- | --- |"
            )
        cost = sum(len(b.encode()) + 1 for b in lines)
        if cut or size + cost > limit - reserve:
            cut += len(rows)
            continue
        out.extend(lines)
        size += cost
        for index, row in enumerate(rows):
            row_size = len(row.encode()) + 1
            if size + row_size > limit - reserve:
                cut += len(rows) - index
                break
            out.append(row)
            size += row_size
    if block and size + len(block.encode()) <= limit - 200:
        out.append(block)
    if cut:
        out.append(
            f"\n{cut} more row(s) not shown: the summary stays under {limit // 1024} KiB; the step log "
            "and the report file have them all."
        )
    return "\n".join(out) + "\n"


def _repair_cell(tip: str | None, rules: list[str]) -> str:
    """A repair in a table cell: one line as it is; a rule of several lines by its number, added to ``rules``."""
    if not tip:
        return ""
    first, _, rest = tip.partition("\n")
    if not rest:
        return _cell(first)
    rules.append(rest)
    return f"{_cell(first)} rule {len(rules)} below"


def _rules_block(rules: list[str]) -> str:
    """The accept rules the table points to, numbered, in one TOML block to copy (empty when none).

    Each line is inert and the rules' strings are TOML basic strings (ASCII, no line break), so
    no line can close the fence or start Markdown.
    """
    if not rules:
        return ""
    body = "\n\n".join(
        f"# rule {i}\n" + "\n".join(inert.text(line) for line in rule.split("\n")) for i, rule in enumerate(rules, 1)
    )
    intro = "**Accept rules**: read each hook first; to trust exactly its bytes, add its rule to pyproject.toml:"
    return f"\n{intro}\n\n```toml\n{body}\n```"

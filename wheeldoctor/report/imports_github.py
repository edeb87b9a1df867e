"""``imports`` results -> GitHub Actions annotations: one per module that failed, then a summary line."""

from __future__ import annotations

from collections.abc import Iterator

from wheeldoctor.report import inert
from wheeldoctor.report.github import workflow_command
from wheeldoctor.report.imports_text import rows, verdict_line
from wheeldoctor.results.imports import ImportsResult


def render(result: ImportsResult) -> Iterator[str]:
    """``::error`` per failing module with what it did (escaped as the Actions toolkit does), then a verdict."""
    for verdict in result.verdicts:
        if not verdict.failed:
            continue
        details = "; ".join(f"{what}: {detail}" for what, detail in rows(verdict) if what in _SHOWN)
        message = f"{verdict_line(verdict)}; {details}"
        yield workflow_command("error", {"title": f"wheeldoctor imports: {verdict.report.module}"}, message)
    failed = sum(1 for v in result.verdicts if v.failed)
    # A plain line, not a command: inert, so a path with a newline cannot start a command line.
    yield inert.text(f"wheeldoctor imports with {result.python}: {len(result.verdicts)} module(s), {failed} failed")


#: The rows an annotation carries: what ``--forbid`` judges, and the error.
_SHOWN = ("gpu driver", "device files", "threads", "processes", "error")

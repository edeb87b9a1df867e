"""A drift (``wheeldoctor diff``) -> GitHub Actions annotations: one ``::error`` per node that differs.

Every value is escaped as the Actions toolkit escapes (:func:`wheeldoctor.report.github.workflow_command`)
after :func:`wheeldoctor.report.drift_text.inert` has made control characters visible.
"""

from __future__ import annotations

from collections.abc import Iterator

from wheeldoctor.judge.drift import Drift
from wheeldoctor.report.drift_text import against, describe, deviants, node
from wheeldoctor.report.github import workflow_command


def lines(drift: Drift) -> Iterator[str]:
    """An ``::error`` for each node on each difference, then a plain summary line."""
    for difference in drift.differences:
        reference = against(drift, difference)
        for i in deviants(difference):
            title = f"wheeldoctor diff: {node(drift, i)}: {difference.kind.value}"
            yield workflow_command("error", {"title": title}, describe(difference, difference.values[i], reference))
    if drift.agree:
        yield f"wheeldoctor diff: all {len(drift.labels)} snapshots agree"
    else:
        odd = ", ".join(node(drift, i) for i in drift.odd) or "none by majority"
        yield f"wheeldoctor diff: {len(drift.differences)} difference(s); odd one(s) out: {odd}"


def render(drift: Drift) -> str:
    """The whole annotation stream."""
    return "".join(line + "\n" for line in lines(drift))

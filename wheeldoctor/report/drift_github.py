"""A drift (``wheeldoctor diff``) -> GitHub Actions annotations: one ``::error`` per node that differs.

Each node's annotation lists its differences, a line each, as the text report does. Every
value is escaped as the Actions toolkit escapes (:func:`wheeldoctor.report.github.workflow_command`)
after :func:`wheeldoctor.report.inert.text` has made control characters visible.
"""

from __future__ import annotations

from collections.abc import Iterator

from wheeldoctor.judge.drift import Drift
from wheeldoctor.report.drift_text import node, node_lines, summary
from wheeldoctor.report.github import workflow_command


def lines(drift: Drift) -> Iterator[str]:
    """An ``::error`` for each node that differs, its differences on the annotation's lines; then the summary."""
    for index, differences in drift.by_node():
        told = node_lines(drift, index, differences)
        title = f"wheeldoctor diff: {node(drift, index)}: {len(told)} difference(s)"
        yield workflow_command("error", {"title": title}, *told)
    yield f"wheeldoctor diff: {summary(drift)}"


def render(drift: Drift) -> str:
    """The whole annotation stream."""
    return "".join(line + "\n" for line in lines(drift))

"""A drift (``wheeldoctor diff``) -> plain text: one line per node that differs, then a summary.

Names, versions, paths and digests come from snapshots made on other machines: every value
is made inert (:func:`wheeldoctor.report.inert.text`) before it reaches a terminal or a CI log.
"""

from __future__ import annotations

from collections.abc import Iterator

from wheeldoctor.judge.drift import Difference, Drift, DriftKind
from wheeldoctor.report.inert import text as inert


def node(drift: Drift, index: int) -> str:
    """A node as the report names it: its file, and its host where that says more."""
    label, host = drift.labels[index], drift.hosts[index]
    return inert(label if host in ("", label) else f"{label} ({host})")


def against(drift: Drift, difference: Difference) -> str:
    """Whom a differing node is described against: the majority, else the first node compared."""
    if difference.odd:
        return "the others"
    first = difference.compared.index(True)
    return node(drift, first)


def deviants(difference: Difference) -> tuple[int, ...]:
    """The nodes a difference is told for: the odd ones, else every compared node unlike the reference."""
    if difference.odd:
        return difference.odd
    return tuple(
        i
        for i, (v, c) in enumerate(zip(difference.values, difference.compared, strict=True))
        if c and v != difference.reference
    )


def describe(difference: Difference, value: str | None, reference: str) -> str:
    """What one node has, against ``reference`` (whom it is compared with), in words."""
    subject = inert(difference.subject)
    ref = difference.reference
    kind = difference.kind
    if kind is DriftKind.DISTRIBUTION:
        if ref is None:
            return f"extra distribution {subject} {inert(value or '')} ({reference}: not installed)"
        if value is None:
            return f"missing distribution {subject} {inert(ref)} ({reference}: installed)"
        return f"{subject}: version {inert(value)} ({reference}: {inert(ref)})"
    if kind is DriftKind.FILE:
        path = inert(difference.path or "")
        return f"{subject}: file {path}: bytes differ: {inert(value or '-')} ({reference}: {inert(ref or '-')})"
    if kind is DriftKind.RECORD:
        return (
            f"{subject}: installed from another wheel: RECORD sha256 {_short(value)}"
            f" ({reference}: {_short(ref)}); intact files that differ are not named in a snapshot"
        )
    if kind is DriftKind.DISK:
        return f"{subject}: bytes on disk differ: sha256 {_short(value)} ({reference}: {_short(ref)})"
    if kind is DriftKind.HOOK:
        if value is None:
            return f"start-up hook {subject} missing ({reference}: {inert(ref or '')})"
        if ref is None:
            return f"start-up hook {subject} only here: {inert(value)}"
        return f"start-up hook {subject}: {inert(value)} ({reference}: {inert(ref)})"
    return f"{subject}: {inert(value or 'not recorded')} ({reference}: {inert(ref or 'not recorded')})"


def _short(digest: str | None) -> str:
    return inert(digest[:16]) if digest else "none"


def lines(drift: Drift) -> Iterator[str]:
    """The report: a line per node that differs on each difference, then one summary line."""
    for difference in drift.differences:
        reference = against(drift, difference)
        for i in deviants(difference):
            yield f"{node(drift, i)}: {describe(difference, difference.values[i], reference)}"
    count = len(drift.labels)
    if count == 1:  # a fleet of one node (one snapshot gathered): nothing differs, and it is said
        yield f"1 snapshot, {node(drift, 0)}: nothing to compare it with"
        return
    if drift.agree:
        yield f"all {count} snapshots agree"
        return
    summary = f"{len(drift.differences)} difference(s) between {count} snapshots"
    if drift.odd:
        summary += "; odd one(s) out: " + ", ".join(node(drift, i) for i in drift.odd)
    elif count > 2:
        summary += "; no majority"
    yield summary


def render(drift: Drift) -> str:
    """The whole text report."""
    return "".join(line + "\n" for line in lines(drift))

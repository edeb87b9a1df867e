"""A drift (``wheeldoctor diff``) -> plain text: each node that differs, its differences below it, then a summary.

Names, versions, paths and digests come from snapshots made on other machines: every value
is made inert (:func:`wheeldoctor.report.inert.text`) before it reaches a terminal or a CI log.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from wheeldoctor.judge.drift import Difference, Drift, DriftKind, Hook, Interpreter, Tags, Value
from wheeldoctor.model.snapshot import UnownedSummary
from wheeldoctor.report.inert import text as inert

#: Distributions named on the one line that folds RECORDs which differ with the Python; the rest are counted.
NAMES_SHOWN = 10


def node(drift: Drift, index: int) -> str:
    """A node as the report names it: its file, and its host where that says more."""
    label, host = drift.labels[index], drift.hosts[index]
    return inert(label if host in ("", label) else f"{label} ({host})")


def against(drift: Drift, difference: Difference) -> str:
    """Whom a differing node is described against: the reference, the majority, else the first node compared."""
    if drift.reference is not None and difference.compared[drift.reference]:
        return node(drift, drift.reference)
    if difference.odd:
        return "the others"
    return node(drift, difference.compared.index(True))


def shown(value: Value | None, missing: str = "-") -> str:
    """One node's value in words (inert)."""
    if value is None:
        return missing
    if isinstance(value, Interpreter):
        return inert(f"{value.implementation} {value.python} {value.platform}")
    if isinstance(value, Tags):
        head = value.head[0] if value.head else "none"
        return inert(f"{value.count} tags from {head} (sha256 {(value.sha256 or '')[:16]})")
    if isinstance(value, Hook):
        return inert(f"{value.kind} of {value.owner or 'nobody'}, {value.sha256 or 'unread'}")
    if isinstance(value, UnownedSummary):
        names = ", ".join(value.importable)
        return inert(f"{value.files} file(s)" + (f", importable: {names}" if names else ""))
    return inert(value)


def describe(difference: Difference, value: Value | None, reference: str) -> str:
    """What one node has, against ``reference`` (whom it is compared with), in words."""
    subject = inert(difference.subject)
    ref = difference.reference
    kind = difference.kind
    if kind is DriftKind.DISTRIBUTION:
        if ref is None:
            return f"extra distribution {subject} {shown(value)} ({reference}: not installed)"
        if value is None:
            return f"missing distribution {subject} {shown(ref)} ({reference}: installed)"
        return f"{subject}: version {shown(value)} ({reference}: {shown(ref)})"
    if kind is DriftKind.FILE:
        path = inert(difference.path or "")
        return f"{subject}: file {path} changed: {shown(value)} ({reference}: {shown(ref)})"
    if kind is DriftKind.INSTALLER:
        return f"{subject}: installed by {shown(value)} ({reference}: {shown(ref)}); its RECORD differs with it"
    if kind is DriftKind.PYTHON:
        return f"{subject}: RECORD differs with the Python ({reference} run another)"
    if kind is DriftKind.RECORD:
        return (
            f"{subject}: installed from another wheel: RECORD sha256 {_short(value)}"
            f" ({reference}: {_short(ref)}); intact files that differ are not named in a snapshot"
        )
    if kind is DriftKind.DISK:
        return f"{subject}: bytes on disk differ: sha256 {_short(value)} ({reference}: {_short(ref)})"
    if kind is DriftKind.HOOK:
        if value is None:
            return f"start-up hook {subject} missing ({reference}: {shown(ref)})"
        if ref is None:
            return f"start-up hook {subject} only here: {shown(value)}"
        return f"start-up hook {subject}: {shown(value)} ({reference}: {shown(ref)})"
    return f"{subject}: {shown(value, 'not recorded')} ({reference}: {shown(ref, 'not recorded')})"


def _short(digest: Value | None) -> str:
    return inert(digest[:16]) if isinstance(digest, str) and digest else "none"


def node_lines(drift: Drift, index: int, differences: Sequence[Difference]) -> list[str]:
    """What one node has that differs, a line each; RECORDs that differ with the Python folded into one line."""
    lines = []
    by_python = [d for d in differences if d.kind is DriftKind.PYTHON]
    for difference in differences:
        if difference.kind is DriftKind.PYTHON:
            continue
        lines.append(describe(difference, difference.values[index], against(drift, difference)))
    if by_python:
        names = ", ".join(inert(d.subject) for d in by_python[:NAMES_SHOWN])
        more = f" and {len(by_python) - NAMES_SHOWN} more" if len(by_python) > NAMES_SHOWN else ""
        lines.append(
            f"RECORD differs with the Python in {len(by_python)} distribution(s), as an installer compiles "
            f"for its interpreter: {names}{more}"
        )
    return lines


def summary(drift: Drift) -> str:
    """The last line: how many differences, and who is odd."""
    count = len(drift.labels)
    if count == 1:  # a fleet of one node (one snapshot gathered): nothing differs, and it is said
        return f"1 snapshot, {node(drift, 0)}: nothing to compare it with"
    ignored = f" ({drift.ignored} ignored)" if drift.ignored else ""
    if drift.agree:
        return f"all {count} snapshots agree{ignored}"
    line = f"{len(drift.differences)} difference(s){ignored} between {count} snapshots"
    if drift.reference is not None:
        line += f"; unlike the reference {node(drift, drift.reference)}: "
        return line + ", ".join(node(drift, i) for i, _ in drift.by_node())
    if drift.odd:
        return line + "; odd one(s) out: " + ", ".join(node(drift, i) for i in drift.odd)
    return line + ("; no majority" if count > 2 else "")


def lines(drift: Drift) -> Iterator[str]:
    """The report: each node that differs, then its differences indented below it; then the summary."""
    for index, differences in drift.by_node():
        yield f"{node(drift, index)}:"
        yield from (f"  {line}" for line in node_lines(drift, index, differences))
    yield summary(drift)


def render(drift: Drift) -> str:
    """The whole text report."""
    return "".join(line + "\n" for line in lines(drift))

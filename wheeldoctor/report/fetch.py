"""How a lock's RECORDs were had, as plain lines for stderr and as JSON: sources, bytes, notes, trust."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wheeldoctor.formats.lock_fetched import FetchedRecord, FetchSummary


def plain(text: str) -> str:
    """``text`` made inert for a terminal or a log (:func:`wheeldoctor.report.inert.text`)."""
    from wheeldoctor.report import inert

    return inert.text(text)


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover


def fetch_lines(summary: FetchSummary, fetched: Sequence[FetchedRecord], unjudged: Iterable[str] = ()) -> list[str]:
    """The summary of a fetch: bytes against the wheels' size, each note, and the trust it gives."""
    sources = ", ".join(f"{count} {source}" for source, count in summary.by_source) or "none"
    line = f"RECORDs of {summary.wheels} locked wheel(s) ({plain(sources)}): {_size(summary.fetched)} fetched"
    line += f" in {summary.requests} request(s)"
    if summary.total_size:
        share = 100 * summary.fetched / summary.total_size
        line += f", of {_size(summary.total_size)} of wheels ({share:.2f}%)"
    lines = [line]
    lines += [f"note: {plain(r.note)}" for r in fetched if r.note is not None]
    skipped = list(unjudged)
    if skipped:
        lines.append(f"not judged (no locked wheel for this target; --strict fails them): {plain(', '.join(skipped))}")
    failed = [r.wheel.filename for r in fetched if r.source == "failed"]
    if failed:
        lines.append(f"not judged (the locked wheel cannot be had, WD086): {plain(', '.join(failed))}")
    unverified = summary.unverified
    if unverified:
        lines.append(
            f"trust: {unverified} RECORD(s) came from the index by range (or a cache of such), not from a wheel "
            "whose sha256 was checked: they are only as trusted as the index and TLS. "
            "--verify-wheels downloads the wheels and checks each hash against the lock."
        )
    if summary.unhashed:
        lines.append(
            f"trust: {summary.unhashed} locked wheel(s) have no sha256 in the lock: nothing ties their RECORD(s) "
            "to the lock, so they are only as trusted as the file or index they came from "
            "(--verify-wheels has no hash to check them against)."
        )
    return lines


def fetch_json(summary: FetchSummary) -> dict[str, Any]:
    """``--lock`` (wheels, check, doctor): how the RECORDs were had, and how many are only as trusted as the index."""
    return {
        "wheels": summary.wheels,
        "bytes": summary.fetched,
        "requests": summary.requests,
        "wheels_size": summary.total_size,
        "by_source": dict(summary.by_source),
        "range_only": summary.unverified,
        "no_hash": summary.unhashed,
    }

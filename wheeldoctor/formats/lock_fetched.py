"""A locked wheel's RECORD as fetched, and the totals of a fetch: plain data the judge and the reports read.

The fetching itself (local file, cache, HTTP ranges) is :mod:`wheeldoctor.fetch.remote`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from wheeldoctor.formats.lock_model import LockedWheel
from wheeldoctor.formats.wheel_hooks import HookMember
from wheeldoctor.model.findings import Finding


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchedRecord:
    """A locked wheel's RECORD (and METADATA) as fetched, and how it was had."""

    wheel: LockedWheel
    record: bytes | None
    metadata: bytes | None
    dist_info: str | None
    """The wheel's ``NAME-VERSION.dist-info`` directory."""
    source: str
    """``local``, ``cache``, ``range`` or ``download``."""
    verified: bool
    """The whole wheel's sha256 was checked against the lock (or the cached RECORD came from such a wheel)."""
    fetched: int = 0
    """Bytes received over the network."""
    requests: int = 0
    note: str | None = None
    """Said to the user, e.g. that the server ignored Range and the whole wheel came."""
    findings: tuple[Finding, ...] = ()
    """What is wrong with the wheel itself; a RECORD with a finding here is not to be trusted."""
    hooks: tuple[HookMember, ...] = ()
    """The start-up hooks the wheel would install, their bytes read alone (bounded)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchSummary:
    """Totals over a fetch: for the report's line of bytes fetched against the wheels' size."""

    wheels: int
    fetched: int
    requests: int
    total_size: int
    """The wheels' sizes as the lock gives them (0 for a wheel whose size it does not give)."""
    by_source: tuple[tuple[str, int], ...]
    unverified: int = 0
    """RECORDs of wheels the lock gives a sha256 for, had by range (or cached from a range fetch): not checked."""
    unhashed: int = 0
    """RECORDs of wheels the lock gives no sha256 for: nothing ties them to the lock, however they came."""


def summarize(records: Sequence[FetchedRecord]) -> FetchSummary:
    """Bytes and requests over the network, against the total size the lock gives the wheels."""
    sources: dict[str, int] = {}
    for r in records:
        sources[r.source] = sources.get(r.source, 0) + 1
    return FetchSummary(
        wheels=len(records),
        fetched=sum(r.fetched for r in records),
        requests=sum(r.requests for r in records),
        total_size=sum(r.wheel.size or 0 for r in records),
        by_source=tuple(sorted(sources.items())),
        unverified=sum(not r.verified for r in records if r.record is not None and r.wheel.sha256 is not None),
        unhashed=sum(r.record is not None and r.wheel.sha256 is None for r in records),
    )

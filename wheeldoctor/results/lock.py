"""What judging an environment against its lock gave: the environment with the lock's claims, and the findings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wheeldoctor.formats.lock import Lock
    from wheeldoctor.formats.lock_fetched import FetchedRecord, FetchSummary
    from wheeldoctor.judge.locked import LockVerdict
    from wheeldoctor.model.environment import Environment


@dataclass(frozen=True, slots=True, kw_only=True)
class LockedEnvironment:
    """The environment with the lock's claims in place, what the lock found, and how RECORDs were had."""

    environment: Environment
    verdict: LockVerdict
    lock: Lock
    fetched: tuple[FetchedRecord, ...]
    summary: FetchSummary
    unjudged: tuple[str, ...] = ()
    """Selected packages with no wheel to judge (an sdist, a directory, VCS), as ``name (source)``."""
    seeded: tuple[str, ...] = ()
    """``venv``'s seed packages found installed and not in the lock, as ``name version``: not findings."""

"""``wheels --lock``: preflight what a lock would install, from the locked wheels' RECORDs alone.

Select the lock for the target (an inspected interpreter, or an explicit version and
platform), fetch each selected wheel's RECORD (:mod:`wheeldoctor.fetch.remote`), and
judge them with the ``wheels`` clash code as if the wheels were at hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wheeldoctor.fetch.remote import Fetcher, Progress
    from wheeldoctor.formats.lock import Lock, LockedPackage, LockTarget
    from wheeldoctor.formats.lock_fetched import FetchedRecord, FetchSummary
    from wheeldoctor.judge.policy import Policy
    from wheeldoctor.judge.preflight import PreflightResult
    from wheeldoctor.model.environment import Environment


@dataclass(frozen=True, slots=True, kw_only=True)
class LockPreflight:
    """The clash report of a lock's wheels, and how their RECORDs were had."""

    lock: Lock
    result: PreflightResult
    fetched: tuple[FetchedRecord, ...]
    summary: FetchSummary
    unjudged: tuple[str, ...]
    """Selected packages with no wheel to judge (an sdist, a directory, VCS), as ``name (source)``."""


def lock_target(
    env: Environment | None,
    *,
    python_version: str | None = None,
    platforms: Sequence[str] = (),
    extras: Sequence[str] = (),
    groups: Sequence[str] | None = None,
) -> LockTarget:
    """The target to select for: an explicit version and platforms, else ``env``'s interpreter, else this one."""
    from wheeldoctor.formats.lock import LockError
    from wheeldoctor.formats.lock_target import current_target, explicit_target, target_of

    options = {"extras": tuple(extras), "groups": tuple(groups) if groups is not None else None}
    if python_version is not None or platforms:
        if python_version is None:
            raise LockError("--platform: give --python-version with it")
        return explicit_target(python_version, platforms, **options)
    if env is not None:
        if env.tags is None or not env.markers:
            raise LockError(f"{env.label}: its markers and tags could not be read")
        return target_of(dict(env.markers), env.tags, **options)
    return current_target(**options)


def fetch_selected(lock: Lock, fetcher: Fetcher, progress: Progress | None = None) -> list[FetchedRecord]:
    """The RECORD of every wheel the lock selects, in the lock's order; a local one only from the lock's folder.

    A wheel that cannot be had is a finding of its own (WD086); the others are still fetched.
    When none can be had (the index unreachable, say), nothing was judged against the lock: the
    run could not be made, which is exit 2, not a problem found in the environment.
    """
    import os

    from wheeldoctor.fetch.wheel_read import FetchError

    wheels = [p.selected for p in lock.packages if p.selected is not None]
    lock_dir = os.path.dirname(os.path.abspath(lock.path))
    fetched = fetcher.fetch_all(wheels, progress, lock_dir=lock_dir, keep_going=True)
    if fetched and all(r.source == "failed" for r in fetched):
        why = next((f.message for f in fetched[0].findings), "")
        raise FetchError(f"none of the lock's {len(fetched)} wheel(s) could be had; {fetched[0].wheel.filename}: {why}")
    return fetched


def run_wheels_lock(
    lock_path: str,
    target: LockTarget,
    fetcher: Fetcher,
    env: Environment | None = None,
    progress: Progress | None = None,
    policy: Policy | None = None,
) -> LockPreflight:
    """Read and select the lock, fetch its wheels' RECORDs (and hooks), and preflight them together (and against
    ``env``); ``policy``'s known hooks and accept rules judge the hooks."""
    from wheeldoctor.formats.lock import read_lock
    from wheeldoctor.formats.lock_fetched import summarize
    from wheeldoctor.judge.locked import locked_wheel_files
    from wheeldoctor.judge.preflight import preflight

    lock = read_lock(lock_path, target)
    fetched = fetch_selected(lock, fetcher, progress)
    summary = summarize(fetched)
    result = replace(preflight(locked_wheel_files(fetched, lock.packages), env, policy=policy), fetched=summary)
    return LockPreflight(
        lock=lock, result=result, fetched=tuple(fetched), summary=summary, unjudged=not_judged(lock.packages)
    )


def not_judged(packages: Sequence[LockedPackage]) -> tuple[str, ...]:
    """Selected packages with no wheel to judge, as ``name (what the lock installs instead)``."""
    return tuple(f"{p.name} ({p.source})" for p in packages if p.selected is None and p.source != "virtual")

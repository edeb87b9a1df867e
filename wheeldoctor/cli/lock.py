"""The ``--lock`` command bodies, kept out of app.py: choose the target, fetch, judge, render, exit."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wheeldoctor.cli.runner import EXIT_HEALTHY, EXIT_PROBLEMS, cache_dir, deliver, fail

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from wheeldoctor.fetch.remote import Fetcher
    from wheeldoctor.judge.policy import Policy
    from wheeldoctor.model.environment import Environment
    from wheeldoctor.results.lock import LockedEnvironment
    from wheeldoctor.where.target import Target


@dataclass(frozen=True, slots=True, kw_only=True)
class LockOptions:
    """The ``--lock`` options of a command, as given."""

    file: str
    find_links: tuple[str, ...] = ()
    verify_wheels: bool = False
    extras: tuple[str, ...] = ()
    groups: tuple[str, ...] | None = None
    """None: the lock's default groups."""
    no_cache: bool = False


def lock_options(
    lock: str | None,
    find_links: Sequence[str] | None,
    verify_wheels: bool,
    extras: Sequence[str] | None,
    groups: Sequence[str] | None,
    no_cache: bool,
) -> LockOptions | None:
    """The ``--lock`` options as given on the command line; None without ``--lock``."""
    if lock is None:
        if find_links or verify_wheels or extras or groups:
            fail("--find-links, --verify-wheels, --extra and --group need --lock FILE")
        return None
    return LockOptions(
        file=lock,
        find_links=tuple(find_links or ()),
        verify_wheels=verify_wheels,
        extras=tuple(extras or ()),
        groups=tuple(groups) if groups else None,
        no_cache=no_cache,
    )


def fetcher_for(options: LockOptions) -> Fetcher:
    """The RECORD fetcher for a run: its cache, local wheel directories and verification mode."""
    import os

    from wheeldoctor.fetch.remote import Fetcher

    for directory in options.find_links:
        if not os.path.isdir(directory):
            fail(f"--find-links {directory}: not a directory")
    return Fetcher(
        cache_dir=cache_dir(options.no_cache), find_links=options.find_links, verify_wheels=options.verify_wheels
    )


def wheels_lock(
    options: LockOptions,
    located: Target | None,
    chosen: str,
    output: str | None,
    python_version: str | None,
    platform: Sequence[str] | None,
    *,
    verbose: bool = False,
    isolated: bool = False,
) -> int:
    """``wheels --lock FILE``: the lock's wheels preflighted from their RECORDs, selected for ``located``'s
    interpreter (and checked against its environment), else for ``python_version`` and ``platform``."""
    from wheeldoctor.commands.lock import lock_target, run_wheels_lock
    from wheeldoctor.report.fetch import fetch_lines
    from wheeldoctor.report.progress import count_progress
    from wheeldoctor.where.target import load_target

    env = load_target(located, with_tags=True) if located is not None else None
    target = lock_target(
        env, python_version=python_version, platforms=platform or (), extras=options.extras, groups=options.groups
    )
    progress = count_progress("RECORDs", chosen != "text")
    done = run_wheels_lock(options.file, target, fetcher_for(options), env, progress, hooks_policy(env, isolated))
    deliver(done.result, chosen, output, header=located is None or located.reason is None, verbose=verbose)
    sys.stderr.writelines(line + "\n" for line in fetch_lines(done.summary, done.fetched, done.unjudged))
    return EXIT_HEALTHY if done.result.healthy else EXIT_PROBLEMS


def hooks_policy(env: Environment | None, isolated: bool = False) -> Policy | None:
    """The nearest config's known hooks and accept rules, for the start-up hooks wheels would install
    (none with ``isolated``: ``--isolated``)."""
    from wheeldoctor.commands.policy import find_policy

    try:
        return find_policy(env, isolated=isolated)
    except ValueError as e:  # ConfigError: one line naming the file
        fail(str(e))


def against(env: Environment, options: LockOptions, chosen: str) -> LockedEnvironment:
    """``check``/``doctor`` ``--lock``: the environment with the locked wheels' claims, and the lock's findings."""
    from wheeldoctor.commands.lock_check import against_lock
    from wheeldoctor.report.progress import count_progress

    progress = count_progress("RECORDs", chosen != "text")
    return against_lock(env, options.file, fetcher_for(options), progress, extras=options.extras, groups=options.groups)


def lock_judge(given: LockOptions | None, chosen: str) -> Callable[[Environment], LockedEnvironment] | None:
    """``check``/``doctor``/``fix`` ``--lock``: what judges an environment against the lock (None without one).

    ``given`` is :func:`lock_options`' answer; ``chosen`` the report format (progress is drawn for ``text`` alone).
    """
    from functools import partial

    return partial(against, options=given, chosen=chosen) if given is not None else None


def tell_fetch(locked: LockedEnvironment | None, *, quiet: bool = False) -> None:
    """On stderr, how the lock's RECORDs were had and what they are trusted for; nothing with ``-q``.

    What fails is in the report itself (WD085, WD086, and WD087 under ``--strict``), so ``-q`` loses no failure.
    """
    if locked is None or quiet:
        return
    from wheeldoctor.report.fetch import fetch_lines, plain

    sys.stderr.writelines(line + "\n" for line in fetch_lines(locked.summary, locked.fetched, locked.unjudged))
    if locked.seeded:
        seeds = plain(", ".join(locked.seeded))
        sys.stderr.write(f"venv seed package(s), not in the lock and not a finding (their RECORDs checked): {seeds}\n")

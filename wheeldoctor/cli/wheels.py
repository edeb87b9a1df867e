"""``wheels``: its options, and its body (typer parses its command line)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from wheeldoctor.cli.lock import lock_options
from wheeldoctor.cli.options import (
    EXTRA,
    FIND_LINKS,
    GROUP,
    ISOLATED,
    JSON,
    LOCK,
    NO_CACHE,
    OUTPUT,
    PATH,
    PYTHON,
    REPORT_FORMAT,
    VERBOSE,
    VERIFY_WHEELS,
    flag,
    given,
    many,
    value,
    words,
)
from wheeldoctor.cli.runner import (
    EXIT_HEALTHY,
    EXIT_PROBLEMS,
    REPORT_FORMATS,
    choose_format,
    deliver,
    fail,
    optional_target,
)
from wheeldoctor.where.target import load_target


@dataclass(frozen=True, slots=True, kw_only=True)
class WheelsOptions:
    """``wheels``'s options, as given on the command line."""

    files: tuple[str, ...] = given(words("WHEEL...", "Wheel files to check before install."))
    python: str | None = given(PYTHON)
    isolated: bool = given(ISOLATED)
    path: tuple[str, ...] = given(PATH)
    no_environment: bool = given(
        flag("--no-environment", help="Against each other only: find no environment (none is found otherwise).")
    )
    json: bool = given(JSON)
    format: str | None = given(REPORT_FORMAT)
    output: str | None = given(OUTPUT)
    lock: str | None = given(LOCK)
    python_version: str | None = given(
        value("--python-version", metavar="X.Y", help="Select the lock for this CPython version.")
    )
    platform: tuple[str, ...] = given(
        many("--platform", metavar="TAG", help="Select the lock for this platform tag (repeatable).")
    )
    find_links: tuple[str, ...] = given(FIND_LINKS)
    verify_wheels: bool = given(VERIFY_WHEELS)
    no_cache: bool = given(NO_CACHE)
    extra: tuple[str, ...] = given(EXTRA)
    group: tuple[str, ...] = given(GROUP)
    verbose: bool = given(VERBOSE)


def wheels(options: WheelsOptions) -> int:
    """Wheel files (or a lock's wheels, by their RECORDs) against each other and an environment; the exit code."""
    chosen = choose_format(options.format, options.json, allowed=REPORT_FORMATS)
    if options.no_environment and (options.python or options.path):
        fail("--no-environment looks at none: leave out --python and --path")
    given = lock_options(
        options.lock, options.find_links, options.verify_wheels, options.extra, options.group, options.no_cache
    )
    if given is not None:
        if options.files:
            fail("give wheel files or --lock, not both")
        from wheeldoctor.cli.lock import wheels_lock

        explicit = bool(options.python_version or options.platform)
        if explicit and (options.python or options.path):
            fail("give --python/--path or --python-version/--platform, not both")
        # An explicit version and platform select the lock alone; else for the environment every command finds.
        located = (
            None
            if explicit or options.no_environment
            else optional_target(options.python, options.path, options.isolated)
        )
        return wheels_lock(
            given,
            located,
            chosen,
            options.output,
            options.python_version,
            options.platform,
            verbose=options.verbose,
            isolated=options.isolated,
        )
    if options.python_version or options.platform:
        fail("--python-version and --platform select a lock: give --lock FILE")
    if not options.files:
        fail("name the wheel files to check, or give --lock FILE")
    from wheeldoctor.formats.wheelfile import WheelError, read_wheel
    from wheeldoctor.judge.preflight import preflight

    try:
        read = [read_wheel(f) for f in options.files]
    except WheelError as e:
        fail(str(e))
    target = None if options.no_environment else optional_target(options.python, options.path, options.isolated)
    env = load_target(target) if target is not None else None
    from wheeldoctor.cli.lock import hooks_policy

    result = preflight(read, env, os.path.lexists, policy=hooks_policy(env, options.isolated))
    deliver(result, chosen, options.output, header=target is None or target.reason is None, verbose=options.verbose)
    return EXIT_HEALTHY if result.healthy else EXIT_PROBLEMS

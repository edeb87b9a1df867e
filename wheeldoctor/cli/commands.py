"""The bodies of the commands that both parsers run: typer's (``cli/app.py``) and the exact
fast one (``cli/plain.py``). Each takes its options as keyword arguments, named as typer
names them, and returns the exit code; everything else is imported when the body runs."""

from __future__ import annotations

import sys

from wheeldoctor.cli.runner import (
    EXIT_HEALTHY,
    EXIT_PROBLEMS,
    REPORT_FORMATS,
    cache_dir,
    choose_format,
    deliver,
    exit_code,
    fail,
    metadata_memos,
    no_cyclic_gc,
    pin_baseline,
    refuse_report_with_baseline,
    report_modules,
    scan_keeper,
    target_of,
)

TYPE_CHECKING = False  # typing costs milliseconds to import: ``--version`` runs through here
if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console


def version() -> int:
    """``--version``: the version on stdout."""
    from wheeldoctor import __version__

    sys.stdout.write(f"wheeldoctor {__version__}\n")
    return EXIT_HEALTHY


def check(
    *,
    names: list[str] | None,
    all_: bool,
    python: str | None,
    path: list[str] | None,
    json: bool,
    format_: str | None,
    output: str | None,
    jobs: int | None,
    strict: bool,
    no_cache: bool,
    dpkg_admindir: str | None,
    config: str | None,
    baseline: str | None,
    write_baseline: str | None,
    show_accepted: bool,
    show_unowned: bool,
    lock: str | None = None,
    find_links: list[str] | None = None,
    verify_wheels: bool = False,
    extra: list[str] | None = None,
    group: list[str] | None = None,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    exit_zero: bool = False,
    quiet: bool = False,
    verbose: bool = False,
) -> int:
    """``check``: verify distributions' files (``--all``: every one, and the start-up hooks).

    With ``lock``, against the lock and its wheels' own RECORDs (``cli/lock.py``). ``select``,
    ``ignore``, ``jobs`` and ``strict`` default to the config's (``settings_of``).
    """
    if bool(names) == all_:
        fail("name the distributions to check, or pass --all (not both)")
    if lock is not None and not all_:
        fail("--lock judges the whole environment: give --all")
    chosen = choose_format(format_, json)
    refuse_report_with_baseline(write_baseline, chosen, output)
    from wheeldoctor.cli.settings import settings_of

    settings = settings_of(config, select=select, ignore=ignore, jobs=jobs, strict=strict)
    if chosen == "cyclonedx":
        from wheeldoctor.cli import sbom

        sbom.require_sbom()
    target = target_of(python, path, dpkg_admindir, quiet=quiet, config=config)
    from wheeldoctor.where.target import load_target, start_probe

    start_probe(target, with_tags=lock is not None)  # it runs while the checks are imported
    from dataclasses import replace

    from wheeldoctor.commands import policy as policies
    from wheeldoctor.commands.check import run_check
    from wheeldoctor.report.progress import progress_bar

    with no_cyclic_gc():
        cached = cache_dir(no_cache)
        env = load_target(
            target,
            with_tags=lock is not None,
            defer_records=lock is None,
            memos=metadata_memos(cached),
            keeper=scan_keeper(cached),
        )
        locked = None
        if lock is not None:
            from wheeldoctor.cli.lock import lock_judge, lock_options

            judge = lock_judge(lock_options(lock, find_links, verify_wheels, extra, group, no_cache), chosen)
            locked = judge(env) if judge else None
            env = locked.environment if locked else env
        # None where there is no config, baseline or selection: run_check's own default then.
        policy = policies.find_policy(
            env, config=config, baseline_file=baseline, writing=write_baseline, selection=settings.selection
        )
        with progress_bar(chosen != "text" or quiet) as sink:
            result = run_check(
                env,
                names or None,
                jobs=settings.jobs,
                progress=sink,
                strict=settings.strict or not all_,
                cache_dir=cached,
                processes=locked is None,  # the lock's claims are in env; forked workers read RECORD files
                strict_overlays=settings.strict,
                policy=policy,
                lock=locked.verdict if locked else None,
            )
    result = replace(result, show_unowned=show_unowned, fetched=locked.summary if locked else None)
    if write_baseline is not None:
        return pin_baseline(write_baseline, result.baseline_reports)
    if chosen == "cyclonedx":
        from wheeldoctor.cli import sbom

        sbom.deliver_sbom(result, output, cached)
        return exit_code(result.healthy, exit_zero)

    header = target.reason is None  # discovery has said on stderr which environment, and why

    def rich(console: Console) -> None:
        from wheeldoctor.report import check_table

        check_table.render_rich(result, console, show_accepted=show_accepted, verbose=verbose, header=header)

    deliver(result, chosen, output, rich, show_accepted=show_accepted, quiet=quiet, header=header)
    if locked is not None:
        from wheeldoctor.cli.lock import tell_fetch

        tell_fetch(locked)
    return exit_code(result.healthy, exit_zero)


def deps(
    *,
    python: str | None,
    path: list[str] | None,
    json: bool,
    format_: str | None,
    output: str | None,
    no_cache: bool,
    dpkg_admindir: str | None,
) -> int:
    """``deps``: requirements (as pip check judges them, and further), duplicates, compatibility."""
    chosen = choose_format(format_, json, allowed=REPORT_FORMATS)
    target = target_of(python, path, dpkg_admindir)
    from wheeldoctor.where.target import load_target, start_probe

    start_probe(target, with_tags=True)
    with no_cyclic_gc():  # as for check: reading and judging make many objects, none in a cycle
        cached = cache_dir(no_cache)
        memo = None
        if cached is not None:
            from wheeldoctor.engine.deps_memo import memo_for

            memo = memo_for(cached, target.python, target.paths)
        # A judgement kept for this target is likely to hold: then no requirement is parsed.
        parsers = () if memo is not None and memo.present() else DEPS_PARSERS
        for module in (*DEPS_MODULES, *parsers, *report_modules(chosen, "deps_text")):  # while the probe runs
            __import__(module)
        from wheeldoctor.commands.deps import run_deps

        env = load_target(
            target, with_tags=True, with_records=False, memos=metadata_memos(cached), keeper=scan_keeper(cached)
        )
        result = run_deps(env, memo=memo)

    header = target.reason is None  # discovery has said on stderr which environment, and why

    def rich(console: Console) -> None:
        from wheeldoctor.report import deps_text

        deps_text.render_rich(result, console, header=header)

    deliver(result, chosen, output, rich, header=header)
    return EXIT_HEALTHY if result.healthy else EXIT_PROBLEMS


#: What ``deps`` reads and judges with: imported while ``--python``'s probe runs in its own
#: process, instead of after its answer is read (the command would wait on it first).
DEPS_MODULES = (
    "wheeldoctor.where.environment",
    "wheeldoctor.where.startup",
    "wheeldoctor.where.managers",
    "wheeldoctor.commands.deps",
    "wheeldoctor.judge.deps",
    "wheeldoctor.judge.compat",
    "wheeldoctor.judge.duplicates",
    "packaging.tags",
)
#: What judges requirements, imported with :data:`DEPS_MODULES` unless a kept judgement may be used.
DEPS_PARSERS = ("packaging.requirements",)

#: The bodies the fast parser may run, by command (``version`` for ``--version`` alone).
BODIES: dict[str, Callable[..., int]] = {"version": version, "check": check, "deps": deps}

"""``check``: its options, and its body, which both parsers run (typer's and the fast one)."""

from __future__ import annotations

from dataclasses import dataclass

from wheeldoctor.cli.options import (
    BASELINE,
    CONFIG,
    DPKG_ADMINDIR,
    EXIT_ZERO,
    EXTRA,
    FIND_LINKS,
    FORMAT,
    GROUP,
    IGNORE,
    ISOLATED,
    JOBS,
    JSON,
    LOCK,
    NO_CACHE,
    OUTPUT,
    PATH,
    PYTHON,
    QUIET,
    SELECT,
    SHOW_ACCEPTED,
    SHOW_UNOWNED,
    STRICT,
    VERBOSE,
    VERIFY_WHEELS,
    WRITE_BASELINE,
    flag,
    given,
    words,
)
from wheeldoctor.cli.runner import (
    cache_dir,
    choose_format,
    deliver,
    exit_code,
    fail,
    metadata_memos,
    no_cyclic_gc,
    pin_baseline,
    refuse_report_with_baseline,
    scan_keeper,
    silence_notes,
    target_of,
)

TYPE_CHECKING = False  # typing stays off the command's start-up path
if TYPE_CHECKING:
    from rich.console import Console

    from wheeldoctor.cli.settings import Settings
    from wheeldoctor.model.environment import Environment
    from wheeldoctor.results.lock import LockedEnvironment
    from wheeldoctor.where.target import Target


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckOptions:
    """``check``'s options, as given on the command line."""

    names: tuple[str, ...] = given(words("NAME...", "Distributions to verify."))
    all: bool = given(flag("--all", help="Verify every installed distribution."))
    python: str | None = given(PYTHON)
    path: tuple[str, ...] = given(PATH)
    json: bool = given(JSON)
    format: str | None = given(FORMAT)
    output: str | None = given(OUTPUT)
    jobs: int | None = given(JOBS)
    strict: bool = given(STRICT)
    no_cache: bool = given(NO_CACHE)
    dpkg_admindir: str | None = given(DPKG_ADMINDIR)
    config: str | None = given(CONFIG)
    isolated: bool = given(ISOLATED)
    baseline: str | None = given(BASELINE)
    write_baseline: str | None = given(WRITE_BASELINE)
    show_accepted: bool = given(SHOW_ACCEPTED)
    show_unowned: bool = given(SHOW_UNOWNED)
    select: tuple[str, ...] = given(SELECT)
    ignore: tuple[str, ...] = given(IGNORE)
    exit_zero: bool = given(EXIT_ZERO)
    quiet: bool = given(QUIET)
    verbose: bool = given(VERBOSE)
    lock: str | None = given(LOCK)
    find_links: tuple[str, ...] = given(FIND_LINKS)
    verify_wheels: bool = given(VERIFY_WHEELS)
    extra: tuple[str, ...] = given(EXTRA)
    group: tuple[str, ...] = given(GROUP)


def _settings_and_target(options: CheckOptions, chosen: str) -> tuple[Settings, Target]:
    """The config's defaults under the command line, then the environment (``cyclonedx`` needs its extra first)."""
    from wheeldoctor.cli.settings import settings_of

    settings = settings_of(
        options.config,
        select=options.select,
        ignore=options.ignore,
        jobs=options.jobs,
        strict=options.strict,
        isolated=options.isolated,
    )
    if chosen == "cyclonedx":
        from wheeldoctor.cli import sbom

        sbom.require_sbom()
    target = target_of(
        options.python,
        options.path,
        options.dpkg_admindir,
        quiet=options.quiet,
        config=options.config,
        isolated=options.isolated,
    )
    return settings, target


def check(options: CheckOptions) -> int:
    """Verify distributions' files (``--all``: every one, and the start-up hooks); the exit code.

    With ``--lock``, against the lock and its wheels' own RECORDs (``cli/lock.py``). ``--select``,
    ``--ignore``, ``--jobs`` and ``--strict`` default to the config's (``settings_of``).
    """
    if bool(options.names) == options.all:
        fail("name the distributions to check, or pass --all (not both)")
    if options.lock is not None and not options.all:
        fail("--lock judges the whole environment: give --all")
    chosen = choose_format(options.format, options.json)
    if options.quiet:
        silence_notes()
    refuse_report_with_baseline(options.write_baseline, chosen, options.output)
    settings, target = _settings_and_target(options, chosen)
    from wheeldoctor.where.target import load_target, start_probe

    start_probe(target, with_tags=options.lock is not None)  # it runs while the checks are imported
    from dataclasses import replace

    from wheeldoctor.commands import policy as policies
    from wheeldoctor.commands.check import CheckRequest, run_check
    from wheeldoctor.report.progress import progress_bar

    with no_cyclic_gc():
        cached = cache_dir(options.no_cache)
        env = load_target(
            target,
            with_tags=options.lock is not None,
            defer_records=options.lock is None,
            memos=metadata_memos(cached),
            keeper=scan_keeper(cached),
        )
        locked = _against_lock(env, options, chosen)
        env = locked.environment if locked else env
        # None where there is no config, baseline or selection: run_check's own default then.
        policy = policies.find_policy(
            env,
            config=options.config,
            baseline_file=options.baseline,
            writing=options.write_baseline,
            selection=settings.selection,
            isolated=options.isolated,
        )
        with progress_bar(chosen != "text" or options.quiet) as sink:
            request = CheckRequest(
                names=options.names or None,
                jobs=settings.jobs,
                progress=sink,
                strict=settings.strict or not options.all,
                cache_dir=cached,
                processes=locked is None,  # the lock's claims are in env; forked workers read RECORD files
                strict_overlays=settings.strict,
                policy=policy,
                lock=locked.verdict if locked else None,
            )
            result = run_check(env, request)
    result = replace(result, show_unowned=options.show_unowned, fetched=locked.summary if locked else None)
    if options.write_baseline is not None:
        return pin_baseline(options.write_baseline, result.baseline_reports)
    output = options.output
    if chosen == "cyclonedx":
        from wheeldoctor.cli import sbom

        if not sbom.deliver_sbom(result, output, cached, locked.lock if locked else None):
            return exit_code(result.healthy, options.exit_zero)
        chosen, output = "text", None  # the BOM is in its file: the text report on stdout, as for every format

    header = target.reason is None  # discovery has said on stderr which environment, and why

    def rich(console: Console) -> None:
        from wheeldoctor.report import check_table

        check_table.render_rich(
            result, console, show_accepted=options.show_accepted, verbose=options.verbose, header=header
        )

    deliver(
        result,
        chosen,
        output,
        rich,
        show_accepted=options.show_accepted,
        quiet=options.quiet,
        header=header,
        verbose=options.verbose,
    )
    if locked is not None:
        from wheeldoctor.cli.lock import tell_fetch

        tell_fetch(locked, quiet=options.quiet)
    return exit_code(result.healthy, options.exit_zero)


def _against_lock(env: Environment, options: CheckOptions, chosen: str) -> LockedEnvironment | None:
    """With ``--lock``: ``env`` judged against the lock (the locked wheels' claims in place); else None."""
    if options.lock is None:
        return None
    from wheeldoctor.cli.lock import lock_judge, lock_options

    given = lock_options(
        options.lock, options.find_links, options.verify_wheels, options.extra, options.group, options.no_cache
    )
    judge = lock_judge(given, chosen)
    return judge(env) if judge else None

"""``doctor``: its options, and its body (typer parses its command line)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

from wheeldoctor.cli import sbom
from wheeldoctor.cli.lock import lock_judge, lock_options, tell_fetch
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
    given,
)
from wheeldoctor.cli.runner import (
    cache_dir,
    choose_format,
    deliver,
    exit_code,
    metadata_memos,
    no_cyclic_gc,
    pin_baseline,
    refuse_report_with_baseline,
    scan_keeper,
    silence_notes,
    target_of,
)
from wheeldoctor.cli.settings import settings_of
from wheeldoctor.report.progress import progress_bar
from wheeldoctor.where.target import load_target, start_probe


@dataclass(frozen=True, slots=True, kw_only=True)
class DoctorOptions:
    """``doctor``'s options, as given on the command line."""

    python: str | None = given(PYTHON)
    path: tuple[str, ...] = given(PATH)
    json: bool = given(JSON)
    format: str | None = given(FORMAT)
    output: str | None = given(OUTPUT)
    jobs: int | None = given(JOBS)
    strict: bool = given(STRICT)
    no_cache: bool = given(NO_CACHE)
    show_unowned: bool = given(SHOW_UNOWNED)
    dpkg_admindir: str | None = given(DPKG_ADMINDIR)
    config: str | None = given(CONFIG)
    isolated: bool = given(ISOLATED)
    baseline: str | None = given(BASELINE)
    write_baseline: str | None = given(WRITE_BASELINE)
    show_accepted: bool = given(SHOW_ACCEPTED)
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


def doctor(options: DoctorOptions) -> int:
    """Files, clashes, start-up hooks, dependencies, duplicates, compatibility; one exit code."""
    chosen = choose_format(options.format, options.json)
    if options.quiet:
        silence_notes()
    refuse_report_with_baseline(options.write_baseline, chosen, options.output)
    settings = settings_of(
        options.config,
        select=options.select,
        ignore=options.ignore,
        jobs=options.jobs,
        strict=options.strict,
        isolated=options.isolated,
    )
    if chosen == "cyclonedx":
        sbom.require_sbom()
    target = target_of(
        options.python,
        options.path,
        options.dpkg_admindir,
        quiet=options.quiet,
        config=options.config,
        isolated=options.isolated,
    )
    start_probe(target, with_tags=True)  # it runs while the checks are imported
    from wheeldoctor.commands import policy as policies
    from wheeldoctor.commands.doctor import baseline_reports, run_doctor
    from wheeldoctor.report import deps_text

    with no_cyclic_gc():
        cached = cache_dir(options.no_cache)
        memos = metadata_memos(cached)
        env = load_target(
            target, with_tags=True, defer_records=options.lock is None, memos=memos, keeper=scan_keeper(cached)
        )
        given = lock_options(
            options.lock, options.find_links, options.verify_wheels, options.extra, options.group, options.no_cache
        )
        judge = lock_judge(given, chosen)
        locked = judge(env) if judge else None
        env = locked.environment if locked else env
        policy = policies.load_policy(
            env,
            config=options.config,
            baseline_file=options.baseline,
            writing=options.write_baseline,
            selection=settings.selection,
            isolated=options.isolated,
        )
        with progress_bar(chosen != "text" or options.quiet) as sink:
            verdict = locked.verdict if locked else None
            result = run_doctor(
                env,
                jobs=settings.jobs,
                progress=sink,
                strict=settings.strict,
                cache_dir=cached,
                policy=policy,
                lock=verdict,
            )
    fetched = locked.summary if locked else None
    result = replace(result, check=replace(result.check, show_unowned=options.show_unowned, fetched=fetched))
    if options.write_baseline is not None:
        return pin_baseline(options.write_baseline, baseline_reports(result))
    output = options.output
    if chosen == "cyclonedx":
        if not sbom.deliver_sbom(result.check, output, cached, locked.lock if locked else None):
            return exit_code(result.healthy, options.exit_zero)
        chosen, output = "text", None  # the BOM is in its file: the text report on stdout, as for every format
    header = target.reason is None  # discovery has said on stderr which environment, and why
    rich = partial(
        deps_text.render_doctor_rich,
        result,
        show_accepted=options.show_accepted,
        verbose=options.verbose,
        header=header,
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
    tell_fetch(locked, quiet=options.quiet)
    return exit_code(result.healthy, options.exit_zero)

"""The typer app: thin commands that pick an environment, run checks, render, exit.

Reports go to stdout, errors and progress to stderr (see :mod:`wheeldoctor.cli.runner`).
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from functools import partial
from typing import Annotated

import typer

from wheeldoctor.cli import commands, fleet, sbom
from wheeldoctor.cli.lock import lock_judge, lock_options, tell_fetch
from wheeldoctor.cli.options import (
    BaselineOption,
    ConfigOption,
    DpkgAdmindirOption,
    ExitZeroOption,
    ExtraOption,
    FindLinksOption,
    FormatOption,
    GroupOption,
    IgnoreOption,
    JobsOption,
    JsonOption,
    LockOption,
    NoCacheOption,
    OutputOption,
    PathOption,
    PlatformOption,
    PythonOption,
    PythonVersionOption,
    QuietOption,
    ReportFormatOption,
    SelectOption,
    ShowAcceptedOption,
    ShowUnownedOption,
    StrictOption,
    VerboseOption,
    VerifyWheelsOption,
    WriteBaselineOption,
)
from wheeldoctor.cli.runner import (
    EXIT_ERROR,
    EXIT_HEALTHY,
    EXIT_PROBLEMS,
    REPORT_FORMATS,
    cache_dir,
    choose_format,
    deliver,
    exit_code,
    exit_now,
    fail,
    guard,
    metadata_memos,
    no_cyclic_gc,
    pin_baseline,
    refuse_report_with_baseline,
    scan_keeper,
    target_of,
    terminal_console,
)
from wheeldoctor.cli.settings import settings_of
from wheeldoctor.report.progress import progress_bar
from wheeldoctor.where.target import Target, load_target, start_probe

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    help="Verify that an installed Python environment holds the bytes its installers recorded.",
)


def _show_version(value: bool) -> None:
    if value:
        raise SystemExit(commands.version())


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", callback=_show_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Verify that an installed Python environment holds the bytes its installers recorded."""


@app.command()
def check(
    names: Annotated[list[str] | None, typer.Argument(metavar="NAME...", help="Distributions to verify.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Verify every installed distribution.")] = False,
    python: PythonOption = None,
    path: PathOption = None,
    json: JsonOption = False,
    format_: FormatOption = None,
    output: OutputOption = None,
    jobs: JobsOption = None,
    strict: StrictOption = False,
    no_cache: NoCacheOption = False,
    dpkg_admindir: DpkgAdmindirOption = None,
    config: ConfigOption = None,
    baseline: BaselineOption = None,
    write_baseline: WriteBaselineOption = None,
    show_accepted: ShowAcceptedOption = False,
    show_unowned: ShowUnownedOption = False,
    select: SelectOption = None,
    ignore: IgnoreOption = None,
    exit_zero: ExitZeroOption = False,
    quiet: QuietOption = False,
    verbose: VerboseOption = False,
    lock: LockOption = None,
    find_links: FindLinksOption = None,
    verify_wheels: VerifyWheelsOption = False,
    extra: ExtraOption = None,
    group: GroupOption = None,
) -> None:
    """Verify distributions' files against their RECORD or package manager's record (--all: start-up hooks too)."""

    guard(
        lambda: commands.check(
            names=names,
            all_=all_,
            python=python,
            path=path,
            json=json,
            format_=format_,
            output=output,
            jobs=jobs,
            strict=strict,
            no_cache=no_cache,
            dpkg_admindir=dpkg_admindir,
            config=config,
            baseline=baseline,
            write_baseline=write_baseline,
            show_accepted=show_accepted,
            show_unowned=show_unowned,
            lock=lock,
            find_links=find_links,
            verify_wheels=verify_wheels,
            extra=extra,
            group=group,
            select=select,
            ignore=ignore,
            exit_zero=exit_zero,
            quiet=quiet,
            verbose=verbose,
        )
    )


@app.command()
def wheels(
    files: Annotated[
        list[str] | None, typer.Argument(metavar="WHEEL...", help="Wheel files to check before install.")
    ] = None,
    python: PythonOption = None,
    path: PathOption = None,
    json: JsonOption = False,
    format_: ReportFormatOption = None,
    output: OutputOption = None,
    lock: LockOption = None,
    python_version: PythonVersionOption = None,
    platform: PlatformOption = None,
    find_links: FindLinksOption = None,
    verify_wheels: VerifyWheelsOption = False,
    no_cache: NoCacheOption = False,
    extra: ExtraOption = None,
    group: GroupOption = None,
) -> None:
    """Check wheel files (or a lock's wheels, by their RECORDs) against each other and (optionally) an environment."""

    def run() -> int:
        chosen = choose_format(format_, json, allowed=REPORT_FORMATS)
        given = lock_options(lock, find_links, verify_wheels, extra, group, no_cache)
        if given is not None:
            if files:
                fail("give wheel files or --lock, not both")
            from wheeldoctor.cli.lock import wheels_lock

            return wheels_lock(given, python, path, chosen, output, python_version, platform)
        if python_version or platform:
            fail("--python-version and --platform select a lock: give --lock FILE")
        if not files:
            fail("name the wheel files to check, or give --lock FILE")
        from wheeldoctor.formats.wheelfile import WheelError, read_wheel
        from wheeldoctor.judge.preflight import preflight

        try:
            read = [read_wheel(f) for f in files]
        except WheelError as e:
            fail(str(e))
        env = load_target(Target(python=python, paths=tuple(path or ()))) if (python or path) else None
        result = preflight(read, env, os.path.lexists)
        deliver(result, chosen, output)
        return EXIT_HEALTHY if result.healthy else EXIT_PROBLEMS

    guard(run)


@app.command()
def deps(
    python: PythonOption = None,
    path: PathOption = None,
    json: JsonOption = False,
    format_: ReportFormatOption = None,
    output: OutputOption = None,
    no_cache: NoCacheOption = False,
    dpkg_admindir: DpkgAdmindirOption = None,
) -> None:
    """Check requirements (as pip check does, and further), duplicate dist-infos and compatibility."""

    guard(
        lambda: commands.deps(
            python=python,
            path=path,
            json=json,
            format_=format_,
            output=output,
            no_cache=no_cache,
            dpkg_admindir=dpkg_admindir,
        )
    )


@app.command()
def doctor(
    python: PythonOption = None,
    path: PathOption = None,
    json: JsonOption = False,
    format_: FormatOption = None,
    output: OutputOption = None,
    jobs: JobsOption = None,
    strict: StrictOption = False,
    no_cache: NoCacheOption = False,
    show_unowned: ShowUnownedOption = False,
    dpkg_admindir: DpkgAdmindirOption = None,
    config: ConfigOption = None,
    baseline: BaselineOption = None,
    write_baseline: WriteBaselineOption = None,
    show_accepted: ShowAcceptedOption = False,
    select: SelectOption = None,
    ignore: IgnoreOption = None,
    exit_zero: ExitZeroOption = False,
    quiet: QuietOption = False,
    verbose: VerboseOption = False,
    lock: LockOption = None,
    find_links: FindLinksOption = None,
    verify_wheels: VerifyWheelsOption = False,
    extra: ExtraOption = None,
    group: GroupOption = None,
) -> None:
    """Everything at once: files, clashes, start-up hooks, dependencies, duplicates, compatibility; one exit code."""

    def run() -> int:
        chosen = choose_format(format_, json)
        refuse_report_with_baseline(write_baseline, chosen, output)
        settings = settings_of(config, select=select, ignore=ignore, jobs=jobs, strict=strict)
        if chosen == "cyclonedx":
            sbom.require_sbom()
        target = target_of(python, path, dpkg_admindir, quiet=quiet, config=config)
        start_probe(target, with_tags=True)
        from wheeldoctor.commands import policy as policies
        from wheeldoctor.commands.doctor import run_doctor
        from wheeldoctor.report import deps_text

        with no_cyclic_gc():
            cached = cache_dir(no_cache)
            memos = metadata_memos(cached)
            env = load_target(
                target, with_tags=True, defer_records=lock is None, memos=memos, keeper=scan_keeper(cached)
            )
            judge = lock_judge(lock_options(lock, find_links, verify_wheels, extra, group, no_cache), chosen)
            locked = judge(env) if judge else None
            env = locked.environment if locked else env
            policy = policies.load_policy(
                env, config=config, baseline_file=baseline, writing=write_baseline, selection=settings.selection
            )
            with progress_bar(chosen != "text" or quiet) as sink:
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
        result = replace(result, check=replace(result.check, show_unowned=show_unowned, fetched=fetched))
        if write_baseline is not None:
            from wheeldoctor.commands.doctor import baseline_reports

            return pin_baseline(write_baseline, baseline_reports(result))
        if chosen == "cyclonedx":
            sbom.deliver_sbom(result.check, output, cached)
            return exit_code(result.healthy, exit_zero)
        header = target.reason is None  # discovery has said on stderr which environment, and why
        rich = partial(
            deps_text.render_doctor_rich, result, show_accepted=show_accepted, verbose=verbose, header=header
        )
        deliver(result, chosen, output, rich, show_accepted=show_accepted, quiet=quiet, header=header)
        tell_fetch(locked)
        return exit_code(result.healthy, exit_zero)

    guard(run)


@app.command()
def fix(
    names: Annotated[list[str] | None, typer.Argument(metavar="NAME...", help="Distributions to repair.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Repair every installed distribution.")] = False,
    python: PythonOption = None,
    path: PathOption = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan; run nothing.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Run the plan without asking.")] = False,
    keep: Annotated[list[str] | None, typer.Option(metavar="NAME", help="Of an unrelated pair, keep NAME.")] = None,
    json: Annotated[bool, typer.Option("--json", help="The same as --format json.")] = False,
    format_: Annotated[
        str | None,
        typer.Option(
            "--format", metavar="FORMAT", help="text (default) or json: the document on stdout, the rest on stderr."
        ),
    ] = None,
    no_cache: NoCacheOption = False,
    dpkg_admindir: DpkgAdmindirOption = None,
    config: ConfigOption = None,
    baseline: BaselineOption = None,
    lock: LockOption = None,
    find_links: FindLinksOption = None,
    verify_wheels: VerifyWheelsOption = False,
    extra: ExtraOption = None,
    group: GroupOption = None,
) -> None:
    """Repair what check and doctor report, with the recorded installer; then verify again."""

    def run() -> int:
        if bool(names) == all_:
            fail("name the distributions to repair, or pass --all (not both)")
        as_json = choose_format(format_, json, allowed=("text", "json")) == "json"
        from wheeldoctor.commands.fix import plan_fix, run_fix
        from wheeldoctor.report import fix_text

        given = lock_options(lock, find_links, verify_wheels, extra, group, no_cache)
        judge = lock_judge(given, "json" if as_json else "text")
        if judge is not None and not all_:
            fail("--lock judges the whole environment: give --all")
        planned = plan_fix(
            target_of(python, path, dpkg_admindir, config=config),
            names or None,
            keep=keep or (),
            cache_dir=cache_dir(no_cache),
            config=config,
            baseline=baseline,
            against=judge,
        )
        out = sys.stderr if as_json else sys.stdout  # with --json, stdout holds the document alone
        ask = _confirm if sys.stdin.isatty() else None
        sink = fix_text.StreamSink(out)  # a refusal (FixRefused) exits 2 through the guard
        result = run_fix(planned, sink, dry_run=dry_run, yes=yes, ask=ask, explicit_python=bool(python))
        fix_text.finish(result, out, sys.stdout if as_json else None, dry_run=dry_run)
        return EXIT_HEALTHY if result.healthy else EXIT_PROBLEMS

    guard(run)


def _confirm(steps: int) -> bool:
    """Ask on the terminal whether to run ``steps`` steps; cut short (EOF, Ctrl-C), nothing runs: exit 2."""
    try:
        return typer.confirm(f"Run these {steps} step(s)?", err=True)
    except typer.Abort:
        raise SystemExit(EXIT_ERROR) from None


_FORBID_HELP = "Effects that fail the run: gpu-init, threads, processes, devices, slow:SECONDS."


@app.command()
def imports(
    modules: Annotated[list[str], typer.Argument(metavar="MODULE...", help="Modules to import, a process each.")],
    python: PythonOption = None,
    json: JsonOption = False,
    format_: Annotated[
        str | None, typer.Option("--format", metavar="FORMAT", help="text (default), json or github (annotations).")
    ] = None,
    forbid: Annotated[str, typer.Option("--forbid", metavar="EFFECT,...", help=_FORBID_HELP)] = "gpu-init",
    timeout: Annotated[float, typer.Option("--timeout", metavar="S", help="Kill an import that takes longer.")] = 60.0,
    exit_zero: ExitZeroOption = False,
) -> None:
    """Import modules (this RUNS their code) and report GPU driver initialisation, threads, processes, time."""

    def run() -> int:
        chosen = choose_format(format_, json, allowed=("text", "json", "github"))
        from wheeldoctor.commands.imports import run_imports
        from wheeldoctor.probes.imports import ImportProbeError
        from wheeldoctor.report import imports_text
        from wheeldoctor.report import json as json_report
        from wheeldoctor.results.imports import Forbid

        try:
            result = run_imports(tuple(modules), python, forbid=Forbid.parse(forbid), timeout=timeout)
        except (ImportProbeError, ValueError) as e:
            fail(str(e))
        if chosen == "json":
            sys.stdout.write(json_report.render(json_report.imports_document(result)))
        elif chosen == "github":
            from wheeldoctor.report import imports_github

            sys.stdout.writelines(line + "\n" for line in imports_github.render(result))
        elif (console := terminal_console()) is not None:
            imports_text.render_rich(result, console)
        else:
            sys.stdout.writelines(line + "\n" for line in imports_text.render_plain(result))
        return exit_code(result.healthy, exit_zero)

    guard(run)


app.command()(fleet.snapshot)
app.command()(fleet.diff)


def main() -> None:
    """Console-script entry point: the command, then the process ends at once (``exit_now``)."""
    try:
        app(prog_name="wheeldoctor")
    except SystemExit as done:
        exit_now(done.code)

"""The command line: thin commands that pick an environment, run checks, render, exit.

Exit codes: 0 healthy, 1 problems found, 2 could not run. Reports go to stdout,
errors and progress to stderr.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from wheeldoctor.model.errors import InputError
from wheeldoctor.report.progress import progress_bar
from wheeldoctor.where.target import Target, TargetError, load_target

if TYPE_CHECKING:
    from rich.console import Console

    from wheeldoctor.report.cases import Result

    Rich = Callable[[Console], None] | None

EXIT_HEALTHY = 0
EXIT_PROBLEMS = 1
EXIT_ERROR = 2

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    help="Verify that an installed Python environment holds the bytes its installers recorded.",
)


def _show_version(value: bool) -> None:
    if value:
        from wheeldoctor import __version__

        sys.stdout.write(f"wheeldoctor {__version__}\n")
        raise typer.Exit(EXIT_HEALTHY)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", callback=_show_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Verify that an installed Python environment holds the bytes its installers recorded."""


PythonOption = Annotated[
    str | None, typer.Option("--python", metavar="PATH", help="Inspect this interpreter's environment.")
]
PathOption = Annotated[
    list[str] | None,
    typer.Option("--path", metavar="DIR", help="Inspect this site directory (repeatable), in order."),
]
DpkgAdmindirOption = Annotated[
    str | None,
    typer.Option(
        "--dpkg-admindir",
        metavar="DIR",
        help="dpkg's database (default /var/lib/dpkg); IMG/var/lib/dpkg reads a mounted image rooted at IMG.",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="The same as --format json.")]
FormatOption = Annotated[
    str | None,
    typer.Option("--format", metavar="FORMAT", help="text (default), json, github (annotations), junit or sarif."),
]
OutputOption = Annotated[
    str | None,
    typer.Option(
        "--output",
        "-o",
        metavar="FILE",
        help="Write the report to FILE (atomically); stdout gets the text report.",
    ),
]
JobsOption = Annotated[int | None, typer.Option("--jobs", "-j", min=1, help="Hashing threads (default: usable CPUs).")]
ConfigOption = Annotated[str | None, typer.Option("--config", metavar="FILE", help="Accept rules from FILE.")]
BaselineOption = Annotated[str | None, typer.Option("--baseline", metavar="FILE", help="Accept what FILE pins.")]
WriteBaselineOption = Annotated[
    str | None, typer.Option("--write-baseline", metavar="FILE", help="Pin the current findings in FILE; exit 0.")
]
ShowAcceptedOption = Annotated[bool, typer.Option("--show-accepted", help="List accepted findings too.")]
StrictOption = Annotated[
    bool, typer.Option("--strict", help="Fail on overlaid distributions too, and on unverifiable ones with --all.")
]
NoCacheOption = Annotated[
    bool, typer.Option("--no-cache", help="Hash every file, trusting no cached digest (none is written).")
]


def _fail(message: str, tip: str | None = None) -> NoReturn:
    from rich.console import Console  # not at start-up: rich takes tens of milliseconds to import

    err = Console(stderr=True, highlight=False)
    err.print(f"[bold red]error:[/] {message}", markup=True, soft_wrap=True)
    if tip:
        err.print(f"Tip: {tip}", soft_wrap=True, markup=False)
    raise typer.Exit(EXIT_ERROR)


def _guard(run: Callable[[], int]) -> NoReturn:
    """Run a command body: expected errors become one line and exit 2, never a traceback."""
    try:
        code = run()
    except (TargetError, InputError) as e:
        _fail(str(e))
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    except BrokenPipeError:
        # The reader went away (`| head`): say nothing more, and keep the interpreter's
        # final flush from raising again on the closed pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise typer.Exit(EXIT_PROBLEMS) from None
    except (typer.Exit, typer.Abort):
        raise
    except Exception as e:
        if os.environ.get("WHEELDOCTOR_DEBUG"):
            raise
        _fail(f"internal error: {type(e).__name__}: {e}", "set WHEELDOCTOR_DEBUG=1 for the traceback")
    raise typer.Exit(code)


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Loading and verification allocate a few objects per recorded file, none in a cycle: the
    cyclic collector's passes over them cost about a tenth of a check and would free nothing."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _cache_dir(disabled: bool) -> str | None:
    """Where cached digests live, unless ``--no-cache`` or the environment turned them off."""
    if disabled:
        return None
    from wheeldoctor.disk import cache

    return cache.directory()


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
) -> None:
    """Verify distributions' files against their RECORD (sha256 and size), or their package manager's record."""

    def run() -> int:
        if bool(names) == all_:
            _fail("name the distributions to check, or pass --all (not both)")
        chosen = _format(format_, json)
        from wheeldoctor.commands import policy as policies
        from wheeldoctor.commands.check import run_check
        from wheeldoctor.report import text

        with _no_cyclic_gc():
            env = load_target(_target(python, path, dpkg_admindir), defer_records=True)
            policy = policies.load_policy(env, config=config, baseline_file=baseline, writing=write_baseline)
            with progress_bar(chosen != "text") as sink:
                result = run_check(
                    env,
                    names or None,
                    jobs=jobs,
                    progress=sink,
                    strict=strict or not all_,
                    cache_dir=_cache_dir(no_cache),
                    processes=True,
                    strict_overlays=strict,
                    policy=policy,
                )
        if write_baseline is not None:
            pinned = policies.write_baseline(write_baseline, result.distributions)
            sys.stderr.write(f"wrote {write_baseline}: {pinned} finding(s) pinned\n")
            return EXIT_HEALTHY
        rich = partial(text.render_rich, result, show_accepted=show_accepted)
        _deliver(result, chosen, output, rich, show_accepted=show_accepted)
        return EXIT_HEALTHY if result.healthy else EXIT_PROBLEMS

    _guard(run)


@app.command()
def wheels(
    files: Annotated[list[str], typer.Argument(metavar="WHEEL...", help="Wheel files to check before install.")],
    python: PythonOption = None,
    path: PathOption = None,
    json: JsonOption = False,
    format_: FormatOption = None,
    output: OutputOption = None,
) -> None:
    """Check wheel files against their RECORDs, each other, and (optionally) an environment."""

    def run() -> int:
        chosen = _format(format_, json)
        from wheeldoctor.checks.preflight import preflight
        from wheeldoctor.formats.wheelfile import WheelError, read_wheel

        try:
            read = [read_wheel(f) for f in files]
        except WheelError as e:
            _fail(str(e))
        env = load_target(Target(python=python, paths=tuple(path or ()))) if (python or path) else None
        result = preflight(read, env)
        _deliver(result, chosen, output)
        return EXIT_HEALTHY if result.healthy else EXIT_PROBLEMS

    _guard(run)


@app.command()
def deps(
    python: PythonOption = None,
    path: PathOption = None,
    json: JsonOption = False,
    format_: FormatOption = None,
    output: OutputOption = None,
    dpkg_admindir: DpkgAdmindirOption = None,
) -> None:
    """Check requirements (as pip check does, and further), duplicate dist-infos and compatibility."""

    def run() -> int:
        chosen = _format(format_, json)
        from wheeldoctor.commands.deps import run_deps
        from wheeldoctor.report import deps_text

        target = _target(python, path, dpkg_admindir)
        result = run_deps(load_target(target, with_tags=True, with_records=False))
        _deliver(result, chosen, output, lambda console: deps_text.render_rich(result, console))
        return EXIT_HEALTHY if result.healthy else EXIT_PROBLEMS

    _guard(run)


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
    dpkg_admindir: DpkgAdmindirOption = None,
    config: ConfigOption = None,
    baseline: BaselineOption = None,
    write_baseline: WriteBaselineOption = None,
    show_accepted: ShowAcceptedOption = False,
) -> None:
    """Everything at once: files, clashes, dependencies, duplicates, compatibility; one exit code."""

    def run() -> int:
        chosen = _format(format_, json)
        from wheeldoctor.commands import policy as policies
        from wheeldoctor.commands.doctor import run_doctor
        from wheeldoctor.report import deps_text

        with _no_cyclic_gc():
            env = load_target(_target(python, path, dpkg_admindir), with_tags=True, defer_records=True)
            policy = policies.load_policy(env, config=config, baseline_file=baseline, writing=write_baseline)
            with progress_bar(chosen != "text") as sink:
                result = run_doctor(
                    env, jobs=jobs, progress=sink, strict=strict, cache_dir=_cache_dir(no_cache), policy=policy
                )
        if write_baseline is not None:
            pinned = policies.write_baseline(write_baseline, result.check.distributions)
            sys.stderr.write(f"wrote {write_baseline}: {pinned} finding(s) pinned\n")
            return EXIT_HEALTHY
        rich = partial(deps_text.render_doctor_rich, result, show_accepted=show_accepted)
        _deliver(result, chosen, output, rich, show_accepted=show_accepted)
        return EXIT_HEALTHY if result.healthy else EXIT_PROBLEMS

    _guard(run)


_FORBID_HELP = "Effects that fail the run: gpu-init, threads, processes, devices, slow:SECONDS."


@app.command()
def imports(
    modules: Annotated[list[str], typer.Argument(metavar="MODULE...", help="Modules to import, a process each.")],
    python: PythonOption = None,
    json: JsonOption = False,
    forbid: Annotated[str, typer.Option("--forbid", metavar="EFFECT,...", help=_FORBID_HELP)] = "gpu-init",
    timeout: Annotated[float, typer.Option("--timeout", metavar="S", help="Kill an import that takes longer.")] = 60.0,
) -> None:
    """Import modules (this RUNS their code) and report GPU driver initialisation, threads, processes, time."""

    def run() -> int:
        from wheeldoctor.checks.imports import ImportProbeError
        from wheeldoctor.commands.imports import Forbid, run_imports
        from wheeldoctor.report import imports_text
        from wheeldoctor.report import json as json_report

        try:
            result = run_imports(tuple(modules), python, forbid=Forbid.parse(forbid), timeout=timeout)
        except (ImportProbeError, ValueError) as e:
            _fail(str(e))
        if json:
            sys.stdout.write(json_report.render(json_report.imports_document(result)))
        else:
            from rich.console import Console

            console = Console(highlight=False)
            if console.is_terminal:
                imports_text.render_rich(result, console)
            else:
                sys.stdout.writelines(line + "\n" for line in imports_text.render_plain(result))
        return EXIT_HEALTHY if result.healthy else EXIT_PROBLEMS

    _guard(run)


_FORMATS = ("text", "json", "github", "junit", "sarif")


def _format(chosen: str | None, json: bool) -> str:
    """``--format``, with ``--json`` as its alias; anything else is one line and exit 2."""
    if chosen is not None and chosen not in _FORMATS:
        _fail(f"unknown format {chosen!r}: choose one of {', '.join(_FORMATS)}")
    if json and chosen not in (None, "json"):
        _fail(f"--json is --format json: it cannot be combined with --format {chosen}")
    return "json" if json else chosen or "text"


def _target(python: str | None, path: list[str] | None, dpkg_admindir: str | None = None) -> Target:
    """The environment to inspect; refused when it could only be a pre-commit hook's own venv."""
    if not python and not path and os.path.basename(sys.prefix).startswith("py_env-"):
        # pre-commit installs a `language: python` hook into ~/.cache/pre-commit/…/py_env-*: checking
        # that venv would report on wheeldoctor's own dependencies, never on the project's.
        _fail(
            f"this would check only the hook's own environment ({sys.prefix}), not your project's",
            "give the hook `args: [--python, .venv/bin/python]`, or use the `wheeldoctor-system` hook",
        )
    return Target(python=python, paths=tuple(path or ()), dpkg_admindir=dpkg_admindir)


def _deliver(result: Result, chosen: str, output: str | None, rich: Rich = None, show_accepted: bool = False) -> None:
    """The report in ``chosen`` format to stdout; with ``output``, to that file and the text report to stdout."""
    from wheeldoctor.report.output import OutputError, append, write_atomic
    from wheeldoctor.report.render import Format, render, step_summary

    fmt = Format(chosen)
    if output is not None:
        try:
            write_atomic(output, render(result, fmt, show_accepted=show_accepted))
        except OutputError as e:
            _fail(str(e))
    if fmt is Format.GITHUB and os.environ.get("GITHUB_STEP_SUMMARY"):
        try:
            append(os.environ["GITHUB_STEP_SUMMARY"], step_summary(result))
        except OutputError as e:
            sys.stderr.write(f"warning: {e}\n")  # the annotations still go out
    if output is None and fmt is not Format.TEXT:
        sys.stdout.write(render(result, fmt, show_accepted=show_accepted))
    elif output is None or fmt is not Format.TEXT:
        from rich.console import Console

        console = Console(highlight=False)
        if console.is_terminal and rich is not None:
            rich(console)
        else:
            sys.stdout.write(render(result, Format.TEXT, show_accepted=show_accepted))


def main() -> None:
    """Console-script entry point."""
    app(prog_name="wheeldoctor")

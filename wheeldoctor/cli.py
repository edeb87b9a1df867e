"""The command line: thin commands that pick an environment, run checks, render, exit.

Exit codes: 0 healthy, 1 problems found, 2 could not run. Reports go to stdout,
errors and progress to stderr.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from wheeldoctor.where.target import Target, TargetError, load_target

if TYPE_CHECKING:
    from rich.console import Console

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


@app.callback()
def _root() -> None:
    """Verify that an installed Python environment holds the bytes its installers recorded."""


PythonOption = Annotated[
    str | None, typer.Option("--python", metavar="PATH", help="Inspect this interpreter's environment.")
]
PathOption = Annotated[
    list[str] | None,
    typer.Option("--path", metavar="DIR", help="Inspect this site directory (repeatable), in order."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the versioned JSON document on stdout.")]
JobsOption = Annotated[int | None, typer.Option("--jobs", "-j", min=1, help="Hashing threads (default: usable CPUs).")]
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
    except TargetError as e:
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
def _progress(quiet: bool) -> Iterator[_RichProgress | None]:
    """A progress bar on stderr while the body runs, when it is a terminal; None when piped."""
    sink = None if quiet or not sys.stderr.isatty() else _RichProgress()
    try:
        yield sink
    finally:
        if sink is not None:
            sink.close()


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


class _RichProgress:
    """A progress bar shown only once the work is known to be long."""

    LONG_BYTES = 256 << 20
    LONG_FILES = 20_000

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

        self._bar = Progress(
            TextColumn("hashing"),
            BarColumn(),
            DownloadColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._task: object | None = None

    def begin(self, files: int, total_bytes: int) -> None:
        if total_bytes >= self.LONG_BYTES or files >= self.LONG_FILES:
            self._task = self._bar.add_task("hash", total=max(total_bytes, 1))
            self._bar.start()

    def advance(self, files: int, done_bytes: int) -> None:
        if self._task is not None:
            self._bar.advance(self._task, done_bytes)  # type: ignore[arg-type]

    def close(self) -> None:
        if self._task is not None:
            self._bar.stop()


@app.command()
def check(
    names: Annotated[list[str] | None, typer.Argument(metavar="NAME...", help="Distributions to verify.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Verify every installed distribution.")] = False,
    python: PythonOption = None,
    path: PathOption = None,
    json: JsonOption = False,
    jobs: JobsOption = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="With --all, fail on distributions that cannot be verified too.")
    ] = False,
    no_cache: NoCacheOption = False,
) -> None:
    """Verify distributions' files against their RECORD (sha256 and size)."""

    def run() -> int:
        if bool(names) == all_:
            _fail("name the distributions to check, or pass --all (not both)")
        from wheeldoctor.commands.check import run_check
        from wheeldoctor.report import json as json_report
        from wheeldoctor.report import text

        with _no_cyclic_gc():
            env = load_target(Target(python=python, paths=tuple(path or ())), defer_records=True)
            with _progress(json) as sink:
                result = run_check(
                    env,
                    names or None,
                    jobs=jobs,
                    progress=sink,
                    strict=strict or not all_,
                    cache_dir=_cache_dir(no_cache),
                    processes=True,
                )
        _emit(
            json_report.check_document(result) if json else None,
            lambda: text.render_plain(result),
            lambda console: text.render_rich(result, console),
        )
        return EXIT_HEALTHY if result.healthy else EXIT_PROBLEMS

    _guard(run)


@app.command()
def wheels(
    files: Annotated[list[str], typer.Argument(metavar="WHEEL...", help="Wheel files to check before install.")],
    python: PythonOption = None,
    path: PathOption = None,
    json: JsonOption = False,
) -> None:
    """Check wheel files against their RECORDs, each other, and (optionally) an environment."""

    def run() -> int:
        from wheeldoctor.checks.preflight import preflight
        from wheeldoctor.formats.wheelfile import WheelError, read_wheel
        from wheeldoctor.report import json as json_report
        from wheeldoctor.report import text

        try:
            read = [read_wheel(f) for f in files]
        except WheelError as e:
            _fail(str(e))
        env = load_target(Target(python=python, paths=tuple(path or ()))) if (python or path) else None
        result = preflight(read, env)
        _emit(json_report.wheels_document(result) if json else None, lambda: text.render_preflight(result))
        return EXIT_HEALTHY if result.healthy else EXIT_PROBLEMS

    _guard(run)


@app.command()
def deps(python: PythonOption = None, path: PathOption = None, json: JsonOption = False) -> None:
    """Check requirements (as pip check does, and further), duplicate dist-infos and compatibility."""

    def run() -> int:
        from wheeldoctor.commands.deps import run_deps
        from wheeldoctor.report import deps_text
        from wheeldoctor.report import json as json_report

        target = Target(python=python, paths=tuple(path or ()))
        result = run_deps(load_target(target, with_tags=True, with_records=False))
        _emit(
            json_report.deps_document(result) if json else None,
            lambda: deps_text.render_plain(result),
            lambda console: deps_text.render_rich(result, console),
        )
        return EXIT_HEALTHY if result.healthy else EXIT_PROBLEMS

    _guard(run)


@app.command()
def doctor(
    python: PythonOption = None,
    path: PathOption = None,
    json: JsonOption = False,
    jobs: JobsOption = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Fail on distributions that cannot be verified too.")
    ] = False,
    no_cache: NoCacheOption = False,
) -> None:
    """Everything at once: files, clashes, dependencies, duplicates, compatibility; one exit code."""

    def run() -> int:
        from wheeldoctor.commands.doctor import run_doctor
        from wheeldoctor.report import deps_text
        from wheeldoctor.report import json as json_report

        with _no_cyclic_gc():
            env = load_target(Target(python=python, paths=tuple(path or ())), with_tags=True, defer_records=True)
            with _progress(json) as sink:
                result = run_doctor(env, jobs=jobs, progress=sink, strict=strict, cache_dir=_cache_dir(no_cache))
        _emit(
            json_report.doctor_document(result) if json else None,
            lambda: deps_text.render_doctor_plain(result),
            lambda console: deps_text.render_doctor_rich(result, console),
        )
        return EXIT_HEALTHY if result.healthy else EXIT_PROBLEMS

    _guard(run)


def _emit(
    document: dict[str, Any] | None,
    plain: Callable[[], Iterable[str]],
    rich: Callable[[Console], None] | None = None,
) -> None:
    """The JSON document when there is one; else tables on a terminal, plain lines when piped."""
    if document is not None:
        from wheeldoctor.report import json as json_report

        sys.stdout.write(json_report.render(document))
        return
    from rich.console import Console

    console = Console(highlight=False)
    if console.is_terminal and rich is not None:
        rich(console)
    else:
        for line in plain():
            sys.stdout.write(line + "\n")


def main() -> None:
    """Console-script entry point."""
    app(prog_name="wheeldoctor")

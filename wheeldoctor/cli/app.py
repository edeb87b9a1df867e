"""The typer app: each command built from the fields of its options class, its body run by the guard.

A command's parameters are not written out here: they are its options class's fields, each
with its :class:`~wheeldoctor.cli.options.Spec` (``cli/options.py``), which the fast parser
(``cli/plain.py``) reads too. Reports go to stdout, errors and progress to stderr (see
:mod:`wheeldoctor.cli.runner`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import MISSING, fields
from typing import Annotated, Any

import typer

from wheeldoctor.cli import commands
from wheeldoctor.cli.check import CheckOptions
from wheeldoctor.cli.deps import DepsOptions
from wheeldoctor.cli.doctor import DoctorOptions, doctor
from wheeldoctor.cli.fix import FixOptions, fix
from wheeldoctor.cli.fleet import DiffOptions, SnapshotOptions, diff, snapshot
from wheeldoctor.cli.imports import ImportsOptions, imports
from wheeldoctor.cli.options import COUNT, FLAG, MANY, NUMBER, VALUE, WORDS, Spec, build
from wheeldoctor.cli.runner import exit_now, guard
from wheeldoctor.cli.wheels import WheelsOptions, wheels

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},  # -h as pip, uv and ruff take it
    help="Verify that an installed Python environment holds the bytes its installers recorded.",
)


def _show_version(value: bool) -> None:
    if value:
        raise SystemExit(commands.body("version")(None))


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", callback=_show_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Verify that an installed Python environment holds the bytes its installers recorded."""


#: What typer converts a value of each kind to (a repeatable one: a list, or None when not given).
_TYPES: dict[str, object] = {
    FLAG: bool,
    VALUE: str | None,
    MANY: list[str] | None,
    COUNT: int | None,
    NUMBER: float,
    WORDS: list[str] | None,
}


def _parameter(name: str, spec: Spec, default: object) -> inspect.Parameter:
    """The parameter typer reads for one field: its type, its ``typer.Option`` or ``typer.Argument``, its default."""
    if spec.kind == WORDS:
        info: Any = typer.Argument(metavar=spec.metavar, help=spec.help)
        kind: object = list[str] if spec.required else _TYPES[WORDS]
        given: object = inspect.Parameter.empty if spec.required else None
    else:
        info = typer.Option(*spec.names, metavar=spec.metavar, help=spec.help, min=1 if spec.kind == COUNT else None)
        kind = str if spec.kind == VALUE and default is not None else _TYPES[spec.kind]
        given = None if spec.kind == MANY else default
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=given, annotation=Annotated[kind, info])


def _command(name: str, options: type, body: Callable[[Any], int], summary: str) -> None:
    """Register ``name``: typer parses its options class's fields, and the guard runs ``body`` on them."""

    def command(**values: Any) -> None:
        guard(lambda: body(build(options, values)))

    parameters = []
    for field in fields(options):
        default = field.default if field.default is not MISSING else None
        parameters.append(_parameter(field.name, field.metadata["cli"], default))
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    app.command(name, help=summary)(command)


def _fast(name: str) -> Callable[[Any], int]:
    """The body of a command the fast parser runs too, found when it runs, as the fast path finds it."""

    def run(options: Any) -> int:
        return commands.body(name)(options)

    return run


_command(
    "check",
    CheckOptions,
    _fast("check"),
    "Verify distributions' files against their RECORD or package manager's record (--all: start-up hooks too).",
)
_command(
    "wheels",
    WheelsOptions,
    wheels,
    "Check wheel files (or a lock's wheels, by their RECORDs) against each other and (optionally) an environment.",
)
_command(
    "deps",
    DepsOptions,
    _fast("deps"),
    "Check requirements (as pip check does, and further), duplicate dist-infos and compatibility.",
)
_command(
    "doctor",
    DoctorOptions,
    doctor,
    "Everything at once: files, clashes, start-up hooks, dependencies, duplicates, compatibility; one exit code.",
)
_command("fix", FixOptions, fix, "Repair what check and doctor report, with the recorded installer; then verify again.")
_command(
    "imports",
    ImportsOptions,
    imports,
    "Import modules (this RUNS their code) and report GPU driver initialisation, threads, processes, time.",
)
_command(
    "snapshot",
    SnapshotOptions,
    snapshot,
    "Verify every distribution (as check --all) and write a compact, canonical snapshot to compare across nodes.",
)
_command(
    "diff",
    DiffOptions,
    diff,
    "Compare snapshots of several nodes: what differs, and with three or more, the odd ones out by majority.",
)


def main() -> None:
    """Console-script entry point: the command, then the process ends at once (``exit_now``)."""
    try:
        app(prog_name="wheeldoctor")
    except SystemExit as done:
        exit_now(done.code)

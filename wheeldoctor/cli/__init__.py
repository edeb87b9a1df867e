"""The command line: options, exit codes, and where each report goes; the only stage that talks to a terminal.
Plain ``--version``, ``deps`` and ``check`` run without typer (``cli/plain.py``); the rest through ``cli/app.py``."""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Console-script entry point: the command is parsed (exactly without typer where it can be) and run."""
    from wheeldoctor.cli.plain import parse

    argv = sys.argv[1:]
    parsed = parse(argv)
    if parsed is None:
        from wheeldoctor.cli.app import main as run_app

        run_app()
        return
    from wheeldoctor.cli.commands import BODIES
    from wheeldoctor.cli.runner import exit_now, guard

    command, options = parsed
    try:
        guard(lambda: BODIES[command](**options))
    except SystemExit as done:
        exit_now(done.code)

"""The command line: options, exit codes, and where each report goes; the only stage that talks to a terminal.
Plain ``--version``, ``deps`` and ``check`` run without typer (``cli/plain.py``); the rest through ``cli/app.py``."""

from __future__ import annotations

import os
import sys

__all__ = ["interrupted", "main"]

EXIT_INTERRUPTED = 130


def interrupted() -> None:
    """Ctrl-C: one line on stderr and exit 130, wherever it came (start-up imports included).

    The atexit functions run, then ``os._exit``: an interrupted interpreter's teardown can
    raise again in a half-imported module and print the traceback this is here to avoid.
    """
    import atexit

    try:
        sys.stderr.write("wheeldoctor: interrupted\n")
        sys.stderr.flush()
        atexit._run_exitfuncs()  # as at a normal exit (worker pools, temporary files)
    except (OSError, ValueError, KeyboardInterrupt):
        pass
    os._exit(EXIT_INTERRUPTED)


def main() -> None:
    """Console-script entry point: the command is parsed (exactly without typer where it can be) and run.

    Ctrl-C anywhere, imports included, is one line and exit 130.
    """
    try:
        _run(sys.argv[1:])
    except KeyboardInterrupt:
        interrupted()


def _run(argv: list[str]) -> None:
    from wheeldoctor.cli.plain import parse
    from wheeldoctor.cli.runner import exit_now, guard, no_cyclic_gc

    try:
        with no_cyclic_gc():  # the parse's and the body's imports too (see no_cyclic_gc)
            parsed = parse(argv)
            if parsed is not None:
                from wheeldoctor.cli import commands

                command, options = parsed
                guard(lambda: commands.body(command)(options))
    except SystemExit as done:
        exit_now(done.code)
    from wheeldoctor.cli.app import main as run_app

    run_app()

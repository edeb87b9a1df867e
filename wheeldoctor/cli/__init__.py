"""The command line: options, exit codes, and where each report goes; the only stage that talks to a terminal."""

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
    """Console-script entry point: the app is imported and run; Ctrl-C is one line and exit 130."""
    try:
        from wheeldoctor.cli.app import main as run_app

        run_app()
    except KeyboardInterrupt:
        interrupted()

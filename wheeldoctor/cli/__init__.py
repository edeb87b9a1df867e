"""The command line: options, exit codes, and where each report goes; the only stage that talks to a terminal.
Nothing heavy here: :func:`main` starts ``--python``'s probe before the app (``cli/app.py``) is imported."""

from __future__ import annotations

import os
import sys

__all__ = ["interrupted", "main"]

EXIT_INTERRUPTED = 130


def interrupted() -> None:
    """Ctrl-C: one line on stderr and exit 130, wherever it came (start-up imports included).

    The atexit functions run (children started ahead are ended), then ``os._exit``: an
    interrupted interpreter's teardown can raise again in a half-imported module and print
    the traceback this is here to avoid.
    """
    import atexit

    try:
        sys.stderr.write("wheeldoctor: interrupted\n")
        sys.stderr.flush()
        atexit._run_exitfuncs()  # children started ahead are ended, as at a normal exit
    except (OSError, ValueError, KeyboardInterrupt):
        pass
    os._exit(EXIT_INTERRUPTED)


def main() -> None:
    """Console-script entry point: ``--python``'s probe is started, then the app is imported and run."""
    try:
        from wheeldoctor.cli.ahead import start_probe_ahead

        start_probe_ahead(sys.argv[1:])
        from wheeldoctor.cli.app import main as run_app

        run_app()
    except KeyboardInterrupt:
        interrupted()

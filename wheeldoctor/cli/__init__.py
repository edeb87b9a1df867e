"""The command line: options, exit codes, and where each report goes; the only stage that talks to a terminal.

Nothing heavy here. :func:`main` starts ``--python``'s probe, then runs the plainest command
lines (``cli/plain.py``: ``--version``, ``deps``, ``check`` written out plainly) straight to
their bodies; every other command line goes to the typer app (``cli/app.py``), imported only then.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Console-script entry point: ``--python``'s probe is started, then the command is parsed and run."""
    from wheeldoctor.cli.ahead import start_probe_ahead

    argv = sys.argv[1:]
    start_probe_ahead(argv)
    from wheeldoctor.cli.plain import parse

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

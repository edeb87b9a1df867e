"""The command line: options, exit codes, and where each report goes; the only stage that talks to a terminal.
Nothing heavy here: :func:`main` starts ``--python``'s probe before the app (``cli/app.py``) is imported."""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Console-script entry point: ``--python``'s probe is started, then the app is imported and run."""
    from wheeldoctor.cli.ahead import start_probe_ahead

    start_probe_ahead(sys.argv[1:])
    from wheeldoctor.cli.app import main as run_app

    run_app()

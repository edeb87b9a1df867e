"""The command line: options, exit codes, and where each report goes; the only stage that talks to a terminal."""

from __future__ import annotations

__all__ = ["main"]


def main() -> None:
    """Console-script entry point: the app is imported and run."""
    from wheeldoctor.cli.app import main as run_app

    run_app()

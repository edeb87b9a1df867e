"""The command line: options, exit codes, and where each report goes; the only stage that talks to a terminal."""

from __future__ import annotations

from wheeldoctor.cli.app import app, main

__all__ = ["app", "main"]

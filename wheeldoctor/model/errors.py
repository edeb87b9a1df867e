"""Errors in what the user gave a command (a config, a baseline): one line each, exit 2."""

from __future__ import annotations


class InputError(ValueError):
    """A file the user gave cannot be used; the message is one line naming it (and the key)."""

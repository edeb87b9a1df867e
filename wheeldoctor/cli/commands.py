"""The bodies both parsers run, by command: typer's (``cli/app.py``) and the exact fast one (``cli/plain.py``).

``--version`` is here; ``check`` and ``deps`` are in their own modules, each with its options
class, and only the one that runs is imported (no options class is made for ``--version``).
"""

from __future__ import annotations

import sys

from wheeldoctor.cli.runner import EXIT_HEALTHY

TYPE_CHECKING = False  # typing stays off the start-up path: ``--version`` runs through here
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def version(options: None = None) -> int:
    """``--version``: the version on stdout."""
    from wheeldoctor import __version__

    sys.stdout.write(f"wheeldoctor {__version__}\n")
    return EXIT_HEALTHY


def body(command: str) -> Callable[[Any], int]:
    """The body of ``command``: ``version``, ``check`` or ``deps`` (of :data:`wheeldoctor.cli.plain.COMMANDS`)."""
    if command == "check":
        from wheeldoctor.cli.check import check

        return check
    if command == "deps":
        from wheeldoctor.cli.deps import deps

        return deps
    return version

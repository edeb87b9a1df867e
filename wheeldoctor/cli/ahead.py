"""What the command line starts before it imports anything heavy: the ``--python`` probe.

Importing the app (typer, the checks) takes 70-110 ms; the probe of a big environment's
interpreter takes about as long again, and the command waits for its answer first. So
``main`` reads ``--python`` from the raw arguments, as the parser will, starts the probe,
and only then imports the app, which collects the probe's answer. Where the arguments
are not plainly understood, nothing is started: the command starts the probe itself.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing and collections cost milliseconds to import, before the probe starts
if TYPE_CHECKING:
    from collections.abc import Sequence

#: The commands that inspect ``--python``'s environment, and whether they ask it for tags.
PROBING = {"check": False, "deps": True, "doctor": True}
#: Every option of those commands that takes a value: the argument after one is its value.
VALUE_OPTIONS = frozenset(
    {"--python", "--path", "--format", "--output", "-o", "--jobs", "-j", "--config", "--baseline"}
    | {"--write-baseline", "--dpkg-admindir"}
)


def python_ahead(argv: Sequence[str]) -> tuple[str, bool] | None:
    """``(--python's value, whether tags are asked for)`` in the arguments after the program name, if plain.

    None unless the first argument is a command that probes, ``--python`` is given, and
    nothing makes the reading doubtful (``--path``, which turns the probe off, ``--``, or
    ``--help``).
    """
    if not argv or argv[0] not in PROBING:
        return None
    python = None
    at = 1
    while at < len(argv):
        word = argv[at]
        name = word.partition("=")[0] if word.startswith("--") else word
        if word in ("--", "--help") or name == "--path":
            return None
        if word == "--python":
            python = argv[at + 1] if at + 1 < len(argv) else None
        elif name == "--python":
            python = word.partition("=")[2]
        if word in VALUE_OPTIONS:
            at += 1  # its value, whatever it looks like
        at += 1
    return (python, PROBING[argv[0]]) if python else None


def start_probe_ahead(argv: Sequence[str]) -> None:
    """Start the probe :func:`python_ahead` finds in ``argv``, if any."""
    found = python_ahead(argv)
    if found is not None:
        from wheeldoctor.where import probe

        probe.start(*found)

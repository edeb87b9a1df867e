"""What the command line starts before it imports anything heavy: the ``--python`` probe, and
for ``check --all`` the proving of the biggest files (:mod:`wheeldoctor.checks.ahead`).

Importing the app (typer, the checks) takes 70-110 ms; the probe of a big environment's
interpreter takes about as long again, and the command waits for its answer first. So
``main`` reads the raw arguments, as the parser will, starts the probe, and only then
imports the app, which collects the probe's answer. Where the arguments are not plainly
understood, nothing is started: the command starts the probe itself.
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
    | {"--write-baseline", "--dpkg-admindir", "--select", "--ignore"}
)


def plain_words(argv: Sequence[str]) -> tuple[dict[str, str], list[str]] | None:
    """``({option: its last value, '' for a flag}, positional words)`` of the arguments after the command.

    None where the reading is doubtful: ``--``, ``--help``, or ``--path`` (which turns the
    probe off).
    """
    options: dict[str, str] = {}
    positional: list[str] = []
    at = 1
    while at < len(argv):
        word = argv[at]
        name = word.partition("=")[0] if word.startswith("--") else word
        if word in ("--", "--help") or name == "--path":
            return None
        if word in VALUE_OPTIONS:
            options[word] = argv[at + 1] if at + 1 < len(argv) else ""
            at += 1  # its value, whatever it looks like
        elif name != word:
            options[name] = word.partition("=")[2]
        elif word.startswith("-"):
            options[word] = ""
        else:
            positional.append(word)
        at += 1
    return options, positional


def python_ahead(argv: Sequence[str]) -> tuple[str, bool] | None:
    """``(--python's value, whether tags are asked for)`` in the arguments after the program name, if plain.

    None unless the first argument is a command that probes, ``--python`` is given, and
    nothing makes the reading doubtful (``--path``, which turns the probe off, ``--``, or
    ``--help``).
    """
    words = plain_words(argv) if argv and argv[0] in PROBING else None
    python = words[0].get("--python") if words is not None else None
    return (python, PROBING[argv[0]]) if python else None


def check_ahead(argv: Sequence[str]) -> tuple[str | None, int | None, bool] | None:
    """``(--python's value or None, --jobs or None, --no-cache)`` of a plain ``check --all``; else None."""
    words = plain_words(argv) if argv and argv[0] == "check" else None
    if words is None or "--all" not in words[0] or words[1]:
        return None
    options = words[0]
    if any(word.startswith("-j") and word != "-j" for word in options):
        return None  # -jN: read by the parser alone
    jobs = options.get("--jobs", options.get("-j"))
    if jobs is not None and not (jobs.isdigit() and jobs.isascii()):
        return None
    python = options.get("--python")
    if python == "":
        return None
    return python, None if jobs is None else int(jobs), "--no-cache" in options


def start_probe_ahead(argv: Sequence[str]) -> None:
    """Start the probe :func:`python_ahead` finds in ``argv``, if any, and what :func:`check_ahead` asks for."""
    found = python_ahead(argv)
    if found is not None:
        from wheeldoctor.where import probe

        probe.start(*found)
    checking = check_ahead(argv)
    if checking is not None:
        from wheeldoctor.checks import ahead

        ahead.start(*checking)

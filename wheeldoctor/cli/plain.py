"""An exact parse of the plainest command lines, so that they run without importing typer.

``--version``, ``deps`` and ``check`` with their options written out plainly (``--opt VALUE``,
``--opt=VALUE``, ``-o VALUE``, ``-j N``, flags, names) parse here to the options object typer
would build for the same body (``cli/check.py``, ``cli/deps.py``), read from the same field
declarations (``cli/options.py``). Anything else, or anything in doubt (``--help``, ``-h``,
``--``, an unknown or abbreviated option, a flag given a value, a value that is empty or
starts with ``-``, a short option joined to its value, a ``--jobs`` that is not a plain
positive number, a missing value), returns None and typer parses it, errors and help included.
``tests/test_plain_parse.py`` holds this parse to typer's, option by option.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing stays off the path this module exists for
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from wheeldoctor.cli.check import CheckOptions
    from wheeldoctor.cli.deps import DepsOptions

    Parsed = tuple[str, CheckOptions | DepsOptions | None]

#: The commands parsed here; any other is typer's.
COMMANDS = ("check", "deps")


def parse(argv: Sequence[str]) -> Parsed | None:
    """``(command, options)`` for the body of ``argv`` (the words after the program), or None.

    ``("version", None)`` for ``--version`` or ``-V`` alone.
    """
    if len(argv) == 1 and argv[0] in ("--version", "-V"):
        return "version", None
    if not argv or argv[0] not in COMMANDS:
        return None
    options: type[CheckOptions | DepsOptions]
    if argv[0] == "check":
        from wheeldoctor.cli.check import CheckOptions

        options = CheckOptions
    else:
        from wheeldoctor.cli.deps import DepsOptions

        options = DepsOptions
    values = _values(argv[1:], options)
    return None if values is None else (argv[0], options(**values))


def _values(words: Sequence[str], options: type[CheckOptions | DepsOptions]) -> dict[str, Any] | None:
    """The fields ``words`` set, as ``options`` types them; None where in doubt."""
    from wheeldoctor.cli.options import COUNT, FLAG, MANY, VALUE, WORDS, specs

    by_name: dict[str, tuple[str, str]] = {}
    positional_to = None
    for field, spec in specs(options):
        if spec.kind == WORDS:
            positional_to = field
        by_name.update((name, (field, spec.kind)) for name in spec.names)
    given: dict[str, Any] = {}
    many: dict[str, list[str]] = {}
    at = 0
    while at < len(words):
        word = words[at]
        at += 1
        if not word.startswith("-"):
            if positional_to is None:
                return None
            many.setdefault(positional_to, []).append(word)
            continue
        name, joined, inline = word.partition("=") if word.startswith("--") else (word, "", "")
        field, kind = by_name.get(name, ("", ""))
        if kind == FLAG and not joined:
            given[field] = True
            continue
        if kind not in (VALUE, MANY, COUNT):
            return None  # unknown, a flag given a value, or a kind this parse does not take
        if not joined and at < len(words):
            inline = words[at]
            at += 1
        elif not joined:
            return None
        value = _value(inline, kind)
        if value is None:
            return None
        if kind == MANY:
            many.setdefault(field, []).append(inline)
        else:
            given[field] = value
    given.update((field, tuple(values)) for field, values in many.items())
    return given


def _value(text: str, kind: str) -> str | int | None:
    """An option's value as its kind takes it; None where typer might read it otherwise."""
    from wheeldoctor.cli.options import COUNT

    if not text or text.startswith("-"):
        return None
    if kind != COUNT:
        return text
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        return None
    return int(text)

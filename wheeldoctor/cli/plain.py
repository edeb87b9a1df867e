"""An exact parse of the plainest command lines, so that they run without importing typer.

``--version``, ``deps`` and ``check`` with their options written out plainly (``--opt VALUE``,
``--opt=VALUE``, ``-o VALUE``, ``-j N``, flags, names) parse here to the keyword arguments
typer would pass to the same body (``cli/commands.py``). Anything else, or anything in
doubt (``--help``, ``--``, an unknown or abbreviated option, a flag given a value, a value
that is empty or starts with ``-``, a short option joined to its value, a ``--jobs`` that is
not a plain positive number, a missing value), returns None and typer parses it, errors and
help included. ``tests/test_plain_parse.py`` holds this parse to typer's, option by option.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs milliseconds to import, on the path this module exists for
if TYPE_CHECKING:
    from collections.abc import Sequence

FLAG, VALUE, MANY, COUNT = "flag", "value", "many", "count"
"""How an option is given: alone (True), with one value (the last one wins), repeatable
(a list), with a positive whole number."""

#: What the shared options are called on the command line, and their keyword and kind.
_SHARED = {
    "--python": ("python", VALUE),
    "--path": ("path", MANY),
    "--json": ("json", FLAG),
    "--format": ("format_", VALUE),
    "--output": ("output", VALUE),
    "-o": ("output", VALUE),
    "--no-cache": ("no_cache", FLAG),
    "--dpkg-admindir": ("dpkg_admindir", VALUE),
}
_CHECK = {
    **_SHARED,
    "--all": ("all_", FLAG),
    "--jobs": ("jobs", COUNT),
    "-j": ("jobs", COUNT),
    "--strict": ("strict", FLAG),
    "--config": ("config", VALUE),
    "--baseline": ("baseline", VALUE),
    "--write-baseline": ("write_baseline", VALUE),
    "--show-accepted": ("show_accepted", FLAG),
    "--show-unowned": ("show_unowned", FLAG),
    "--lock": ("lock", VALUE),
    "--find-links": ("find_links", MANY),
    "--verify-wheels": ("verify_wheels", FLAG),
    "--extra": ("extra", MANY),
    "--group": ("group", MANY),
    "--select": ("select", MANY),
    "--ignore": ("ignore", MANY),
    "--exit-zero": ("exit_zero", FLAG),
    "--quiet": ("quiet", FLAG),
    "-q": ("quiet", FLAG),
    "--verbose": ("verbose", FLAG),
    "-v": ("verbose", FLAG),
}
#: Per command: its options, and the keyword its positional words go to (None: it takes none).
COMMANDS: dict[str, tuple[dict[str, tuple[str, str]], str | None]] = {
    "deps": (_SHARED, None),
    "check": (_CHECK, "names"),
}
_DEFAULTS = {FLAG: False, VALUE: None, MANY: None, COUNT: None}


def parse(argv: Sequence[str]) -> tuple[str, dict[str, object]] | None:
    """``(command, keyword arguments)`` for the body of ``argv`` (the words after the program), or None.

    ``("version", {})`` for ``--version`` or ``-V`` alone.
    """
    if len(argv) == 1 and argv[0] in ("--version", "-V"):
        return "version", {}
    if not argv or argv[0] not in COMMANDS:
        return None
    options, positional_to = COMMANDS[argv[0]]
    given: dict[str, object] = {keyword: _DEFAULTS[kind] for keyword, kind in options.values()}
    many: dict[str, list[str]] = {}
    positional: list[str] = []
    at = 1
    while at < len(argv):
        word = argv[at]
        at += 1
        if not word.startswith("-"):
            if positional_to is None:
                return None
            positional.append(word)
            continue
        name, joined, inline = word.partition("=") if word.startswith("--") else (word, "", "")
        if name not in options:
            return None
        keyword, kind = options[name]
        if kind == FLAG:
            if joined:
                return None
            given[keyword] = True
            continue
        if joined:
            value = inline
        elif at < len(argv):
            value = argv[at]
            at += 1
        else:
            return None
        if not value or value.startswith("-"):
            return None
        if kind == COUNT:
            if not (value.isascii() and value.isdigit()) or int(value) < 1:
                return None
            given[keyword] = int(value)
        elif kind == MANY:
            given[keyword] = many.setdefault(keyword, [])
            many[keyword].append(value)
        else:
            given[keyword] = value
    if positional_to is not None:
        given[positional_to] = positional or None
    return argv[0], given

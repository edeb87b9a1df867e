""".pth files as ``site.addpackage`` reads them: path lines and lines that run code.

Pure: takes bytes, returns data, never executes anything. Which lines run is decided
exactly as CPython's ``site.addpackage`` decides it, for the Python version given:

- a line starting with ``#`` is a comment, a line that is only whitespace is skipped;
- a line starting with ``import`` and a space or tab is passed to ``exec()``, whole,
  semicolons and all (so ``import os; os.system(...)`` runs both statements);
- any other line, stripped of trailing whitespace, is a directory joined to the site
  directory (added to ``sys.path`` if it exists).

Python 3.13 changed how the file is read: it decodes the bytes as UTF-8 with an
optional BOM and splits with ``str.splitlines()`` (which also breaks at ``\\f``, ``\\v``,
``\\x1c``-``\\x1e``, ``\\x85``, ``\\u2028`` and ``\\u2029``). Earlier versions iterate a
text file in the locale's encoding with universal newlines (``\\n``, ``\\r``, ``\\r\\n``),
so a BOM stays part of the first line. The locale is taken to be UTF-8 (undecodable
bytes are kept as surrogates): that is the encoding of every locale this tool meets.
"""

from __future__ import annotations

import re

from wheeldoctor.model.startup import PthFile, PthLine

#: The first version whose site.addpackage splits with str.splitlines() after a utf-8-sig decode.
SPLITLINES_SINCE = (3, 13)

# Universal newlines, as io.TextIOWrapper(newline=None) reads lines before 3.13.
_UNIVERSAL = re.compile(r"\r\n|\r|\n")


def split_lines(data: bytes, version: tuple[int, int]) -> list[str]:
    """The lines of ``data`` as the ``site`` of Python ``version`` sees them, line breaks removed."""
    if version >= SPLITLINES_SINCE:
        return data.decode("utf-8-sig", "surrogateescape").splitlines()
    text = data.decode("utf-8", "surrogateescape")
    lines = _UNIVERSAL.split(text)
    if lines and lines[-1] == "":
        lines.pop()  # the break after the last line starts no new one
    return lines


def parse_pth(data: bytes, version: tuple[int, int]) -> PthFile:
    """Classify every line of a .pth file as the ``site`` of Python ``version`` would."""
    found: list[PthLine] = []
    for number, line in enumerate(split_lines(data, version), 1):
        if line.startswith("#") or not line.strip():
            continue
        if line.startswith(("import ", "import\t")):
            found.append(PthLine(number, line, executes=True))
        else:
            found.append(PthLine(number, line.rstrip(), executes=False))
    return PthFile(tuple(found))

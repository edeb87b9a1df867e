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


def split_lines(data: bytes, version: tuple[int, int], *, start: bool = True) -> list[str]:
    """The lines of ``data`` as the ``site`` of Python ``version`` sees them, line breaks removed.

    ``start`` is False for a later piece of a file cut just after a ``\\n`` (a BOM is
    dropped only at the start of the file).
    """
    if version >= SPLITLINES_SINCE:
        return data.decode("utf-8-sig" if start else "utf-8", "surrogateescape").splitlines()
    text = data.decode("utf-8", "surrogateescape")
    lines = _UNIVERSAL.split(text)
    if lines and lines[-1] == "":
        lines.pop()  # the break after the last line starts no new one
    return lines


def _classify(lines: list[str], first: int) -> list[PthLine]:
    found: list[PthLine] = []
    for number, line in enumerate(lines, first):
        if line.startswith("#") or not line.strip():
            continue
        if line.startswith(("import ", "import\t")):
            found.append(PthLine(number, line, executes=True))
        else:
            found.append(PthLine(number, line.rstrip(), executes=False))
    return found


def parse_pth(data: bytes, version: tuple[int, int]) -> PthFile:
    """Classify every line of a .pth file as the ``site`` of Python ``version`` would."""
    return PthFile(tuple(_classify(split_lines(data, version), 1)))


class PthTooLarge(ValueError):
    """A streamed .pth with a line or a count of acted-on lines over :class:`PthStream`'s bounds."""


class PthStream:
    """:func:`parse_pth` for a file fed in chunks: same lines, memory bounded.

    The file is cut just after each ``\\n``: no line break of either reading (universal
    newlines, or ``str.splitlines()`` after UTF-8 decoding) spans such a cut, and no UTF-8
    sequence does, so each piece splits as it would inside the whole. Held at once: one
    piece, at most ``max_line`` bytes without a ``\\n`` plus a chunk, and at most
    ``max_lines`` lines that ``site`` acts on; beyond either, :meth:`feed` raises
    :class:`PthTooLarge`.
    """

    def __init__(self, version: tuple[int, int], *, max_line: int, max_lines: int) -> None:
        self._version = version
        self._max_line = max_line
        self._max_lines = max_lines
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._next_line = 1
        self._started = False
        self._lines: list[PthLine] = []

    def feed(self, chunk: bytes) -> None:
        """Take the next chunk of the file."""
        cut = chunk.rfind(b"\n")
        if cut < 0:
            self._pending.append(chunk)
            self._pending_size += len(chunk)
            if self._pending_size > self._max_line:
                raise PthTooLarge(f"has a line over {self._max_line} bytes")
            return
        piece = b"".join([*self._pending, chunk[: cut + 1]])
        rest = chunk[cut + 1 :]
        self._pending, self._pending_size = ([rest], len(rest)) if rest else ([], 0)
        self._take(piece)

    def finish(self) -> PthFile:
        """The lines of the whole file, once every chunk has been fed."""
        if self._pending:
            self._take(b"".join(self._pending))
            self._pending, self._pending_size = [], 0
        return PthFile(tuple(self._lines))

    def _take(self, piece: bytes) -> None:
        lines = split_lines(piece, self._version, start=not self._started)
        self._started = True
        self._lines.extend(_classify(lines, self._next_line))
        self._next_line += len(lines)
        if len(self._lines) > self._max_lines:
            raise PthTooLarge(f"has over {self._max_lines} lines that site acts on")

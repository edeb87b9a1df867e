"""The header fields of METADATA and PKG-INFO, exactly as ``email.parser`` reads them.

Core metadata is an email header block, and ``email.parser`` (with the compat32 policy,
as ``importlib.metadata`` and ``packaging`` use it) is what defines how it reads. Nearly
every file is plain: ``Name: value`` lines, some values folded onto indented lines (a
License text), every line ending in LF (or every one in CRLF, as three wheels of a
197-distribution ML stack have it), UTF-8. Those are read here, one regular expression a
line, and ``email`` is not imported (docs/performance.md says what that saves). Anything
else (a defect email works around, a From line, bytes that are not UTF-8) goes to
``email.parser`` itself. Tests hold the two to the same fields on every kind of file.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from email.parser import HeaderParser

#: A field line as email's feed parser takes it: a name of printable ASCII but ``:`` and
#: space, a colon, then the value less its leading blanks (compat32's
#: ``header_source_parse``).
_FIELD = re.compile(r"([\041-\071\073-\176]+):[ \t]*(.*)")


def header_fields(data: bytes) -> dict[str, list[str]]:
    """Each field's values in order, by lower-cased name, from the header block of ``data``.

    The block ends at the first blank line; what follows (the long description) is never
    read. Values are what ``Message.get_all`` gives, as ``str``.
    """
    end = data.find(b"\n\n")
    block = data if end < 0 else data[: end + 2]
    fields = _plain_fields(block) if b"\r" not in block else _crlf_fields(data)
    return fields if fields is not None else _email_fields(block)


def _crlf_fields(data: bytes) -> dict[str, list[str]] | None:
    """The fields of a block whose every line ends in CRLF; None for any other.

    email ends a line at CRLF, CR or LF alike, so where every CR is followed by LF and
    every LF is preceded by CR, its lines are exactly the CRLF-separated ones.
    """
    end = data.find(b"\r\n\r\n")
    block = data if end < 0 else data[: end + 4]
    crlf = block.count(b"\r\n")
    if block.count(b"\r") != crlf or block.count(b"\n") != crlf:
        return None
    return _plain_fields(block, "\r\n")


def _plain_fields(block: bytes, newline: str = "\n") -> dict[str, list[str]] | None:
    """The fields of a plain block (see the module's docstring) whose lines end in ``newline``; None for any other."""
    if newline == "\n" and b"\r" in block:  # email also ends lines at a lone CR
        return None
    try:
        text = block.decode("utf-8")  # strict: email would make undecodable values Header objects
    except UnicodeDecodeError:
        return None
    fields: dict[str, list[str]] = {}
    match = _FIELD.fullmatch
    values: list[str] | None = None  # the values of the field last read
    for line in text.split(newline):
        if not line:  # the blank line that ends the block (or the end of a block without one)
            break
        if line[0] in " \t":  # a folded value goes on, its line breaks and indents kept, as email keeps them
            if values is None:  # folding nothing: a defect, which email works around
                return None
            values[-1] += newline + line
            continue
        found = match(line)
        if found is None:  # a From line, a line with no field name: email decides
            return None
        name, value = found.groups()
        values = fields.get(name.lower())
        if values is None:
            values = fields[name.lower()] = [value]
        else:
            values.append(value)
    return fields


def _email_fields(block: bytes) -> dict[str, list[str]]:
    from email.parser import HeaderParser

    try:
        return _parsed(HeaderParser(), block.decode("utf-8", "surrogateescape"))
    except UnicodeError:  # undecodable bytes beside other non-ASCII: email cannot give its value as text
        return _parsed(HeaderParser(), block.decode("utf-8", "replace"))


def _parsed(parser: HeaderParser, text: str) -> dict[str, list[str]]:
    fields: dict[str, list[str]] = {}
    for name, value in parser.parsestr(text).items():
        fields.setdefault(name.lower(), []).append(str(value))
    return fields

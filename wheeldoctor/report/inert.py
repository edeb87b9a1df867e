"""Untrusted text made inert at the edge: one function per kind of output.

Names, versions, RECORD paths, ``.pth`` lines and config strings come from files an
attacker may have written. Whatever a renderer builds from them passes through one of
these functions on its way out, so it cannot move a terminal's cursor, hide a line,
start a GitHub workflow command, inject Markdown or rich markup, or make a machine
format invalid UTF-8. The rules are documented in docs/security.md.

A URL's ``user:password@`` is hidden by both base functions, :func:`text` and :func:`data`
(:func:`wheeldoctor.model.credentials.redact`), so no format can show one.

Undecodable bytes of file names arrive as surrogate escapes (U+DC80-U+DCFF); every
format shows such a byte as the four characters ``\\xNN`` (one rule for all formats).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from wheeldoctor.model.credentials import redact

#: C0 controls, DEL, C1 controls, bidi embeddings/overrides/isolates and marks, the line and
#: paragraph separators (NEL is C1) and surrogate escapes of undecodable bytes.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\udc80-\udcff]")
#: Only the surrogate escapes: what machine formats (JSON, SARIF) cannot hold as UTF-8.
_UNDECODABLE = re.compile("[\ud800-\udfff]")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: What can start Markdown inline syntax in a table cell: emphasis, code, links and images,
#: HTML and entities, column breaks, strikethrough, math. CommonMark lets each be backslash-escaped.
_MARKDOWN = re.compile(r"[\\`*_\[\]()!<>|#~&$]")


def _escape(char: str) -> str:
    short = _SHORT.get(char)
    if short is not None:
        return short
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"  # the undecodable byte itself
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def text(value: str) -> str:
    """``value`` for a terminal or a log: every control, bidi and separator character shown escaped.

    The result is one line of printable text; undecodable bytes read ``\\xNN``; no URL's credentials.
    """
    return redact(_UNSAFE.sub(lambda m: _escape(m.group()), value))


def lines(values: Iterable[str]) -> Iterator[str]:
    """Each line made inert with :func:`text` (a renderer's plain lines, on their way out)."""
    for value in values:
        yield text(value)


def markup(value: str) -> str:
    """``value`` for rich: inert (:func:`text`), with its square brackets escaped so it is never markup."""
    from rich.markup import escape

    return escape(text(value))


def data(value: str) -> str:
    """``value`` for a UTF-8 machine format (JSON, SARIF): undecodable bytes read ``\\xNN``; the rest as is.

    Control characters need nothing here: the JSON encoder escapes them. No URL's credentials.
    """
    return redact(_UNDECODABLE.sub(lambda m: _escape(m.group()), value))


def document(value: object) -> object:
    """A JSON-shaped value with every string (keys too) passed through :func:`data`."""
    if isinstance(value, str):
        return data(value)
    if isinstance(value, dict):
        return {data(k) if isinstance(k, str) else k: document(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [document(v) for v in value]
    return value


def escape_data(value: str) -> str:
    """``@actions/core``'s ``escapeData``: ``%``, CR and LF percent-encoded."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """``@actions/core``'s ``escapeProperty``: :func:`escape_data` plus ``:`` and ``,``."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github_property(value: str) -> str:
    """An annotation's property value: inert (:func:`text`), then :func:`escape_property`."""
    return escape_property(text(value))


def markdown(value: str) -> str:
    """Text for a Markdown table cell: inert, every character that starts inline syntax backslash-escaped.

    No link, image, HTML, emphasis, code span or column break can start from it.
    """
    return _MARKDOWN.sub(lambda m: "\\" + m.group(), text(value))

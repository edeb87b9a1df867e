"""Credentials in URLs, hidden: the one function every report and every network message passes text through."""

from __future__ import annotations

import re

#: A URL's scheme and its user information, up to the last ``@`` of the authority (as ``urlsplit`` reads it:
#: ``https://u:p@ss@host`` is user ``u``, password ``p@ss``). The authority ends at ``/``, ``?``, ``#`` or a
#: space; not at a tab or newline, which ``urlsplit`` drops from a URL.
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)[^/?# ]*@")


def redact(text: str) -> str:
    """``text`` with the ``user:password@`` of every URL in it replaced by ``***@``; safe to show or write."""
    if "@" not in text or "://" not in text:
        return text
    return _USERINFO.sub(r"\1***@", text)

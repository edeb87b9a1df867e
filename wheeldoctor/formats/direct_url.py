"""``direct_url.json`` (PEP 610, the direct URL data structure): where a distribution was installed from.

Pure: bytes in, a :class:`DirectUrl` out, or None for anything that is not one. The file is
written by the installer, but a wheel can ship its own inside its dist-info, so what it says
is a claim, never proof; it is read as untrusted input: its size bounded by the caller, its
nesting checked before it is parsed, every field checked for its type. Credentials in a URL
(``user:token@``) are dropped on the way in: they never reach a report.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from dataclasses import dataclass

#: A direct_url.json above this size says nothing (pip's and uv's are a few hundred bytes).
LIMIT = 64 << 10

#: Hash names a digest may be given under, and the length of its hex digest.
_HEX_LENGTHS = {"sha256": 64, "sha384": 96, "sha512": 128, "sha1": 40, "md5": 32}


@dataclass(frozen=True, slots=True, kw_only=True)
class DirectUrl:
    """What ``direct_url.json`` says of a distribution's source."""

    kind: str
    """``archive`` (a wheel or sdist file at a URL or path), ``directory`` or ``vcs``."""
    url: str
    """The URL, without credentials."""
    editable: bool = False
    vcs: str | None = None
    commit_id: str | None = None
    requested_revision: str | None = None
    subdirectory: str | None = None
    hashes: tuple[tuple[str, str], ...] = ()
    """The archive's digests as ``(name, lower-case hex)``, sorted by name."""

    def digest(self, name: str) -> str | None:
        """The archive's digest under hash ``name`` (``sha256``), if given."""
        return next((value for key, value in self.hashes if key == name), None)


def parse(data: bytes) -> DirectUrl | None:
    """The source ``data`` describes; None where it is no readable direct_url.json."""
    if len(data) > LIMIT or data.count(b"[") + data.count(b"{") > 64:  # pip's has a handful: no deep nesting
        return None
    try:
        document = json.loads(data)
    except ValueError:
        return None
    if not isinstance(document, dict) or not isinstance(document.get("url"), str):
        return None
    url = _without_credentials(document["url"])
    if url is None:
        return None
    subdirectory = _text(document.get("subdirectory"))
    vcs, archive, directory = (document.get(k) for k in ("vcs_info", "archive_info", "dir_info"))
    if isinstance(vcs, dict) and isinstance(vcs.get("vcs"), str) and isinstance(vcs.get("commit_id"), str):
        return DirectUrl(
            kind="vcs",
            url=url,
            vcs=vcs["vcs"],
            commit_id=vcs["commit_id"],
            requested_revision=_text(vcs.get("requested_revision")),
            subdirectory=subdirectory,
        )
    if isinstance(archive, dict):
        return DirectUrl(kind="archive", url=url, hashes=_hashes(archive), subdirectory=subdirectory)
    if isinstance(directory, dict):
        return DirectUrl(
            kind="directory", url=url, editable=directory.get("editable") is True, subdirectory=subdirectory
        )
    return None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _hashes(archive: dict[str, object]) -> tuple[tuple[str, str], ...]:
    """``archive_info``'s digests: ``hashes`` (name -> hex), and the older ``hash`` (``name=hex``)."""
    found: dict[str, str] = {}
    given = archive.get("hashes")
    if isinstance(given, dict):
        found.update((k, v) for k, v in given.items() if isinstance(k, str) and isinstance(v, str))
    old = archive.get("hash")
    if isinstance(old, str) and "=" in old:
        name, _, value = old.partition("=")
        found.setdefault(name, value)
    return tuple(
        sorted(
            (name.lower(), value.lower())
            for name, value in found.items()
            if re.fullmatch(rf"[0-9a-fA-F]{{{_HEX_LENGTHS.get(name.lower(), 0)}}}", value)
            and name.lower() in _HEX_LENGTHS
        )
    )


def _without_credentials(url: str) -> str | None:
    """``url`` without ``user:password@`` (PEP 610 keeps a ``git@`` user, no secret); None where it is no URL."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if not parts.scheme or any(ord(c) < 0x20 or c == "\x7f" for c in url):
        return None
    if "@" not in parts.netloc:
        return url
    host = parts.hostname or ""
    netloc = ("git@" if parts.username == "git" and parts.password is None else "") + (
        f"[{host}]" if ":" in host else host
    )
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc + (f":{port}" if port is not None else "")))

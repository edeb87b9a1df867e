"""RECORD's plain rows, resolved without the csv module: for the gate's cold path.

Nearly every RECORD is plain: one ``path,algorithm=digest,size`` row per file, nothing
quoted, nothing malformed, every path inside the environment. Such rows can be read by
splitting at commas, with the standard library alone and nothing heavy imported. Anything
else makes :func:`plain_rows` step aside with None, for the full parser to decide.
"""

from __future__ import annotations

import os

from wheeldoctor.model.record_fields import (
    ACCEPTED_ALGORITHMS,
    MAX_SIZE_DIGITS,
    decode_digest,
    parse_size,
    unhashed_allowed,
)
from wheeldoctor.model.sitedirs import is_plain, is_within, plain_prefix

Recorded = tuple[str, str, bytes, int]
"""One hashed RECORD row, resolved: (absolute path, algorithm, raw digest, size)."""

#: Files from this size are proved by the gate's cold path before the rest of their RECORD is
#: parsed: a huge file would otherwise wait for a long RECORD's parse and end last.
EARLY = 16 << 20


def plain_rows(text: str, location: str, root: str) -> list[Recorded] | None:
    """RECORD's hashed rows with their paths resolved, or None unless every row is plain.

    Plain: no NUL, quote or lone carriage return (so that splitting at commas reads the
    fields exactly as the csv module would), three fields a row, no path listed twice, an
    accepted algorithm with a digest of its size, a size, and a relative path that stays
    inside ``root``. Rows the spec lets go unhashed (``.pyc``, RECORD itself) are skipped.
    """
    if "\x00" in text or '"' in text:
        return None
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if "\r" in text:
            return None
    plain = plain_prefix(location, root)
    prefix = location.rstrip(os.sep) + os.sep
    normpath = os.path.normpath
    listed: set[str] = set()
    rows: list[Recorded] = []
    for line in text.split("\n"):
        if not line:
            continue
        fields = line.split(",")
        if len(fields) != 3:
            return None
        path, hash_field, size_field = fields
        if not path or path in listed or os.path.isabs(path):
            return None
        listed.add(path)
        size = parse_size(size_field)
        if size_field and size is None:
            return None
        if not hash_field:
            if unhashed_allowed(path):
                continue
            return None
        algorithm, _, encoded = hash_field.partition("=")
        algorithm = algorithm.lower()
        digest = decode_digest(encoded) if encoded else None
        if size is None or digest is None or len(digest) != ACCEPTED_ALGORITHMS.get(algorithm, -1):
            return None
        if plain is not None and is_plain(path):
            absolute = plain + path
        else:
            absolute = normpath(prefix + path)
            if not is_within(absolute, root):
                return None
        rows.append((absolute, algorithm, digest, size))
    return rows


def biggest_rows(text: str, location: str, root: str, least: int) -> list[Recorded]:
    """The plain rows of files of ``least`` bytes or more, biggest first, read before the rest of RECORD.

    Only their own lines are read: a RECORD of ten thousand rows takes a while to parse,
    and its biggest files can be hashed meanwhile. Each line is read as
    :func:`plain_rows` reads it, alone; whether the whole RECORD is plain is not decided
    here (a caller that acts on these rows still parses it all).
    """
    if "\r" in text:  # pip writes CRLF lines: as plain_rows reads them
        text = text.replace("\r\n", "\n")
        if "\r" in text:
            return []
    lines = text.split("\n")
    digits = len(str(least))
    candidates = []
    for i, line in enumerate(lines):
        size = line[line.rfind(",") + 1 :]
        if digits <= len(size) <= MAX_SIZE_DIGITS and size.isdigit() and size.isascii() and int(size) >= least:
            candidates.append((int(size), i))
    candidates.sort(reverse=True)
    found = []
    for _, i in candidates:
        parsed = plain_rows(lines[i], location, root)
        if parsed:
            found.append(parsed[0])
    return found

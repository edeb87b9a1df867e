"""RECORD's fields as the wheel spec spells them: algorithms, digests, unhashed paths.

Stdlib ``binascii`` only: both the RECORD parser and the gate's cold path (which must
not import the parser's dataclasses, csv or re) read fields through here.
"""

from __future__ import annotations

import binascii

TYPE_CHECKING = False  # typing stays off the gate's cold path
if TYPE_CHECKING:
    from collections.abc import Callable

#: Digest sizes in bytes of the algorithms the wheel spec accepts ("sha256 or better").
ACCEPTED_ALGORITHMS: dict[str, int] = {"sha256": 32, "sha384": 48, "sha512": 64}
#: Files that the spec lets RECORD list without a hash.
_UNHASHED_NAMES = frozenset({"RECORD", "RECORD.jws", "RECORD.p7s"})
#: A size field of more digits is no file's size (and int() refuses past 4300 digits).
MAX_SIZE_DIGITS = 20
#: The longest RECORD row read, in characters (a path is at most PATH_MAX, 4096 bytes, on Linux):
#: a longer row, or a quote left open across lines, is one malformed row, never read on.
MAX_ROW_CHARS = 1 << 16
URLSAFE_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
FROM_URLSAFE = bytes.maketrans(b"-_", b"+/")
_TO_URLSAFE = str.maketrans("+/", "-_")


def encode_digest(digest: bytes) -> str:
    """Encode a raw digest the way RECORD does: urlsafe base64 without padding.

    With ``pybase64`` (a dependency of the command line) where it is installed, else the standard
    library's base64 and ``str.translate`` (docs/benchmarks.md compares them); imported on the
    first call, never by the gate.
    """
    encode = _ENCODER[0]
    if encode is None:
        encode = _ENCODER[0] = _encoder()
    return encode(digest)


def _encoder() -> Callable[[bytes], str]:
    try:
        from pybase64 import b64encode_as_string
    except ImportError:  # the standard library: the same text, slower
        return lambda digest: (
            binascii.b2a_base64(digest, newline=False).decode("ascii").translate(_TO_URLSAFE).rstrip("=")
        )
    return lambda digest: b64encode_as_string(digest, altchars=b"-_").rstrip("=")


_ENCODER: list[Callable[[bytes], str] | None] = [None]


def decode_digest(text: str) -> bytes | None:
    """The raw digest RECORD's urlsafe base64 (padded or not) spells, or None if it is not base64."""
    text = text.rstrip("=")
    # a2b_base64 silently skips foreign characters, so check the alphabet first.
    if text.strip(URLSAFE_ALPHABET):
        return None
    raw = text.encode("ascii")
    try:
        return binascii.a2b_base64(raw.translate(FROM_URLSAFE) + b"=" * (-len(raw) % 4))
    except binascii.Error:
        return None


def parse_size(field: str) -> int | None:
    """The size a RECORD size field gives: ASCII digits, at most :data:`MAX_SIZE_DIGITS`; else None."""
    if field.isdigit() and field.isascii() and len(field) <= MAX_SIZE_DIGITS:
        return int(field)
    return None


def unhashed_allowed(path: str) -> bool:
    """Whether the spec lets ``path`` appear in RECORD without a hash."""
    parent, _, name = path.rpartition("/")
    if name in _UNHASHED_NAMES:
        # Only the dist-info's own RECORD (and its signatures): a RECORD elsewhere is payload.
        return parent.rpartition("/")[2].endswith(".dist-info")
    return name.endswith((".pyc", ".pyo"))

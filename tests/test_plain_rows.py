"""RECORD's plain rows read by splitting at commas, and its biggest rows read before the rest."""

from __future__ import annotations

import hashlib

import pytest

from wheeldoctor.gate.plain_rows import biggest_rows, plain_rows
from wheeldoctor.model.record_fields import decode_digest, encode_digest

pytestmark = pytest.mark.unit

LOCATION = "/env/lib/python3.12/site-packages"
ROOT = "/env"


def _row(path: str, size: int, algorithm: str = "sha256") -> str:
    digest = hashlib.new(algorithm, path.encode()).digest()
    return f"{path},{algorithm}={encode_digest(digest)},{size}"


def _digest(path: str) -> bytes:
    return hashlib.sha256(path.encode()).digest()


def test_the_biggest_rows_come_biggest_first_and_resolved() -> None:
    text = "\n".join(
        [
            _row("pkg/small.py", 100),
            _row("pkg/lib/big.so", 20_000_000),
            "pkg-1.0.dist-info/RECORD,,",
            _row("pkg/lib/bigger.so", 300_000_000),
            _row("pkg/lib/just_under.so", 15_999_999),
            _row("pkg/lib/at_least.so", 16_000_000),
            "",
        ]
    )
    found = biggest_rows(text, LOCATION, ROOT, 16_000_000)
    assert found == [
        (f"{LOCATION}/pkg/lib/bigger.so", "sha256", _digest("pkg/lib/bigger.so"), 300_000_000),
        (f"{LOCATION}/pkg/lib/big.so", "sha256", _digest("pkg/lib/big.so"), 20_000_000),
        (f"{LOCATION}/pkg/lib/at_least.so", "sha256", _digest("pkg/lib/at_least.so"), 16_000_000),
    ]
    # Each is the row plain_rows reads of the whole RECORD.
    whole = plain_rows(text, LOCATION, ROOT)
    assert whole is not None and set(found) <= set(whole)


def test_lines_that_are_not_plain_are_left_to_the_parser() -> None:
    """A quoted or four-field line, a path climbing out of the root, a bad digest, a lone CR: none is read early;
    CRLF line ends (pip's) are read as plain_rows reads them."""
    good = _row("pkg/lib/good.so", 50_000_000)
    text = "\n".join(
        [
            good,
            '"pkg/lib/quoted.so",' + _row("x", 50_000_000).split(",", 1)[1],
            "pkg/lib/four.so,sha256=abc,extra,50000000",
            _row("../../../../etc/outside.so", 50_000_000),
            "pkg/lib/badhash.so,sha256=not*base64,50000000",
            _row("pkg/lib/md5.so", 50_000_000, "md5"),
            "pkg/lib/digits.so,sha256=" + encode_digest(b"\x00" * 32) + ",5e10",
        ]
    )
    assert [row[0] for row in biggest_rows(text, LOCATION, ROOT, 1 << 20)] == [f"{LOCATION}/pkg/lib/good.so"]
    found = biggest_rows(text, LOCATION, ROOT, 1 << 20)
    assert biggest_rows(text.replace("\n", "\r\n"), LOCATION, ROOT, 1 << 20) == found  # pip's RECORD lines
    assert biggest_rows(text.replace("\n", "\r\n", 1), LOCATION, ROOT, 1 << 20) == found
    assert biggest_rows(text.replace("\n", "\r", 1), LOCATION, ROOT, 1 << 20) == []  # a lone CR: not plain
    assert decode_digest("not*base64") is None  # why the bad digest's line is no plain row

"""METADATA's header fields: the plain-file path reads exactly what email.parser reads."""

from __future__ import annotations

import importlib.metadata
import random
from pathlib import Path

import pytest

from wheeldoctor.formats.headers import _crlf_fields, _email_fields, _plain_fields, header_fields

pytestmark = pytest.mark.unit

PLAIN = (
    b"Metadata-Version: 2.4\n"
    b"Name: torch\n"
    b"Version: 2.11.0\n"
    b"Summary: Tensors and Dynamic neural networks\n"
    b"Requires-Python: >=3.10\n"
    b"Requires-Dist: filelock\n"
    b"Requires-Dist: sympy>=1.13.3\n"
    b"Requires-Dist: nvidia-cublas; platform_system == 'Linux' and extra == 'cuda'\n"
    b"Provides-Extra: cuda\n"
    b"\n"
    b"Name: not a field, the long description\n"
)

TRICKY = {
    "folded value": b"Name: a\nSummary: one\n  two\n\tthree\nVersion: 1\n\n",
    "folded after an empty value": b"Name: a\nLicense:\n    MIT\n   \nVersion: 1\n\n",
    "folding nothing": b"  folded\nName: a\nVersion: 1\n\n",
    "a License text": b"Name: a\nLicense: BSD\n        \n        Copyright (c) 2005\n        All rights.\nVersion: 1\n",
    "CRLF": b"Name: a\r\nVersion: 1\r\n\r\nbody\r\n",
    "CRLF folded": b"Name: a\r\nLicense: BSD\r\n  two\r\n\tthree\r\nVersion: 1\r\n\r\nbody\n\nmore\r\n",
    "CRLF, no blank line": b"Name: a\r\nVersion: 1\r\n",
    "CRLF, no final newline": b"Name: a\r\nVersion: 1",
    "CRLF with one LF line": b"Name: a\r\nSummary: x\nVersion: 1\r\n\r\n",
    "CRLF with a lone CR": b"Name: a\r\nSummary: x\ry\r\nVersion: 1\r\n\r\n",
    "CRLF after an LF blank line": b"Name: a\n\nSummary: x\r\nVersion: 1\r\n\r\n",
    "lone CR": b"Name: a\rVersion: 1\r\rbody",
    "From line first": b"From someone\nName: a\nVersion: 1\n\n",
    "From line later": b"Name: a\nFrom someone\nVersion: 1\n\n",
    "a line without a colon": b"Name: a\nnot a header\nVersion: 1\n\n",
    "a space in the name": b"Name: a\nBad Name: x\nVersion: 1\n\n",
    "an empty name": b"Name: a\n: x\nVersion: 1\n\n",
    "tabs and spaces after the colon": b"Name:\t \tspaced\t \nVersion:   1  \n\n",
    "no blank after the colon": b"Name:tight\nVersion:1\n\n",
    "an empty value": b"Name:\nVersion: 1\n\n",
    "bytes that are not UTF-8": b"Name: a\nAuthor: \xff\xfe\nVersion: 1\n\n",
    "UTF-8 beyond ASCII": "Name: a\nAuthor: Jürgen Žižek\nVersion: 1\n\n".encode(),
    "fields repeated": b"Name: a\nName: b\nRequires-Dist: x\nrequires-dist: y\nVersion: 1\n\n",
    "no final newline": b"Name: a\nVersion: 1",
    "no blank line at all": b"Name: a\nVersion: 1\n",
    "a blank line first": b"\nName: a\nVersion: 1\n\n",
    "odd printable names": b"X-Foo!#$%&'*+-.^_`|~: 1\nName: a\nVersion: 1\n\n",
    "a colon in the value": b"Name: a\nRequires-Dist: b; python_version < '3.11' and extra == \"x:y\"\nVersion: 1\n\n",
    "DEL in a name": b"Name: a\nX\x7fY: 1\nVersion: 1\n\n",
    "a form feed line": b"Name: a\n\x0c\nVersion: 1\n\n",
    "Unicode line separator in a value": "Name: a\u2028b\nVersion: 1\n\n".encode(),
    "empty": b"",
}


def _by_email(data: bytes) -> dict[str, list[str]]:
    end = data.find(b"\n\n")
    return _email_fields(data if end < 0 else data[: end + 2])


def test_a_plain_file_is_read_without_email_and_as_email_reads_it() -> None:
    assert _plain_fields(PLAIN) is not None  # the fast path answered
    fields = header_fields(PLAIN)
    assert fields == _by_email(PLAIN)
    assert fields["name"] == ["torch"]
    assert fields["requires-dist"][2] == "nvidia-cublas; platform_system == 'Linux' and extra == 'cuda'"


@pytest.mark.parametrize("case", sorted(TRICKY))
def test_every_kind_of_file_gives_what_email_gives(case: str) -> None:
    assert header_fields(TRICKY[case]) == _by_email(TRICKY[case])


def test_the_fast_path_leaves_to_email_what_it_cannot_read_exactly() -> None:
    for case in ("CRLF", "lone CR", "From line first", "bytes that are not UTF-8", "an empty name", "folding nothing"):
        assert _plain_fields(TRICKY[case]) is None, case
    for case in ("folded value", "folded after an empty value", "tabs and spaces after the colon", "no final newline"):
        assert _plain_fields(TRICKY[case]) is not None, case


def test_a_file_of_crlf_lines_is_read_without_email_and_one_mixed_is_not() -> None:
    for case in ("CRLF", "CRLF folded", "CRLF, no blank line", "CRLF, no final newline"):
        assert _crlf_fields(TRICKY[case]) is not None, case
    assert header_fields(TRICKY["CRLF folded"])["license"] == ["BSD\r\n  two\r\n\tthree"]  # email keeps the CRLFs
    for case in ("CRLF with one LF line", "CRLF with a lone CR", "CRLF after an LF blank line", "lone CR"):
        assert _crlf_fields(TRICKY[case]) is None, case


def test_random_blocks_give_what_email_gives() -> None:
    """Blocks drawn from plain and hostile lines: the same fields, whichever path reads them."""
    pool = [
        *(line + b"\n" for line in PLAIN.split(b"\n")[:9]),
        *(b"Summary: x\n", b"  continued\n", b"\tcontinued\n", b"From x\n", b"junk\n", b": empty\n", b"\n"),
        *(b"A b: c\n", b"Key:\n", b"Key:\t v \n", b"K: \xe2\x82\xac\n", b"K: \xff\n", b"K: v\r\n", b"K: v\r"),
    ]
    rng = random.Random(13)
    fast = 0
    for _ in range(2000):
        data = b"".join(rng.choice(pool) for _ in range(rng.randrange(0, 12)))
        assert header_fields(data) == _by_email(data), data
        fast += _plain_fields(data[: data.find(b"\n\n") + 2] if b"\n\n" in data else data) is not None
    assert fast > 100  # the plain path was exercised, not only email's
    crlf = 0
    for _ in range(2000):  # the same with CRLF line ends, now and then one LF or CR left alone
        lines = [rng.choice(pool).replace(b"\n", b"\r\n") for _ in range(rng.randrange(0, 12))]
        if lines and rng.random() < 0.3:
            lines[rng.randrange(len(lines))] = rng.choice(pool)
        data = b"".join(lines)
        assert header_fields(data) == _by_email(data), data
        crlf += b"\r" in data and _crlf_fields(data) is not None
    assert crlf > 100


def test_every_installed_metadata_here_reads_alike() -> None:
    """The real METADATA of every distribution in the interpreter running the tests."""
    seen = 0
    for dist in importlib.metadata.distributions():
        path = getattr(dist, "_path", None)
        if path is None or not (Path(path) / "METADATA").is_file():
            continue
        data = (Path(path) / "METADATA").read_bytes()
        assert header_fields(data) == _by_email(data), path
        seen += 1
    assert seen >= 5


def test_undecodable_bytes_beside_other_non_ascii_still_give_the_fields() -> None:
    # email cannot give such a value as text (str() of its Header raises): the bytes are replaced.
    fields = header_fields(b"Name: a\nSummary: \xff\xc3\xa9\nVersion: 1\n\n")
    assert (fields["name"], fields["version"], fields["summary"]) == (["a"], ["1"], ["\ufffd\u00e9"])

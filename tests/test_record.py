"""RECORD reader: every accepted, weak, unknown and malformed row, as data, never an exception."""

from __future__ import annotations

import base64
import csv
import hashlib
import io

import pytest

from wheeldoctor.formats.record import decode_record, parse_record
from wheeldoctor.model.findings import Code, Kind
from wheeldoctor.model.record import Record, RecordRow
from wheeldoctor.model.record_fields import encode_digest, unhashed_allowed

pytestmark = pytest.mark.unit

DATA = b"print('hello')\n"


def field(algorithm: str, data: bytes = DATA) -> str:
    """A RECORD hash field computed from ``data`` (never hard-coded)."""
    digest = hashlib.new(algorithm, data).digest()
    return f"{algorithm}={base64.urlsafe_b64encode(digest).rstrip(b'=').decode('ascii')}"


def render(rows: list[list[str]]) -> bytes:
    """RECORD bytes written the way pip writes them: the csv module's default dialect."""
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    return out.getvalue().encode("utf-8")


def codes(record: Record) -> list[tuple[str, str | None]]:
    """The (code, path) pairs of a record's problems, in order."""
    return [(f.code.value, f.path) for f in record.problems]


# --------------------------------------------------------------------------
# accepted rows
# --------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", ["sha256", "sha384", "sha512"])
@pytest.mark.parametrize("data", [b"", DATA, bytes(range(256)) * 3])
def test_accepted_algorithms(algorithm: str, data: bytes) -> None:
    record = parse_record([f"pkg/mod.py,{field(algorithm, data)},{len(data)}"])
    assert record.problems == ()
    assert record.rows == (RecordRow("pkg/mod.py", algorithm, hashlib.new(algorithm, data).digest(), len(data), 1),)
    assert record.rows[0].hash_text == field(algorithm, data)


@pytest.mark.parametrize("algorithm", ["sha256", "sha384", "sha512"])
def test_padded_digest_is_accepted(algorithm: str) -> None:
    digest = hashlib.new(algorithm, DATA).digest()
    padded = base64.urlsafe_b64encode(digest).decode("ascii")
    record = parse_record([f"a.py,{algorithm}={padded},{len(DATA)}"])
    assert record.problems == ()
    assert record.rows[0].digest == digest


def test_size_may_be_omitted() -> None:
    record = parse_record([f"a.py,{field('sha256')},"])
    assert record.problems == ()
    assert record.rows[0].size is None


@pytest.mark.parametrize("data", [b"", b"x", b"\xfb\xff", DATA, bytes(range(256))])
def test_encode_digest_is_urlsafe_base64_without_padding(data: bytes) -> None:
    digest = hashlib.sha256(data).digest()
    assert encode_digest(digest) == base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


# --------------------------------------------------------------------------
# weak, unknown and absent hashes
# --------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", ["md5", "sha1", "sha224"])
def test_weak_algorithms_are_reported(algorithm: str) -> None:
    record = parse_record([f"pkg/mod.py,{field(algorithm)},{len(DATA)}"])
    assert record.rows == ()
    assert codes(record) == [(Code.WEAK_HASH.value, "pkg/mod.py")]
    assert record.problems[0].kind is Kind.UNVERIFIABLE
    assert algorithm in record.problems[0].message


@pytest.mark.parametrize("hash_field", ["crc32=AAAA", "whirlpool=abcd", "sha257=abcd", "=abcd"])
def test_unknown_algorithm_is_reported(hash_field: str) -> None:
    record = parse_record([f"pkg/mod.py,{hash_field},3"])
    assert record.rows == ()
    assert codes(record) == [(Code.UNKNOWN_HASH.value, "pkg/mod.py")]
    assert record.problems[0].kind is Kind.UNVERIFIABLE


@pytest.mark.parametrize(
    "path",
    [
        "demo-1.0.dist-info/RECORD",
        "demo-1.0.dist-info/RECORD.jws",
        "demo-1.0.dist-info/RECORD.p7s",
        "demo/__pycache__/__init__.cpython-311.pyc",
        "demo/__pycache__/__init__.cpython-311.opt-1.pyc",
        "demo/legacy.pyo",
    ],
)
def test_no_hash_allowed(path: str) -> None:
    assert unhashed_allowed(path)
    for row in (f"{path},,", f"{path},,123"):
        record = parse_record([row])
        assert record == Record((), (), frozenset({path}))  # listed, though nothing to verify


@pytest.mark.parametrize(
    "path",
    [
        "demo/__init__.py",
        "demo/RECORD",  # only the dist-info's own RECORD may go unhashed
        "demo/RECORD.jws",
        "RECORD",
        "demo-1.0.dist-info/RECORD.txt",
        "demo-1.0.dist-info/METADATA",
        "demo/not.pyc.txt",
        "../../../bin/demo",
    ],
)
def test_no_hash_elsewhere_is_reported(path: str) -> None:
    assert not unhashed_allowed(path)
    record = parse_record([f"{path},,12"])
    assert record.rows == ()
    assert codes(record) == [(Code.NO_HASH.value, path)]
    assert record.problems[0].kind is Kind.UNVERIFIABLE


# --------------------------------------------------------------------------
# malformed rows
# --------------------------------------------------------------------------


def _std_b64_digest() -> tuple[bytes, str]:
    """Data whose sha256 in standard base64 holds '+' or '/', found by search (not hard-coded)."""
    for i in range(1000):
        data = str(i).encode()
        text = base64.b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
        if "+" in text or "/" in text:
            return data, text
    raise AssertionError("unreachable")


_STD_DATA, _STD_TEXT = _std_b64_digest()
_SHA256 = field("sha256")

MALFORMED = [
    pytest.param("a.py", "a.py", id="one-field"),
    pytest.param(f"a.py,{_SHA256}", "a.py", id="two-fields"),
    pytest.param(f"a.py,{_SHA256},15,extra", "a.py", id="four-fields"),
    pytest.param(f",{_SHA256},15", None, id="empty-path"),
    pytest.param(f"a.py,{_SHA256},-1", "a.py", id="negative-size"),
    pytest.param(f"a.py,{_SHA256},1.5", "a.py", id="fractional-size"),
    pytest.param(f"a.py,{_SHA256},ten", "a.py", id="word-size"),
    pytest.param(f"a.py,{_SHA256}, 15", "a.py", id="spaced-size"),
    pytest.param(f"a.py,{_SHA256},1e3", "a.py", id="exponent-size"),
    pytest.param(f"a.py,{_SHA256},\u0661\u0665", "a.py", id="non-ascii-digits"),
    pytest.param(f"a.py,{_SHA256},+15", "a.py", id="signed-size"),
    pytest.param(f"a.py,{_SHA256},{'9' * 21}", "a.py", id="size-of-21-digits"),
    pytest.param(f"a.py,{_SHA256},{'1' * 4301}", "a.py", id="size-past-int-conversion-limit"),
    pytest.param(f"a.py,{_SHA256},{'1' * 200_000}", None, id="size-past-csv-field-limit"),
    pytest.param(f"a.py,{'x' * 5000},15", "a.py", id="huge-hash-field"),
    pytest.param("a.py,sha256,15", "a.py", id="no-equals"),
    pytest.param("a.py,sha256=,15", "a.py", id="empty-digest"),
    pytest.param("a.py,sha256=!!!!not-base64!!!!,15", "a.py", id="bad-alphabet"),
    pytest.param(f"a.py,sha256={_STD_TEXT},15", "a.py", id="standard-not-urlsafe-base64"),
    pytest.param(f"a.py,{_SHA256[:-4]},15", "a.py", id="truncated-digest"),
    pytest.param(f"a.py,{_SHA256}AAAA,15", "a.py", id="long-digest"),
    pytest.param(f"a.py,{_SHA256}A,15", "a.py", id="impossible-base64-length"),
    pytest.param(f"a.py,sha512={_SHA256.partition('=')[2]},15", "a.py", id="sha256-digest-as-sha512"),
    pytest.param(f"a.py,sha256=\u00e9{_SHA256[8:]},15", "a.py", id="non-ascii-digest"),
    pytest.param('"a.py"x,,', None, id="bad-quoting"),
]


@pytest.mark.parametrize(("line", "path"), MALFORMED)
def test_malformed_row_is_a_finding(line: str, path: str | None) -> None:
    good = f"b.py,{_SHA256},{len(DATA)}"
    record = decode_record(f"{good}\n{line}\n{good.replace('b.py', 'c.py')}\n".encode())
    # The bad row is one finding naming its line; the rows around it still count.
    assert codes(record) == [(Code.RECORD_ROW_MALFORMED.value, path)]
    assert record.problems[0].kind is Kind.MALFORMED
    assert "line 2" in record.problems[0].message
    assert len(record.problems[0].message) < 200  # one line, however long the field
    assert [r.path for r in record.rows] == ["b.py", "c.py"]


def test_blank_lines_are_skipped() -> None:
    record = decode_record(f"\na.py,{_SHA256},15\n\n\r\n".encode())
    assert record.problems == ()
    assert [(r.path, r.line) for r in record.rows] == [("a.py", 2)]


def test_crlf_line_endings() -> None:
    record = decode_record(f"a.py,{_SHA256},15\r\nb.py,{_SHA256},15\r\n".encode())
    assert record.problems == ()
    assert [r.path for r in record.rows] == ["a.py", "b.py"]


def test_standard_base64_digest_is_not_silently_accepted() -> None:
    # Sanity for the table above: the same digest written urlsafe is accepted.
    record = parse_record([f"a.py,{field('sha256', _STD_DATA)},{len(_STD_DATA)}"])
    assert record.problems == ()


def test_unterminated_quote_swallows_the_rest_as_one_finding() -> None:
    record = decode_record(f'a.py,{_SHA256},15\n"b.py,{_SHA256},15\nc.py,{_SHA256},15\n'.encode())
    assert [r.path for r in record.rows] == ["a.py"]
    assert codes(record) == [(Code.RECORD_ROW_MALFORMED.value, None)]


# --------------------------------------------------------------------------
# paths that need CSV quoting, as the csv module writes them
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "pkg/with,comma.py",
        'pkg/with"quote.py',
        "pkg/with space.py",
        "pkg/with\nnewline.txt",
        "pkg/with\rcarriage.txt",
        "pkg/with\x85next-line.txt",
        "pkg/with\u2028line-separator.txt",
        "pkg/with\x0cform-feed.txt",
        "pkg/with\x1crecord-separator.txt",
        "pkg/caf\u00e9/\u65e5\u672c.py",
        'pkg/,"\n,"".py',
    ],
)
def test_paths_round_trip_through_csv(path: str) -> None:
    rows = [[path, field("sha256"), str(len(DATA))], ["demo-1.0.dist-info/RECORD", "", ""], ["z.py", _SHA256, "15"]]
    record = decode_record(render(rows))
    assert codes(record) == []
    assert [r.path for r in record.rows] == [path, "z.py"]


# --------------------------------------------------------------------------
# duplicates
# --------------------------------------------------------------------------


def test_duplicate_rows_are_reported_once_each() -> None:
    other = field("sha256", b"other")
    record = parse_record([f"a.py,{_SHA256},15", f"b.py,{_SHA256},15", f"a.py,{other},5", f"a.py,{_SHA256},15"])
    assert [r.path for r in record.rows] == ["a.py", "b.py"]
    assert record.rows[0].digest == hashlib.sha256(DATA).digest()  # the first row wins
    assert codes(record) == [(Code.DUPLICATE_ROW.value, "a.py"), (Code.DUPLICATE_ROW.value, "a.py")]
    assert all(f.kind is Kind.MALFORMED for f in record.problems)
    assert "line 3" in record.problems[0].message
    assert "line 4" in record.problems[1].message


# --------------------------------------------------------------------------
# binary and undecodable RECORDs
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"\xff\xfe\x00\x00garbage", id="utf32-bom"),
        pytest.param(f"a.py,{_SHA256},15\n".encode("utf-16"), id="utf16"),
        pytest.param(b"a.py,sha256=abc,1\n\x00\x01\x02\n", id="nul"),
        pytest.param(b"caf\xe9.py," + _SHA256.encode() + b",15\n", id="latin-1"),
        pytest.param(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)), id="elf"),
        pytest.param(b"PK\x03\x04" + bytes(range(255, -1, -1)), id="zip"),
    ],
)
def test_binary_record_is_one_finding(data: bytes) -> None:
    record = decode_record(data)
    assert record.rows == ()
    assert codes(record) == [(Code.RECORD_UNDECODABLE.value, "RECORD")]
    assert record.problems[0].kind is Kind.MALFORMED


def test_empty_record_has_nothing() -> None:
    assert decode_record(b"") == Record((), ())


@pytest.mark.parametrize("byte", range(256))
def test_any_byte_anywhere_never_raises(byte: int) -> None:
    good = f"a.py,{_SHA256},15".encode()
    for data in (bytes([byte]) + good, good + bytes([byte]), good[:4] + bytes([byte]) + good[4:], bytes([byte]) * 64):
        record = decode_record(data)
        assert isinstance(record, Record)
        assert all(f.code.value.startswith("WD") for f in record.problems)


@pytest.mark.parametrize("pybase64", ["present", "absent"])
def test_encode_digest_spells_digests_as_record_does(pybase64: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With pybase64 or without it (the standard library), every digest is RECORD's urlsafe, unpadded text."""
    import os
    import sys

    from wheeldoctor.model import record_fields

    if pybase64 == "absent":
        monkeypatch.setitem(sys.modules, "pybase64", None)  # import pybase64 then fails
    monkeypatch.setattr(record_fields, "_ENCODER", [None])
    for size in (0, 1, 2, 3, 31, 32, 48, 64):
        for _ in range(50):
            raw = os.urandom(size)
            assert encode_digest(raw) == base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def test_reading_stops_past_a_hundred_thousand_malformed_rows_and_says_so() -> None:
    """33 million rows of ``a`` fit the 64 MiB cap: reading stops after 100,000 of them, valid rows before kept."""
    from wheeldoctor.formats.record import MAX_MALFORMED_READ

    data = f"pkg/x.py,{field('sha256', b'x')},1\n".encode() + b"a\n" * (MAX_MALFORMED_READ + 500) + b"pkg/y.py,,\n"
    record = decode_record(data)
    assert [r.path for r in record.rows] == ["pkg/x.py"]
    assert [f.message for f in record.problems[-2:]] == [
        f"RECORD line {MAX_MALFORMED_READ + 1}: and {MAX_MALFORMED_READ - 100} more malformed row(s) past the "
        "first 100, not listed",
        f"RECORD line {MAX_MALFORMED_READ + 1}: {MAX_MALFORMED_READ} rows with findings: "
        "the rest of RECORD is not read",
    ]
    assert "pkg/y.py" not in record.listed


@pytest.mark.parametrize(
    "text",
    [
        "a,b,c\nd,e,f\n\n",
        'a,b,c\n"g,h",i,j\r\nk\n',
        "x,sha256=1,2\r\ny\nz,,\n",
        '"open\na,b,c\n',
        "a,b,c\x85d,e,f\n",  # \x85 is in a file name, not a line end
    ],
)
def test_first_columns_are_the_parses(text: str) -> None:
    from wheeldoctor.formats.record import csv_rows, first_columns

    parsed = [fields[0] for _, fields, _ in csv_rows(io.StringIO(text, newline="")) if fields and fields[0]]
    assert first_columns(text) == parsed


def test_first_columns_stop_where_the_parse_stops() -> None:
    from wheeldoctor.formats.record import MAX_MALFORMED_READ, first_columns

    for head in ("", '"'):
        text = head + "a\n" * (3 * MAX_MALFORMED_READ) + "z,,\n"
        assert len(first_columns(text)) <= MAX_MALFORMED_READ


@pytest.mark.parametrize(("row", "code"), [("p/{},,", Code.NO_HASH), ("p/{},md5=abc,1", Code.WEAK_HASH)])
def test_rows_without_a_usable_hash_are_listed_a_hundred_times_then_counted(row: str, code: Code) -> None:
    """4 million rows without a hash were 4 million findings (61 s, 2.9 GB): 100 listed, the rest counted."""
    from wheeldoctor.formats.record import MAX_MALFORMED_READ

    record = decode_record("".join(row.format(i) + "\n" for i in range(MAX_MALFORMED_READ + 10)).encode())
    assert [f.code for f in record.problems].count(code) == 101
    assert record.problems[100].message == f"and {MAX_MALFORMED_READ - 100} more row(s) like this, not listed"
    assert record.problems[-1].message.endswith("rows with findings: the rest of RECORD is not read")
    assert record.rows == ()

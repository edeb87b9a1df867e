"""RECORD files (PEP 376, PEP 627, the binary distribution format) as rows and findings.

Pure: takes bytes or text, returns data. Every malformed row becomes a finding and the
rest of the file is still used; nothing here raises on bad input.
"""

from __future__ import annotations

import binascii
import csv
import re
from collections.abc import Iterable, Iterator

from wheeldoctor.model.findings import Code, Finding, Kind
from wheeldoctor.model.record import WEAK_ALGORITHMS, Record, RecordRow, fast_tuple
from wheeldoctor.model.record_fields import (
    ACCEPTED_ALGORITHMS,
    FROM_URLSAFE,
    MAX_ROW_CHARS,
    MAX_SIZE_DIGITS,
    decode_digest,
    parse_size,
    unhashed_allowed,
)

#: Malformed rows listed one by one per RECORD; past these, one finding counts the rest.
MAX_MALFORMED = 100
#: Malformed rows read per RECORD; past these, the rest of it is not read (a RECORD of 64 MiB of ``a``
#: lines is 33 million rows). A real RECORD has none; every valid row is 50 bytes or more, so the rows
#: a RECORD can hold stay few enough to read in a second or two.
MAX_MALFORMED_READ = 100_000


#: One line with its ending, as io.StringIO(newline="") splits: at \n, \r\n or \r.
_LINE = re.compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+")
#: The hash field nearly every row holds: a SHA-256 digest as 43 unpadded urlsafe characters.
_SHA256_FIELD = re.compile(r"sha256=[A-Za-z0-9_-]{43}")


def decode_record(data: bytes) -> Record:
    """Parse RECORD bytes; undecodable or binary content is one finding and no rows."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return _undecodable(f"is not UTF-8 (byte {e.start})")
    if "\x00" in text:
        return _undecodable("holds NUL bytes: it is binary, not CSV")
    # Not str.splitlines(): it also splits at \x85, \u2028 and friends, which are legal in
    # file names and which the csv module writes unquoted. Quoted newlines stay in the field.
    # Lines as io.StringIO(newline="") gives them (ended by \n, \r\n or \r, kept), without its
    # copy of the whole text in four bytes a character.
    lines = (m.group() for m in _LINE.finditer(text))
    return parse_record(lines, quoted='"' in text)


def _undecodable(message: str) -> Record:
    return Record((), (Finding(code=Code.RECORD_UNDECODABLE, kind=Kind.MALFORMED, path="RECORD", message=message),))


class _RowTooLong(Exception):
    """Raised through the csv reader when one row has taken more than MAX_ROW_CHARS characters."""


class _BoundedLines:
    """Lines for the csv reader that give out once one row grows past :data:`MAX_ROW_CHARS`.

    The csv module reads on to a closing quote however far it is: a RECORD that opens a
    quote and never closes it would be read into one field. Counting per row here stops it.
    """

    def __init__(self, lines: Iterable[str]) -> None:
        self._lines = iter(lines)
        self.number = 0
        """Physical lines handed out so far."""
        self.row_chars = 0

    def __iter__(self) -> _BoundedLines:
        return self

    def __next__(self) -> str:
        line = next(self._lines)
        self.number += 1
        self.row_chars += len(line)
        if self.row_chars > MAX_ROW_CHARS:
            raise _RowTooLong
        return line


def csv_rows(lines: Iterable[str], quoted: bool = True) -> Iterator[tuple[int, list[str] | None, str | None]]:
    """RECORD's CSV rows as ``(line, fields, None)``, or ``(line, None, why)`` for a row that is not CSV.

    Bounded: no row is read past :data:`MAX_ROW_CHARS` characters (the rest of an overlong
    row is skipped up to the end of its line, and reading resumes after it). ``quoted``
    False says no line holds a quote: then no row can span lines, and none is counted.
    """
    if not quoted:
        plain = csv.reader(lines, strict=True)
        while True:
            try:
                fields = next(plain)
            except StopIteration:
                return
            except csv.Error as e:
                yield plain.line_num, None, f"not valid CSV ({e})"
                continue
            yield plain.line_num, fields, None
    bounded = _BoundedLines(lines)
    base = 0
    reader = csv.reader(bounded, strict=True)
    while True:
        bounded.row_chars = 0
        try:
            fields = next(reader)
        except StopIteration:
            return
        except _RowTooLong:
            yield bounded.number, None, f"a row longer than {MAX_ROW_CHARS} characters (an unterminated quote?)"
            base = bounded.number
            reader = csv.reader(bounded, strict=True)  # afresh, outside any quote
            continue
        except csv.Error as e:
            yield base + reader.line_num, None, f"not valid CSV ({e})"
            continue
        yield base + reader.line_num, fields, None


def first_columns(text: str) -> list[str]:
    """Every path RECORD's rows name (their first column), malformed rows' too, read as :func:`parse_record` reads.

    For a RECORD that the verification parses elsewhere: about five times cheaper. Bounded
    as the parse is: past :data:`MAX_MALFORMED_READ` malformed rows the rest is not read.
    """
    columns: list[str] = []
    malformed = 0
    lines = (m.group() for m in _LINE.finditer(text))
    if '"' in text:
        rows: Iterable[list[str] | None] = (fields for _, fields, _ in csv_rows(lines))
    else:  # no quote: a row is its line, cut at each comma
        rows = (line.rstrip("\r\n").split(",") for line in lines)
    for fields in rows:
        if fields is None or len(fields) != 3:
            if fields in ([""], []):
                continue  # an empty line
            malformed += 1
            if malformed >= MAX_MALFORMED_READ:
                break
        if fields and fields[0]:
            columns.append(fields[0])
    return columns


def first_columns_containing(text: str, part: str) -> list[str]:
    """The paths RECORD's rows name (first column) that hold ``part``, read as :func:`first_columns` reads.

    Without a quote only the few lines holding ``part`` are looked at: RECORD's digests
    (urlsafe base64) and sizes hold no dot, so a ``part`` with a dot lies in the path.
    """
    if '"' in text:
        return [column for column in first_columns(text) if part in column]
    columns: list[str] = []
    at = text.find(part)
    while at >= 0:
        start = max(text.rfind("\n", 0, at), text.rfind("\r", 0, at)) + 1
        comma = text.find(",", start)
        end = min((e for e in (text.find("\n", at), text.find("\r", at)) if e >= 0), default=len(text))
        if at < comma < end:
            columns.append(text[start:comma])
        at = text.find(part, end)
    return columns


class _Tally:
    """What :func:`parse_record` found wrong: the first :data:`MAX_MALFORMED` findings of each kind listed, the rest
    counted, and reading stopped past :data:`MAX_MALFORMED_READ` rows with a finding."""

    def __init__(self) -> None:
        self.problems: list[Finding] = []
        self.malformed = 0
        self.bad = 0
        self._others: dict[Code, tuple[Kind, int]] = {}

    def add(self, problem: Finding) -> None:
        self.bad += 1
        if problem.kind is Kind.MALFORMED:
            self.malformed += 1
            listed = self.malformed
        else:
            listed = self._others.get(problem.code, (problem.kind, 0))[1] + 1
            self._others[problem.code] = (problem.kind, listed)
        if listed <= MAX_MALFORMED:
            self.problems.append(problem)

    def closing(self, last: int) -> list[Finding]:
        """One finding per kind of those not listed, and one if reading stopped."""
        closing = [
            Finding(
                code=code, kind=kind, path=None, message=f"and {n - MAX_MALFORMED} more row(s) like this, not listed"
            )
            for code, (kind, n) in self._others.items()
            if n > MAX_MALFORMED
        ]
        if self.malformed > MAX_MALFORMED:
            why = (
                f"and {self.malformed - MAX_MALFORMED} more malformed row(s) past the first {MAX_MALFORMED}, not listed"
            )
            closing.append(_malformed(None, last, why))
        if self.bad >= MAX_MALFORMED_READ:
            closing.append(_malformed(None, last, f"{self.bad} rows with findings: the rest of RECORD is not read"))
        return closing


def parse_record(lines: Iterable[str], quoted: bool = True) -> Record:
    """Parse RECORD lines into rows; each bad row becomes a finding naming its line.

    Past :data:`MAX_MALFORMED` findings of a kind, one more finding counts the rest; past
    :data:`MAX_MALFORMED_READ` rows with findings, the rest of the file is not read, and a
    finding says so. ``quoted`` False promises that no line holds a quote (see :func:`csv_rows`).
    """
    rows: list[RecordRow] = []
    tally = _Tally()
    seen: set[str] = set()
    unrowed: set[str] = set()  # listed paths that give no row: seen and these make up ``listed``
    sha256_field = _SHA256_FIELD.fullmatch
    a2b = binascii.a2b_base64
    make = fast_tuple
    last = 0
    for line, fields, why in csv_rows(lines, quoted):
        if tally.bad >= MAX_MALFORMED_READ:
            break
        last = line
        if fields is None:
            tally.add(_malformed(None, line, why or "not valid CSV"))
            continue
        if len(fields) == 3:
            # The row nearly every RECORD holds throughout, decided without a call per field.
            path, hash_field, size_field = fields
            if (
                path
                and size_field.isdigit()
                and size_field.isascii()
                and len(size_field) <= MAX_SIZE_DIGITS
                and sha256_field(hash_field)
                and path not in seen
            ):
                seen.add(path)
                digest = a2b(hash_field.encode("ascii")[7:].translate(FROM_URLSAFE) + b"=")
                rows.append(make(RecordRow, (path, "sha256", digest, int(size_field), line)))
                continue
        if not fields or fields == [""]:
            continue
        row, problem = _parse_fields(fields, line, tally.malformed < MAX_MALFORMED)
        if row is not None and row.path in seen:
            problem = Finding(
                code=Code.DUPLICATE_ROW,
                kind=Kind.MALFORMED,
                path=row.path,
                message=f"RECORD line {line} lists it again",
            )
            row = None
        if problem is not None:
            tally.add(problem)
        if row is None:
            unrowed.add(fields[0])
            continue
        seen.add(row.path)
        rows.append(row)
    problems = (*tally.problems, *tally.closing(last))
    return Record(tuple(rows), problems, frozenset(seen).union(unrowed))


def _shown(field: str) -> str:
    """A field for a one-line message: quoted, and cut short if long."""
    return repr(field) if len(field) <= 40 else f"{field[:40]!r}… ({len(field)} characters)"


#: What a malformed row gives once the cap is reached: counted, never shown, no message built.
_UNDESCRIBED = Finding(code=Code.RECORD_ROW_MALFORMED, kind=Kind.MALFORMED, path=None, message="")


def _malformed(path: str | None, line: int, why: str) -> Finding:
    return Finding(code=Code.RECORD_ROW_MALFORMED, kind=Kind.MALFORMED, path=path, message=f"RECORD line {line}: {why}")


def _parse_fields(fields: list[str], line: int, describe: bool = True) -> tuple[RecordRow | None, Finding | None]:
    """A row, or the finding it gives; ``describe`` False: malformed rows give :data:`_UNDESCRIBED`."""
    if len(fields) != 3:
        return None, (
            _malformed(fields[0] or None, line, f"{len(fields)} fields, expected 3") if describe else _UNDESCRIBED
        )
    path, hash_field, size_field = fields
    if not path:
        return None, (_malformed(None, line, "empty path") if describe else _UNDESCRIBED)
    size: int | None = None
    if size_field:
        size = parse_size(size_field)
        if size is None:
            if size_field.isdigit() and size_field.isascii():
                return None, (
                    _malformed(path, line, f"a size of {len(size_field)} digits is no file's size")
                    if describe
                    else _UNDESCRIBED
                )
            return None, (
                _malformed(path, line, f"size {_shown(size_field)} is not a non-negative integer")
                if describe
                else _UNDESCRIBED
            )
    if not hash_field:
        if unhashed_allowed(path):
            return None, None
        return None, Finding(
            code=Code.NO_HASH, kind=Kind.UNVERIFIABLE, path=path, message=f"RECORD line {line} gives no hash"
        )
    algorithm, sep, encoded = hash_field.partition("=")
    algorithm = algorithm.lower()
    if not sep or not encoded:
        return None, (
            _malformed(path, line, f"hash {_shown(hash_field)} is not algorithm=digest") if describe else _UNDESCRIBED
        )
    if algorithm in WEAK_ALGORITHMS:
        return None, Finding(
            code=Code.WEAK_HASH,
            kind=Kind.UNVERIFIABLE,
            path=path,
            message=f"RECORD line {line} uses {algorithm}, too weak to trust",
        )
    if algorithm not in ACCEPTED_ALGORITHMS:
        return None, Finding(
            code=Code.UNKNOWN_HASH,
            kind=Kind.UNVERIFIABLE,
            path=path,
            message=f"RECORD line {line}: unknown hash algorithm {_shown(algorithm)}",
        )
    digest = decode_digest(encoded)
    if digest is None or len(digest) != ACCEPTED_ALGORITHMS[algorithm]:
        return None, (
            _malformed(
                path, line, f"{algorithm} digest {_shown(encoded)} is not valid urlsafe base64 of the right length"
            )
            if describe
            else _UNDESCRIBED
        )
    return RecordRow(path, algorithm, digest, size, line), None

"""RECORD files (PEP 376, PEP 627, the binary distribution format) as rows and findings.

Pure: takes bytes or text, returns data. Every malformed row becomes a finding and the
rest of the file is still used; nothing here raises on bad input.
"""

from __future__ import annotations

import binascii
import csv
import io
import re
from collections.abc import Iterable

from wheeldoctor.model.findings import Code, Finding, Kind
from wheeldoctor.model.record import WEAK_ALGORITHMS, Record, RecordRow, fast_tuple
from wheeldoctor.model.record_fields import (
    ACCEPTED_ALGORITHMS,
    FROM_URLSAFE,
    MAX_SIZE_DIGITS,
    decode_digest,
    parse_size,
    unhashed_allowed,
)

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
    return parse_record(io.StringIO(text, newline=""))


def _undecodable(message: str) -> Record:
    return Record((), (Finding(Code.RECORD_UNDECODABLE, Kind.MALFORMED, "RECORD", message),))


def parse_record(lines: Iterable[str]) -> Record:
    """Parse RECORD lines into rows; each bad row becomes a finding naming its line."""
    rows: list[RecordRow] = []
    problems: list[Finding] = []
    seen: set[str] = set()
    unrowed: list[str] = []  # listed paths that give no row: seen and these make up ``listed``
    reader = csv.reader(lines, strict=True)
    sha256_field = _SHA256_FIELD.fullmatch
    a2b = binascii.a2b_base64
    make = fast_tuple
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            problems.append(_malformed(None, reader.line_num, f"not valid CSV ({e})"))
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
                rows.append(make(RecordRow, (path, "sha256", digest, int(size_field), reader.line_num)))
                continue
        if not fields or fields == [""]:
            continue
        line = reader.line_num
        row, problem = _parse_fields(fields, line)
        if problem is not None:
            problems.append(problem)
        if row is None or row.path in seen:
            unrowed.append(fields[0])
            if row is not None:
                problems.append(
                    Finding(Code.DUPLICATE_ROW, Kind.MALFORMED, row.path, f"RECORD line {line} lists it again")
                )
            continue
        seen.add(row.path)
        rows.append(row)
    return Record(tuple(rows), tuple(problems), frozenset(seen).union(unrowed))


def _shown(field: str) -> str:
    """A field for a one-line message: quoted, and cut short if long."""
    return repr(field) if len(field) <= 40 else f"{field[:40]!r}… ({len(field)} characters)"


def _malformed(path: str | None, line: int, why: str) -> Finding:
    return Finding(Code.RECORD_ROW_MALFORMED, Kind.MALFORMED, path, f"RECORD line {line}: {why}")


def _parse_fields(fields: list[str], line: int) -> tuple[RecordRow | None, Finding | None]:
    if len(fields) != 3:
        return None, _malformed(fields[0] or None, line, f"{len(fields)} fields, expected 3")
    path, hash_field, size_field = fields
    if not path:
        return None, _malformed(None, line, "empty path")
    size: int | None = None
    if size_field:
        size = parse_size(size_field)
        if size is None:
            if size_field.isdigit() and size_field.isascii():
                return None, _malformed(path, line, f"a size of {len(size_field)} digits is no file's size")
            return None, _malformed(path, line, f"size {_shown(size_field)} is not a non-negative integer")
    if not hash_field:
        if unhashed_allowed(path):
            return None, None
        return None, Finding(Code.NO_HASH, Kind.UNVERIFIABLE, path, f"RECORD line {line} gives no hash")
    algorithm, sep, encoded = hash_field.partition("=")
    algorithm = algorithm.lower()
    if not sep or not encoded:
        return None, _malformed(path, line, f"hash {_shown(hash_field)} is not algorithm=digest")
    if algorithm in WEAK_ALGORITHMS:
        return None, Finding(
            Code.WEAK_HASH, Kind.UNVERIFIABLE, path, f"RECORD line {line} uses {algorithm}, too weak to trust"
        )
    if algorithm not in ACCEPTED_ALGORITHMS:
        return None, Finding(
            Code.UNKNOWN_HASH,
            Kind.UNVERIFIABLE,
            path,
            f"RECORD line {line}: unknown hash algorithm {_shown(algorithm)}",
        )
    digest = decode_digest(encoded)
    if digest is None or len(digest) != ACCEPTED_ALGORITHMS[algorithm]:
        return None, _malformed(
            path, line, f"{algorithm} digest {_shown(encoded)} is not valid urlsafe base64 of the right length"
        )
    return RecordRow(path, algorithm, digest, size, line), None

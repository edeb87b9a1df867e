"""A parsed RECORD as data: the rows worth verifying, and the problems found reading it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from wheeldoctor.model.findings import Finding
from wheeldoctor.model.record_fields import encode_digest

#: A named tuple built from a plain tuple of its fields, skipping the named tuple's Python-level
#: ``__new__`` (a third of the cost of building one): for the loops that run once per recorded
#: file (parsing RECORD, resolving its paths, turning proofs into states), and only there.
#: The one place this is spelt.
fast_tuple = tuple.__new__

#: Algorithms that exist but are too weak to vouch for a file.
WEAK_ALGORITHMS = frozenset({"md5", "sha1", "sha224"})


class RecordRow(NamedTuple):
    """One verifiable row: the path as written, its digest (raw bytes) and size.

    A named tuple, not a frozen dataclass: one is made per recorded file, tens of
    thousands per environment, and a dataclass's __init__ costs more than the parsing.
    """

    path: str
    algorithm: str | None
    digest: bytes | None
    size: int | None
    line: int

    @property
    def hash_text(self) -> str | None:
        """The hash as RECORD writes it (``sha256=…``), or None."""
        if self.algorithm is None or self.digest is None:
            return None
        return f"{self.algorithm}={encode_digest(self.digest)}"


@dataclass(frozen=True, slots=True)
class Record:
    """A parsed RECORD: rows worth verifying, plus one finding per problem row."""

    rows: tuple[RecordRow, ...]
    problems: tuple[Finding, ...]
    listed: frozenset[str] = frozenset()
    """Every path RECORD names, verifiable or not (unhashed .pyc rows, bad rows)."""


def bytes_match(row_digest: bytes | None, row_size: int | None, size: int | None, digest: bytes | None) -> bool:
    """Whether ``size`` bytes whose digest under the row's algorithm is ``digest`` are the bytes a RECORD row records.

    The one rule, wherever it is decided (the gate's standard-library path keeps a copy,
    tested against this one): the size, where the row records one, and the digest. A row
    without a hash (``row_digest`` None) records no digest: bytes with none match it.
    """
    return (row_size is None or row_size == size) and digest == row_digest

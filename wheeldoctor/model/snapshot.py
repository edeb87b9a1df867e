"""A snapshot of one environment: what ``wheeldoctor diff`` compares across nodes.

Plain data and the two digests that make it small. A distribution is summed up by two
SHA-256 digests over canonical rows (sorted by path; one JSON array ``[path, hash, size]``
a line), one over what its RECORD says and one over what was found on disk for the same
rows. Where a distribution is intact the two are equal; where a file differs from its
RECORD, its row on disk carries the digest that was found instead, and the file is listed
with both digests. Nothing here reads a file: the verification engine found the bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: The document's own name; the version after it is ``MAJOR.MINOR``. Readers refuse another
#: major version; a minor version only adds fields, which older readers ignore.
SCHEMA = "wheeldoctor-snapshot"
MAJOR = 1
MINOR = 0

#: Files listed per distribution at most: a hostile or wrecked distribution of a million
#: altered files still makes a snapshot of kilobytes (its digests still differ).
FILES_LIMIT = 200

#: Platform tags listed by name; the whole list is summed up by its digest and length.
TAGS_SHOWN = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class FileDrift:
    """One file that differs from its RECORD row: the finding's code and both sides' evidence."""

    path: str
    code: str
    recorded: str | None
    found: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class DistributionState:
    """One distribution as a node has it."""

    name: str
    version: str
    installer: str | None
    status: str
    record: str | None
    """SHA-256 (hex) over RECORD's canonical rows; None where there is no readable RECORD."""
    disk: str | None
    """SHA-256 (hex) over the same rows as found on disk; equal to ``record`` when intact."""
    files: tuple[FileDrift, ...] = ()
    files_omitted: int = 0
    """Files that differ beyond :data:`FILES_LIMIT`, not listed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HookState:
    """A start-up hook: its path below its site directory, kind, owner and SHA-256 (RECORD's spelling)."""

    path: str
    kind: str
    owner: str | None
    sha256: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class UnownedSummary:
    """Files nobody recorded: how many, and the top-level names they make importable."""

    files: int
    importable: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot:
    """One environment of one node."""

    host: str
    implementation: str
    python: str
    platform: str
    """``sys_platform``/``platform_machine`` (``linux/x86_64``)."""
    tags_sha256: str | None
    tags_count: int
    tags_head: tuple[str, ...]
    distributions: tuple[DistributionState, ...]
    hooks: tuple[HookState, ...]
    unowned: UnownedSummary | None
    version: str = f"{MAJOR}.{MINOR}"

    def find(self, name: str) -> DistributionState | None:
        """The distribution called ``name`` (canonical), if the node has it."""
        return next((d for d in self.distributions if d.name == name), None)


Row = tuple[str, "str | None", "int | None"]
"""A RECORD row as it is summed up: path, hash text (``sha256=…``) and size."""


def rows_digest(rows: Iterable[Row]) -> str:
    """SHA-256 (hex) over ``rows`` in canonical form: sorted by path, one JSON array a line."""
    digest = hashlib.sha256()
    # ensure_ascii: a path that is not UTF-8 (surrogate escapes) still has one spelling.
    for row in sorted(rows, key=lambda r: (r[0], r[1] or "", -1 if r[2] is None else r[2])):
        digest.update(json.dumps(list(row), ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n")
    return digest.hexdigest()


def found_rows(rows: Iterable[Row], found: Mapping[str, str]) -> list[Row]:
    """``rows`` as found on disk: a row whose file differs carries ``found[path]`` and no size.

    ``found`` holds the evidence of each differing file: the digest found (``sha256=…``), or
    a token that says why there is none (``missing``, ``unreadable``).
    """
    return [(path, found[path], None) if path in found else (path, hashed, size) for path, hashed, size in rows]


def tags_digest(tags: Iterable[str]) -> str:
    """SHA-256 (hex) over the platform tags in priority order, one a line."""
    return hashlib.sha256("".join(f"{tag}\n" for tag in tags).encode("ascii", "backslashreplace")).hexdigest()

"""Distributions -> claims: every RECORD row resolved to the real path it vouches for.

The ownership map (every real path with all its claimants) is built from claims; a claim
``matches`` a file state when the bytes on disk are the ones its row records.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from wheeldoctor.model.environment import InstalledDistribution
from wheeldoctor.model.files import FileState, FileStatus, HashRequest
from wheeldoctor.model.findings import Code, Finding, Kind
from wheeldoctor.model.record import RecordRow, bytes_match, fast_tuple
from wheeldoctor.model.sitedirs import dir_prefix, is_plain, plain_prefix, resolve_recorded, resolved


class Claim(NamedTuple):
    """One RECORD row of one distribution, resolved to an absolute path.

    A named tuple, like :class:`RecordRow`: one is made per recorded file.
    """

    dist: InstalledDistribution
    row: RecordRow
    path: str


def resolve(dist: InstalledDistribution) -> tuple[list[Claim], list[Finding]]:
    """Resolve a distribution's RECORD rows; rows that climb out of its root are findings."""
    claims: list[Claim] = []
    outside: list[Finding] = []
    if dist.record is None:
        return claims, outside
    prefix = dir_prefix(dist.location)
    root = dist.root
    # A plain path below a normal location inside the root is normal and inside: no normpath.
    plain = plain_prefix(dist.location, root)
    make = fast_tuple
    for row in dist.record.rows:
        text = row.path
        if plain is not None and is_plain(text):
            claims.append(make(Claim, (dist, row, plain + text)))
            continue
        path = resolve_recorded(text, prefix, dist.location, root)
        if path is not None:
            claims.append(Claim(dist, row, path))
        else:
            shown = resolved(text, prefix)
            outside.append(
                Finding(Code.OUTSIDE, Kind.OUTSIDE, row.path, f"resolves to {shown}, outside {root}; not read")
            )
    return claims, outside


def plan(claims: Iterable[Claim]) -> dict[str, HashRequest]:
    """One hash request per real path, covering every claimant's algorithm and size."""
    by_path: dict[str, list[RecordRow]] = {}
    for claim in claims:
        by_path.setdefault(claim.path, []).append(claim.row)
    requests: dict[str, HashRequest] = {}
    # Shared sets: this loop runs once per recorded file, nearly always with one claimant.
    algorithm_sets: dict[str | None, frozenset[str]] = {}
    for path, rows in by_path.items():
        if len(rows) == 1:
            row = rows[0]
            algorithms = algorithm_sets.get(row.algorithm)
            if algorithms is None:
                algorithms = algorithm_sets[row.algorithm] = frozenset((row.algorithm,) if row.algorithm else ())
            sizes = None if row.size is None else frozenset((row.size,))
        else:
            algorithms = frozenset(row.algorithm for row in rows if row.algorithm)
            sizes = (
                None
                if any(row.size is None for row in rows)
                else frozenset(row.size for row in rows if row.size is not None)
            )
        # A file of another size is a finding: read it anyway, for its digest and any recorded prefix.
        requests[path] = HashRequest(path, algorithms, sizes, True)
    return requests


def ownership(resolved: Iterable[Sequence[Claim]]) -> dict[str, tuple[Claim, ...]]:
    """Every real path any of the claim lists records, with all its claimants in order."""
    owners: dict[str, tuple[Claim, ...]] = {}
    for claims in resolved:
        for claim in claims:
            prior = owners.get(claim.path)
            owners[claim.path] = (claim,) if prior is None else (*prior, claim)
    return owners


def recorded_bytes(row: RecordRow, state: FileState) -> bool:
    """Whether the bytes ``state`` saw are the ones ``row`` records (a row without a hash: its size alone)."""
    return bytes_match(row.digest, row.size, state.size, state.digest(row.algorithm or ""))


def matches(row: RecordRow, state: FileState) -> bool:
    """Whether the bytes seen on disk are the ones ``row`` records, by a hash it records."""
    return state.status is FileStatus.HASHED and row.algorithm is not None and recorded_bytes(row, state)

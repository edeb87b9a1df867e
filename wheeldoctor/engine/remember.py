"""What one verification learnt, written back to the cache: one rule for every distribution.

Only files whose bytes matched RECORD are kept, each with the fingerprint it had when it
was read (and only where that is older than the settle window), and the intact verdict
only when every row's file matched and nothing else was found. A distribution whose only
findings are files that did not match keeps a verdict with findings: each such file's row
and state as judged, where reading RECORD found nothing, no row climbs out of the root,
and no path is claimed twice (see :mod:`wheeldoctor.engine.cache`). An entry is written
only where it differs from the one read.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence

from wheeldoctor.engine import cache
from wheeldoctor.engine.wire import FileRecord
from wheeldoctor.judge.claims import Claim, matches
from wheeldoctor.model.environment import InstalledDistribution
from wheeldoctor.model.files import FileState, FileStatus


def remember(
    cache_dir: str,
    dist: InstalledDistribution,
    record: cache.Identity,
    files: Sequence[FileRecord],
    judged: Sequence[cache.JudgedFile] | None,
    *,
    intact: bool,
    rows: int,
    before: tuple[bool, int | None],
) -> None:
    """Write ``dist``'s entry for the RECORD of fingerprint ``record``, unless it is the one read (``before``).

    ``files``: the records of the files that matched RECORD and may be kept, in RECORD's
    order; ``judged``: every other row's file as :func:`judged_file` keeps it, where each
    may be kept (else None); ``rows``: how many rows RECORD has; ``before``: whether an
    entry was found, and its ``hash()``.
    """
    intact = intact and len(files) == rows
    whole = not intact and judged is not None and len(files) + len(judged) == rows
    verdict = (dist.root, tuple(judged)) if whole and judged else None
    entry = cache.Entry(dist.path, record, dist.root if intact else None, tuple(files), verdict)
    found, hashed = before
    if hash(entry) != hashed and (files or verdict or found):
        cache.store(cache_dir, entry)


def file_record(claim: Claim, states: Mapping[str, FileState], started: int) -> FileRecord | None:
    """The cache's record of ``claim``'s file where its bytes matched RECORD and may be kept; else None."""
    state = states[claim.path]
    fingerprint = state.fingerprint
    if fingerprint is None or not matches(claim.row, state):
        return None
    identity = (fingerprint.size, fingerprint.mtime_ns, fingerprint.ctime_ns, fingerprint.inode, fingerprint.device)
    # A file changed in the tick its hashing started could change again unseen.
    if state.cached or cache.settled(identity, started):
        return FileRecord(claim.path, identity, state.digests)
    return None


def judged_files(
    claims: Sequence[tuple[int, Claim]], states: Mapping[str, FileState], started: int, shared: Container[str] | None
) -> list[cache.JudgedFile] | None:
    """Each of ``claims`` (the files that did not match, with their rows' places, in row order)
    as :func:`judged_file` keeps it; None unless all may be kept.

    ``shared``: the paths several rows claim, never kept; None keeps none.
    """
    if shared is None:
        return None
    judged = []
    for place, claim in claims:
        odd = None if claim.path in shared else judged_file(claim, states, started, place)
        if odd is None:
            return None
        judged.append(odd)
    return judged


def judged_file(claim: Claim, states: Mapping[str, FileState], started: int, place: int) -> cache.JudgedFile | None:
    """``claim``'s file as judged, where its bytes did not match and it may be kept; else None.

    ``place``: its row's among all the distribution's rows, for a warm check to give its
    paths in RECORD's order (the link check's findings come in that order).

    Kept only for a regular file seen at a fingerprint (hashed, or too long or short to
    read) that is not still settling, and only for a path its own row alone claims (the
    caller's rule): its state then follows from its bytes and that row alone, so it is the
    state a later check would find while the fingerprint holds.
    """
    state = states[claim.path]
    fingerprint = state.fingerprint
    if fingerprint is None or state.status not in (FileStatus.HASHED, FileStatus.SIZE_ONLY) or state.detail:
        return None
    identity = (fingerprint.size, fingerprint.mtime_ns, fingerprint.ctime_ns, fingerprint.inode, fingerprint.device)
    if state.size != fingerprint.size or not (state.cached or cache.settled(identity, started)):
        return None
    row = claim.row
    written = (row.path, row.algorithm, row.digest, row.size, row.line)
    return (claim.path, written, identity, state.status.value, state.digests, state.links, state.prefixes, place)

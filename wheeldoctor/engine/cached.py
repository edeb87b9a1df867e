"""Claims <-> the cache: what earlier checks vouched for, and what this one learnt.

Digests are reused only while a file keeps its fingerprint; only files whose bytes matched
RECORD are written back, and the verdict only when every file did (see :mod:`wheeldoctor.engine.cache`).
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping, Sequence

from wheeldoctor.engine import cache
from wheeldoctor.judge.claims import Claim, matches
from wheeldoctor.model.environment import InstalledDistribution
from wheeldoctor.model.files import FileState, FileStatus, Fingerprint
from wheeldoctor.model.record import fast_tuple


def recall(cache_dir: str, dists: Sequence[InstalledDistribution]) -> dict[int, cache.Entry]:
    """The cache entries of ``dists`` that were made from their current RECORD."""
    if not cache.usable(cache_dir):
        return {}
    entries = {}
    for dist in dists:
        if dist.record_identity is not None:
            entry = cache.load(cache_dir, dist.path, dist.record_identity)
            if entry is not None:
                entries[id(dist)] = entry
    return entries


def cached_states(entries: Iterable[cache.Entry], only: Container[str] | None = None) -> dict[str, FileState]:
    """What the cache knows, as file states; used only while each fingerprint still holds.

    ``only``: the paths wanted, where they are a few of the entries' files.
    """
    states: dict[str, FileState] = {}
    hashed = FileStatus.HASHED
    make = fast_tuple
    for entry in entries:
        if not all(map(cache.is_file_record, entry.files)):
            continue  # a malformed entry: none of it is used
        for path, identity, digests in entry.files:
            if path not in states and (only is None or path in only):
                states[path] = make(
                    FileState, (hashed, identity[0], digests, "", 1, make(Fingerprint, identity), True, ())
                )
    return states


def remember(
    cache_dir: str,
    dist: InstalledDistribution,
    intact: bool,
    claims: Sequence[Claim],
    states: Mapping[str, FileState],
    before: cache.Entry | None,
    started: int,
) -> None:
    """Write back the files of ``dist`` that matched RECORD, and the verdict if ``intact`` and all did."""
    if dist.record_identity is None:
        return
    files = [record for claim in claims if (record := file_record(claim, states, started)) is not None]
    intact = intact and len(files) == len(claims)
    entry = cache.Entry(dist.path, dist.record_identity, dist.root if intact else None, tuple(files))
    if entry != before and (files or before is not None):
        cache.store(cache_dir, entry)


def file_record(claim: Claim, states: Mapping[str, FileState], started: int) -> cache.FileRecord | None:
    """The cache's record of ``claim``'s file where its bytes matched RECORD and may be kept; else None."""
    state = states[claim.path]
    fingerprint = state.fingerprint
    if fingerprint is None or not matches(claim.row, state):
        return None
    identity = (fingerprint.size, fingerprint.mtime_ns, fingerprint.ctime_ns, fingerprint.inode, fingerprint.device)
    # A file changed in the tick its hashing started could change again unseen.
    if state.cached or cache.settled(identity, started):
        return (claim.path, identity, state.digests)
    return None


def remember_proven(
    cache_dir: str,
    dist: InstalledDistribution,
    record: cache.Identity,
    intact: bool,
    files: tuple[cache.FileRecord, ...],
    rows: int,
    found: bool,
    before: int | None,
) -> None:
    """:func:`remember` for a distribution whose RECORD forked workers parsed, without its claims.

    ``files`` are the records of the files that matched RECORD and may be cached (settled
    or cached already): those the workers proved, and those judged on the exact path, in
    RECORD's order. ``found`` says whether a worker found an entry, ``before`` its ``hash()``
    (None for a malformed one: it differs from any entry written).
    """
    intact = intact and len(files) == rows
    entry = cache.Entry(dist.path, record, dist.root if intact else None, files)
    if hash(entry) != before and (files or found):
        cache.store(cache_dir, entry)

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
    shared: Container[str] | None = None,
) -> None:
    """Write back the files of ``dist`` that matched RECORD, and the verdict if ``intact`` and all did.

    ``shared``: the paths several rows claim. Given (where reading RECORD found nothing
    and no row climbs out of the root), each other file that did not match is kept as
    judged (:func:`judged_file`), and where every one may be, that is a verdict with findings.
    """
    if dist.record_identity is None:
        return
    files: list[cache.FileRecord] = []
    odd: list[tuple[int, Claim]] = []
    for k, claim in enumerate(claims):
        record = file_record(claim, states, started)
        if record is not None:
            files.append(record)
        else:
            odd.append((k, claim))
    intact = intact and not odd
    judged = None if intact else _verdict(dist, judged_files(odd, states, started, shared))
    entry = cache.Entry(dist.path, dist.record_identity, dist.root if intact else None, tuple(files), judged)
    if entry != before and (files or judged or before is not None):
        cache.store(cache_dir, entry)


def _verdict(dist: InstalledDistribution, judged: Sequence[cache.JudgedFile] | None) -> cache.Judged | None:
    return (dist.root, tuple(judged)) if judged else None


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


def judged_state(judged: cache.JudgedFile) -> FileState:
    """The state :func:`judged_file` kept (from a verdict whose fingerprints held)."""
    _, _, identity, status, digests, links, prefixes, _ = judged
    return FileState(FileStatus(status), identity[0], digests, "", links, Fingerprint(*identity), True, prefixes)


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
    judged: Sequence[cache.JudgedFile] | None = None,
) -> None:
    """:func:`remember` for a distribution whose RECORD forked workers parsed, without its claims.

    ``files`` are the records of the files that matched RECORD and may be cached (settled
    or cached already): those the workers proved, and those judged on the exact path, in
    RECORD's order. ``found`` says whether a worker found an entry, ``before`` its ``hash()``
    (None for a malformed one: it differs from any entry written). ``judged``: every other
    row's file as :func:`judged_file` keeps it, where each may be kept (else None).
    """
    intact = intact and len(files) == rows
    whole = not intact and judged is not None and len(files) + len(judged) == rows
    verdict = _verdict(dist, judged) if whole else None
    entry = cache.Entry(dist.path, record, dist.root if intact else None, files, verdict)
    if hash(entry) != before and (files or verdict or found):
        cache.store(cache_dir, entry)

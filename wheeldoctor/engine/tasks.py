"""The bodies of the engine's tasks (:mod:`.wire`), run alike by every executor (:mod:`.executors`).

A worker, a thread or a forked process, does what the schedule asks, one task at a time:
look at a few distributions (settle each on the cache's verdict, else weigh it for the
parse order), read, parse and resolve one RECORD (reading its cache entry, and proving by
one ``lstat`` each file the entry vouches for), prove one piece of files, or audit the
start-up hooks' owners and the unowned files. Each returns the typed result the schedule
takes, whichever executor ran it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain, islice

from wheeldoctor.engine import cache
from wheeldoctor.engine.audit import audit_data
from wheeldoctor.engine.digests import BUFFER_SIZE, prove_file, unchanged
from wheeldoctor.engine.wire import (
    Audit,
    Audited,
    Cut,
    FileRecord,
    KeptFile,
    Look,
    Looked,
    Parse,
    Parsed,
    Proof,
    Prove,
    Proved,
    Result,
    Settled,
    Task,
    Weighed,
)
from wheeldoctor.judge.claims import resolve
from wheeldoctor.model.environment import Environment, InstalledDistribution
from wheeldoctor.model.record import RecordRow, bytes_match, fast_tuple
from wheeldoctor.model.record_fields import MAX_SIZE_DIGITS
from wheeldoctor.where.environment import METADATA_LIMIT, with_record
from wheeldoctor.where.filesystem import ReadError, read_regular
from wheeldoctor.where.hook_files import hook_paths
from wheeldoctor.where.links import through_links

#: Files from this size are a piece of their own.
BIG = 1 << 20
#: Small files are cut into pieces of about this weight (bytes, plus ``_PER_FILE`` a file).
_PIECE = 8 << 20
#: Scheduling weight of one file in bytes: what its system calls cost, in hashing time.
_PER_FILE = 16 << 10
#: Scheduling weight of one byte of RECORD to parse, in bytes to hash: a row of about 100
#: bytes costs about as much to parse and resolve as 3 KiB to hash.
PARSE_WEIGHT = 32
#: A RECORD row's size column, where it is 1 MB or more: enough to find the biggest file. As
#: many digits as a size may have (more is no size, and ``int()`` refuses 4,300 digits).
_BIG_SIZE = re.compile(rb",(\d{7,%d})\r?$" % MAX_SIZE_DIGITS, re.MULTILINE)


@dataclass(slots=True)
class Scratch:
    """What one worker keeps between its tasks: a reused read buffer, and every directory it listed."""

    view: memoryview = field(default_factory=lambda: memoryview(bytearray(BUFFER_SIZE)))
    listings: dict[str, dict[str, int]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Context:
    """What every task of one verification is run against: the same in every worker."""

    dists: Sequence[InstalledDistribution]
    checked: Sequence[bool]
    cache_dir: str | None
    """Where proven files' records are kept (None: none are)."""
    usable: bool
    """Whether ``cache_dir`` may be read: its entries and verdicts are believed."""
    started: int
    """When the verification started: a file changed since is never kept."""
    links: bool
    """Look for directory links on a checked distribution's paths while parsing (no cache keeps that answer)."""
    env: Environment | None = None
    """The environment to audit, for an :class:`Audit`."""

    def run(self, task: Task, scratch: Scratch) -> Result:
        """Do ``task``; its result."""
        if isinstance(task, Look):
            return self.look(task.dists)
        if isinstance(task, Parse):
            return self.parse(task.dist)
        if isinstance(task, Prove):
            return self.prove(task, scratch)
        assert isinstance(task, Audit) and self.env is not None
        return Audited(audit_data(self.env, hook_paths(self.env), self.cache_dir))

    def look(self, indices: list[int]) -> Looked:
        """Each distribution settled on the cache's verdict, else weighed for the parse order."""
        settled = []
        weighed = []
        for index in indices:
            found = self.settle(index) if self.usable else None
            if found is not None:
                settled.append(found)
            else:
                weighed.append(Weighed(index, weight(self.dists[index], self.checked[index])))
        return Looked(settled, weighed)

    def settle(self, index: int) -> Settled | None:
        """The distribution's paths and what its files weigh, if the cache's verdict holds; else None.

        It holds when the cache has a verdict under this root for this very RECORD (intact,
        given only where there was no finding at all, so its files are exactly RECORD's rows;
        or one whose only findings were files that did not match, kept as judged with it) and
        every file is still a regular file with the fingerprint at which it was judged (one
        ``lstat`` each, as a proof by the cache's fingerprint). RECORD is not even parsed.
        An unchecked distribution is wanted for its paths alone.
        """
        dist, checked = self.dists[index], self.checked[index]
        assert self.cache_dir is not None
        record = cache.settled_record_identity(dist.path) if dist.record_deferred else dist.record_identity
        verdict = (
            None if record is None else cache.load_verdict(self.cache_dir, dist.path, record, dist.root, judged=True)
        )
        if record is None or verdict is None:
            return None
        paths, fingerprints, judged = verdict
        kept = [fast_tuple(KeptFile, judged_file) for judged_file in judged]
        size = 0
        if checked:
            if not cache.all_unchanged(paths, fingerprints, follow=False):  # also False for a malformed entry
                return None
            odd = [file.fingerprint for file in kept]
            if kept and not cache.all_unchanged([file.path for file in kept], odd, follow=False):
                return None
            size = sum(fingerprint[0] for fingerprint in chain(fingerprints, odd))
        # Each kept file back in its row's place (the link check's findings come in RECORD's
        # order), in one pass: the places rise (see cache.load_verdict).
        everything: list[str] = []
        others = iter(paths)
        for file in kept:
            everything.extend(islice(others, file.place - len(everything)))
            everything.append(file.path)
        everything.extend(others)
        if not checked:
            return Settled(index, record, everything, 0, 0, [])
        return Settled(index, record, everything, len(everything), size, kept)

    def parse(self, index: int, *, prove: bool = True) -> Parsed:
        """Read, parse and resolve a RECORD not settled; read its cache entry; cut the work in pieces.

        Without ``prove`` (or for a distribution not checked), its paths and rows alone.
        """
        dist, checked = self.dists[index], self.checked[index] and prove
        read = with_record(dist)
        claims, outside = resolve(read)
        problems = (*read.problems[len(dist.problems) :], *(read.record.problems if read.record else ()))
        paths = [claim.path for claim in claims]
        rows = [claim.row for claim in claims]
        identity = read.record_identity
        if not checked:
            return Parsed(
                index, identity, paths, rows, None, [], problems, tuple(outside), (False, None), None,
                Proved(index, -1, [], [], 0), 0, 0,
            )  # fmt: skip
        entry = None
        if self.usable and identity is not None:
            assert self.cache_dir is not None
            entry = cache.load(self.cache_dir, read.path, identity)
        decided, proved = vouched(index, paths, rows, entry)
        cuts, files, size = cut(rows, decided)
        # A system package manager's files are its own to judge (see verify's link check).
        linked = through_links(paths, dist.location) if self.links and not dist.system_managed else None
        return Parsed(
            index, identity, paths, rows, decided, cuts, problems, tuple(outside), entry_seen(entry), linked,
            proved, files + len(proved.proofs), size + proved.size,
        )  # fmt: skip

    def prove(self, task: Prove, scratch: Scratch) -> Proved:
        """Prove the files of one piece (what was decided while parsing is skipped)."""
        proofs: list[Proof] = []
        records: list[FileRecord] = []
        done = 0
        first, keep, started = task.first, self.cache_dir is not None, self.started
        view, listings = scratch.view, scratch.listings
        settled = cache.settled
        make = fast_tuple
        for k, (path, row, skip) in enumerate(zip(task.paths, task.rows, task.decided, strict=True)):
            _, algorithm, digest, size, _ = row
            if digest is None or size is None or not algorithm or skip:
                continue  # unprovable here, or proved already or left to the exact path while parsing
            seen = prove_file(path, size, algorithm, digest, view, listings)
            if seen is None:
                continue
            proofs.append(make(Proof, (first + k, *seen, False)))
            done += size
            identity = (size, seen[0], seen[1], seen[2], seen[3])
            # A file changed in the tick its hashing started could change again unseen.
            if keep and settled(identity, started):
                records.append(make(FileRecord, (path, identity, ((algorithm, digest),))))
        return Proved(task.dist, first, proofs, records, done)


def entry_seen(entry: cache.Entry | None) -> tuple[bool, int | None]:
    """Whether a cache entry was found, and its ``hash()`` (None for a malformed one: it differs from any written)."""
    if entry is None:
        return False, None
    try:
        return True, hash(entry)
    except TypeError:  # a malformed entry (lists inside)
        return True, None


def vouched(
    index: int, paths: list[str], rows: list[RecordRow], entry: cache.Entry | None
) -> tuple[list[bool] | None, Proved]:
    """Each row settled now from the cache's ``entry`` (None where it vouches for none), and what that proved.

    Where the entry holds RECORD's digest at some fingerprint, a file still at it is proved
    by one ``lstat``, here and now (a piece would cost more to send); changed since, a piece
    reads it. Where it holds another digest, the row is left to the exact path, which
    decides from the cache's, as it would without workers.
    """
    known: dict[str, tuple[cache.Identity, cache.Digests]] = {}
    if entry is not None and all(map(cache.is_file_record, entry.files)):
        known = {path: (identity, digests) for path, identity, digests in entry.files}
    if not known:
        return None, Proved(index, -1, [], [], 0)
    decided: list[bool] = []
    proofs: list[Proof] = []
    records: list[FileRecord] = []
    done = 0
    for k, (path, row) in enumerate(zip(paths, rows, strict=True)):
        prior = known.get(path)
        if prior is None:
            decided.append(False)
            continue
        (fingerprint, digests), size = prior, row.size
        ours = [
            pair
            for pair in digests
            if pair[0] == row.algorithm and bytes_match(row.digest, size, fingerprint[0], pair[1])
        ]
        if size is None or not ours:
            decided.append(True)
            continue
        seen = unchanged(path, fingerprint)
        decided.append(seen is not None)
        if seen is not None:
            proofs.append(fast_tuple(Proof, (k, *seen, True)))
            records.append(fast_tuple(FileRecord, (path, fingerprint, (ours[0],))))
            done += size
    return decided, Proved(index, -1, proofs, records, done)


def cut(rows: Sequence[RecordRow], decided: Sequence[bool] | None) -> tuple[list[Cut], int, int]:
    """The rows not ``decided``, cut into pieces heaviest-first scheduling can hand out; the files and bytes in them.

    Every file of :data:`BIG` bytes or more is a piece of its own; small files go in runs of
    about :data:`_PIECE` of work, a directory's files together.
    """
    cuts: list[Cut] = []
    files = size_total = 0
    first, weight_now, pending = 0, 0, 0
    for k, row in enumerate(rows):
        if decided is not None and decided[k]:
            continue
        size = row.size or 0
        files += 1
        size_total += size
        if size >= BIG:
            if pending:
                cuts.append(Cut(first, k, weight_now))
            cuts.append(Cut(k, k + 1, size + _PER_FILE))
            first, weight_now, pending = k + 1, 0, 0
            continue
        weight_now += size + _PER_FILE
        pending += 1
        if weight_now >= _PIECE:
            cuts.append(Cut(first, k + 1, weight_now))
            first, weight_now, pending = k + 1, 0, 0
    if pending:
        cuts.append(Cut(first, len(rows), weight_now))
    return cuts, files, size_total


def weight(dist: InstalledDistribution, checked: bool) -> int:
    """How long parsing ``dist``'s RECORD and then hashing its biggest file take, in bytes to hash.

    The parse order, heaviest first: the biggest file (a CUDA library of half a gigabyte)
    can only start once its RECORD is parsed, and a long RECORD (torch's 12,000 rows)
    keeps a worker parsing a while before its own big files can start. The RECORD's size
    column is only scanned here, not parsed, and only for a checked distribution (an
    unchecked one is parsed for its paths alone: its length is its weight); an unreadable
    RECORD weighs nothing.
    """
    if dist.record is not None:
        sizes = [row.size or 0 for row in dist.record.rows] if checked else []
        return len(dist.record.rows) * 100 * PARSE_WEIGHT + max(sizes, default=0)
    path = os.path.join(dist.path, "RECORD")
    if not checked:
        try:
            return os.stat(path).st_size * PARSE_WEIGHT
        except (OSError, ValueError):
            return 0
    data = read_regular(path, METADATA_LIMIT)
    if isinstance(data, ReadError):
        return 0
    return len(data) * PARSE_WEIGHT + max(map(int, _BIG_SIZE.findall(data)), default=0)


def rows_estimate(dist: InstalledDistribution) -> int:
    """About how many files ``dist`` records, without parsing a deferred RECORD."""
    if dist.record is not None:
        return len(dist.record.rows)
    if not dist.record_deferred:
        return 0
    try:
        return os.stat(os.path.join(dist.path, "RECORD")).st_size // 100
    except (OSError, ValueError):
        return 0

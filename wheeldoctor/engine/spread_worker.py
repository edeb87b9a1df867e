"""The worker's side of :mod:`wheeldoctor.engine.spread`: read and cut RECORDs, prove pieces.

A worker does what the parent asks, one task at a time, until it says stop: look at a few
distributions (settle each on the cache's verdict, else weigh it for the parse order), read, parse and resolve
one RECORD (and read its cache entry, proving by one ``lstat`` each file the cache vouches
for; without a cache, look for directory links on its paths), prove one piece of files,
as :mod:`wheeldoctor.engine.proof_workers` does, or judge the words of a few distributions.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import re
from collections.abc import Sequence
from itertools import chain, islice
from typing import cast

from wheeldoctor.engine import cache
from wheeldoctor.engine.digests import BUFFER_SIZE
from wheeldoctor.engine.messages import (
    AT_PARSE,
    Cut,
    FileRecord,
    Judge,
    Judged,
    Look,
    Looked,
    Message,
    Parse,
    Proof,
    Prove,
    Proved,
    RecordParsed,
    Row,
    Settled,
    Stop,
    decode,
    encode,
    pickle_problems,
)
from wheeldoctor.engine.proof_workers import prove_file, unchanged
from wheeldoctor.engine.workers import send
from wheeldoctor.formats.names import unsafe_words
from wheeldoctor.judge.claims import resolve
from wheeldoctor.model.environment import InstalledDistribution
from wheeldoctor.model.record import bytes_match
from wheeldoctor.where.environment import METADATA_LIMIT, with_record
from wheeldoctor.where.filesystem import ReadError, read_regular
from wheeldoctor.where.links import through_links

#: Files from this size are a piece of their own.
BIG = 1 << 20
#: Small files are cut into pieces of about this weight (bytes, plus ``_PER_FILE`` a file).
_PIECE = 8 << 20
#: Scheduling weight of one file in bytes: what its system calls cost, in hashing time.
_PER_FILE = 16 << 10
#: Scheduling weight of one byte of RECORD to parse, in bytes to hash: a row of about 100
#: bytes takes about 3 µs to parse and resolve, SHA-256 about 0.75 ns a byte.
PARSE_WEIGHT = 32
#: A RECORD row's size column, where it is 1 MB or more: enough to find the biggest file.
_BIG_SIZE = re.compile(rb",(\d{7,})\r?$", re.MULTILINE)
_HEADER = 4


def _read_task(fd: int) -> Message | None:
    """The next task from the parent, or None once it has closed the pipe."""
    header = _read_exactly(fd, _HEADER)
    if header is None:
        return None
    payload = _read_exactly(fd, int.from_bytes(header, "big"))
    return None if payload is None else decode(marshal.loads(payload))


def _read_exactly(fd: int, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _serve(
    dists: Sequence[InstalledDistribution],
    checked: Sequence[bool],
    cache_dir: str | None,
    usable: bool,
    started: int,
    tasks: int,
    out: int,
) -> None:
    """The body of a worker: do what the parent asks until it says stop."""
    view = memoryview(bytearray(BUFFER_SIZE))
    # Every listing is kept: a RECORD may come back to a directory after listing another.
    listings: dict[str, dict[str, int]] = {}
    while True:
        task = _read_task(tasks)
        if task is None or isinstance(task, Stop):
            return
        if isinstance(task, Look):
            answer: Message = _look(task.indices, dists, checked, cache_dir if usable else None)
        elif isinstance(task, Parse):
            # No cache, no link memo: the directories on the paths are looked at while parsing.
            answer = _parse(
                task.dist, dists[task.dist], checked[task.dist], cache_dir if usable else None, cache_dir is None
            )
        elif isinstance(task, Judge):
            fit = [i for i in task.dists if unsafe_words(dists[i].name, dists[i].version or None) is None]
            answer = Judged(fit)
        else:
            assert isinstance(task, Prove)
            answer = _prove_piece(
                task.dist,
                task.first,
                task.paths,
                task.rows,
                task.decided,
                cache_dir,
                started,
                view,
                listings,
            )
        send(out, encode(answer))


def _look(
    indices: list[int],
    dists: Sequence[InstalledDistribution],
    checked: Sequence[bool],
    cache_dir: str | None,
) -> Looked:
    """Each distribution settled on the cache's verdict, else weighed for the parse order."""
    settled = []
    weighed = []
    for index in indices:
        dist = dists[index]
        found = None if cache_dir is None else _settled(index, dist, checked[index], cache_dir)
        if found is not None:
            settled.append(found)
            continue
        weighed.append((index, _weight(dist, checked[index])))
    return Looked(settled, weighed)


def _weight(dist: InstalledDistribution, checked: bool) -> int:
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


def _parse(index: int, dist: InstalledDistribution, checked: bool, cache_dir: str | None, links: bool) -> RecordParsed:
    """Read, parse and resolve an unsettled RECORD (see :func:`_look`), read its cache entry, cut the work in pieces.

    ``links``: look at the directories on a checked distribution's paths for symbolic links
    here, in parallel, instead of the parent once every file is proved (where no memo keeps
    the link check's answer: a run without a cache).
    """
    read = with_record(dist)
    claims, outside = resolve(read)
    problems = (*read.problems[len(dist.problems) :], *(read.record.problems if read.record else ()))
    extras = pickle_problems(problems, outside) if problems or outside else None
    paths = [claim.path for claim in claims]
    rows = cast("list[Row]", [tuple(claim.row) for claim in claims])
    if not checked:
        nothing = Proved(index, AT_PARSE, [], [], 0)
        return RecordParsed(
            index, read.record_identity, paths, rows, None, [], extras, False, None, None, nothing, 0, 0
        )
    known: dict[str, tuple[cache.Identity, cache.Digests]] = {}
    found, before = False, None
    if cache_dir is not None and read.record_identity is not None:
        entry = cache.load(cache_dir, read.path, read.record_identity)
        if entry is not None:
            found = True
            with contextlib.suppress(TypeError):  # a malformed entry (lists inside): its hash stays None
                before = hash(entry)
            if all(map(cache.is_file_record, entry.files)):
                known = {path: (identity, digests) for path, identity, digests in entry.files}
    decided: list[bool] = []
    proofs: list[Proof] = []
    files: list[FileRecord] = []
    done = 0
    cuts: list[Cut] = []
    first, weight, pending = 0, 0, 0
    work = [0, 0]  # files and bytes to prove, in pieces or here
    for k, (path, (_, algorithm, digest, size, _)) in enumerate(zip(paths, rows, strict=True)):
        prior = known.get(path) if known else None
        settled = False
        if prior is not None:
            if size is not None and any(
                name == algorithm and bytes_match(digest, size, prior[0][0], seen) for name, seen in prior[1]
            ):
                # The cache's digest is RECORD's: one lstat proves it, here and now (a piece
                # would cost more to send); changed since, a piece reads it.
                proof = unchanged(path, prior[0])
                if proof is not None:
                    proofs.append((k, *proof, True))
                    files.append((path, prior[0], cast("cache.Digests", ((algorithm, digest),))))
                    done += size or 0
                    settled = True
            else:  # another digest: the exact path decides from the cache's, as it would without workers
                settled = True
        decided.append(settled)
        if settled:
            continue
        work[0] += 1
        work[1] += size or 0
        cost = (size or 0) + _PER_FILE
        if cost - _PER_FILE >= BIG:
            if pending:
                cuts.append((first, k, weight))
            cuts.append((k, k + 1, cost))
            first, weight, pending = k + 1, 0, 0
            continue
        weight += cost
        pending += 1
        if weight >= _PIECE:
            cuts.append((first, k + 1, weight))
            first, weight, pending = k + 1, 0, 0
    if pending:
        cuts.append((first, len(rows), weight))
    return RecordParsed(
        index,
        read.record_identity,
        paths,
        rows,
        decided if known else None,
        cuts,
        extras,
        found,
        before,
        # A system package manager's files are its own to judge (see verify._linked_out).
        through_links(paths, dist.location) if links and not dist.system_managed else None,
        Proved(index, AT_PARSE, proofs, files, done),
        work[0] + len(proofs),
        work[1] + done,
    )


def _settled(index: int, dist: InstalledDistribution, checked: bool, cache_dir: str) -> Settled | None:
    """The distribution's paths and what its files weigh, if the cache's verdict holds; else None.

    It holds when the cache has a verdict under this root for this very RECORD (intact,
    given only where there was no finding at all, so its files are exactly RECORD's rows;
    or one whose only findings were files that did not match, kept as judged with it) and
    every file is still a regular file with the fingerprint at which it was judged (one
    lstat each, as the slow path proves a vouched file). Such a distribution has nothing
    new to report: only its paths go back, for the ownership map, with the judged files,
    and RECORD is not even parsed. An unchecked distribution is wanted for its paths alone.
    """
    # The RECORD read already, if the parent read it (as the slow path keys the entry), else now.
    record = cache.settled_record_identity(dist.path) if dist.record_deferred else dist.record_identity
    if record is None:
        return None
    verdict = cache.load_verdict(cache_dir, dist.path, record, dist.root, judged=True)
    if verdict is None:
        return None
    paths, fingerprints, judged = verdict
    size = 0
    if checked:
        if not cache.all_unchanged(paths, fingerprints, follow=False):  # also False for a malformed entry
            return None
        odd = [judged_file[2] for judged_file in judged]
        if judged and not cache.all_unchanged([judged_file[0] for judged_file in judged], odd, follow=False):
            return None
        size = sum(fingerprint[0] for fingerprint in chain(fingerprints, odd))
    # Each judged file back in its row's place (the link check's findings come in RECORD's
    # order), in one pass: the places rise (see cache.load_verdict).
    everything: list[str] = []
    others = iter(paths)
    for judged_file in judged:
        everything.extend(islice(others, judged_file[7] - len(everything)))
        everything.append(judged_file[0])
    everything.extend(others)
    kept = list(judged) if checked else []  # an unchecked distribution is wanted for its paths alone
    return Settled(index, record, everything, len(everything) if checked else 0, size, kept)


def _prove_piece(
    index: int,
    first: int,
    paths: list[str],
    rows: list[Row],
    decided: list[bool],
    cache_dir: str | None,
    started: int,
    view: memoryview,
    listings: dict[str, dict[str, int]],
) -> Proved:
    """Prove the files of one piece (what was decided while parsing is skipped)."""
    proofs: list[Proof] = []
    files: list[FileRecord] = []
    done = 0
    settled = cache.settled
    for k, (path, (_, algorithm, digest, size, _), skip) in enumerate(zip(paths, rows, decided, strict=True)):
        if digest is None or size is None or not algorithm or skip:
            continue  # unprovable here, or proved already or left to the exact path while parsing
        proved = prove_file(path, size, algorithm, digest, None, view, listings)
        if proved is None:
            continue
        (mtime, ctime, inode, device, links), cached = proved
        proofs.append((first + k, mtime, ctime, inode, device, links, cached))
        done += size
        if cache_dir is not None:
            identity = (size, mtime, ctime, inode, device)
            # A file changed in the tick its hashing started could change again unseen.
            if cached or settled(identity, started):
                files.append((path, identity, ((algorithm, digest),)))
    return Proved(index, first, proofs, files, done)

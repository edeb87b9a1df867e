"""Verification spread over forked workers, distribution by distribution (the command line only).

The parent forks the workers first, then only schedules. Workers first look at the
distributions, a few at a time: one whose cache verdict holds is settled there and then
(its paths come back, nothing else), every other is weighed by its RECORD's length and
its biggest file. Those are then parsed heaviest first: a worker reads and parses a
RECORD, resolves its rows, reads its cache entry and sends back what the parent needs to
know (the resolved paths, the rows as plain tuples, the fingerprints the cache vouches
for, and the work cut into pieces). The parent hands out the heaviest task it has, a
RECORD to parse or a piece: every file of 1 MiB or more alone, the small files of a
distribution in runs of about 8 MiB of work. A task goes to whichever worker is free, so
the biggest file starts hashing as soon as its RECORD is read, not once every RECORD is,
and nothing waits on a worker that drew a heavy share. A worker proves a piece's files
as :mod:`wheeldoctor.engine.proof_workers` does (one ``lstat`` for a file the cache vouches
for, else one listing per directory and one open, read and close per file) and returns,
per proven file, a few integers and its cache record. Whatever is not proven comes back
as not proven, for the exact path to judge.

The words of a distribution that a repair step will likely name (the cache's verdict had
findings, or no longer holds) are judged by one worker, the first free one, then the same
one again, so that one worker imports packaging for them.

Messages are typed (:mod:`.messages`), marshal data on the pipe; the rare findings that
parsing gives travel pickled. A worker that dies only leaves its work undone: the parent
does it itself. No worker outlives the parent (see :mod:`.fork`).
"""

from __future__ import annotations

import contextlib
import heapq
import os
import select
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from itertools import chain

from wheeldoctor.engine import cache
from wheeldoctor.engine.fork import fork, reap
from wheeldoctor.engine.messages import (
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
    unpickle_problems,
)
from wheeldoctor.engine.spread_worker import _serve
from wheeldoctor.engine.workers import complete_frames, send
from wheeldoctor.formats.names import vouch
from wheeldoctor.model.environment import InstalledDistribution
from wheeldoctor.model.findings import Finding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from wheeldoctor.engine.cache import JudgedFile

_DONE = object()


class Parsed:
    """What a worker learnt of one distribution, and what the pieces proved of it."""

    __slots__ = (
        "before",
        "decided",
        "files",
        "found",
        "identity",
        "judged",
        "linked",
        "outside",
        "paths",
        "problems",
        "proofs",
        "rows",
    )

    def __init__(
        self,
        identity: cache.Identity | None,
        paths: list[str],
        rows: list[Row] | None,
        decided: list[bool] | None,
        problems: tuple[Finding, ...],
        outside: tuple[Finding, ...],
        found: bool = False,
        before: int | None = None,
        linked: dict[str, str] | None = None,
        judged: Sequence[JudgedFile] = (),
    ) -> None:
        self.identity = identity
        self.paths = paths
        #: None when the cache's verdict held (see ``spread_worker._settled``): nothing to report.
        self.rows = rows
        #: The rows settled while parsing (see :class:`~wheeldoctor.engine.messages.Prove`).
        self.decided = decided
        #: Findings of reading RECORD: the one that ``with_record`` adds, then RECORD's own.
        self.problems = problems
        self.outside = outside
        self.proofs: list[Proof] = []
        #: Cache records of the proven files, by the index of their piece's first row.
        self.files: dict[int, list[FileRecord]] = {}
        #: Whether the worker found a cache entry, and its ``hash()`` (forked workers hash as the parent does).
        self.found = found
        self.before = before
        #: The paths a directory link takes elsewhere, where the worker looked (see ``RecordParsed``).
        self.linked = linked
        #: Where a verdict with findings held: its files kept as judged (see ``Settled``).
        self.judged = judged


def spread(
    dists: Sequence[InstalledDistribution],
    checked: Sequence[bool],
    jobs: int,
    cache_dir: str | None,
    started: int,
    estimates: Sequence[int],
    progress: Callable[[int, int], None] | None = None,
    begin: Callable[[int, int], None] | None = None,
    meanwhile: Iterator[object] | None = None,
) -> list[Parsed | None]:
    """What ``jobs`` forked workers learnt of each of ``dists`` (None where a worker died first).

    Only the distributions marked in ``checked`` have their files proved; the others are
    parsed and resolved, for attribution. ``estimates`` are their :func:`rows_estimate`.
    ``begin`` is told the work's size once every RECORD is read; ``progress`` then
    advances as pieces come back. ``meanwhile`` is the caller's own work: one step of it
    is taken whenever no worker waits on the parent (what is left of it is left undone).
    """
    usable = cache_dir is not None and cache.usable(cache_dir)
    results: list[Parsed | None] = [None] * len(dists)
    most = max(1, min(jobs, len(dists)))
    looks = look_batches(estimates, most)
    parse: list[tuple[int, int]] = []  # heap of (-weight, dist)
    pieces: list[tuple[int, int, int, int]] = []  # heap of (-weight, dist, first row, end row)
    reading: set[int] = set()  # workers looking or parsing: more pieces may come
    parked: list[int] = []
    workers: dict[int, tuple[int, int]] = {}  # result fd -> (pid, task fd)
    buffers: dict[int, bytearray] = {}  # what each live worker sent, not yet read
    backlog: list[Proved | Settled] = []  # what was proved (or settled) not yet recorded
    totals = [0, 0]  # files and bytes to prove, known once every RECORD is read
    begun = [begin is None]
    words: list[int] = []  # distributions a repair step will likely name: their words to judge
    judge: list[int] = []  # the worker that judges words, once one has (it imported packaging for them)

    def begin_once() -> None:
        if not begun[0] and not looks and not parse and not reading:
            begun[0] = True
            assert begin is not None
            begin(totals[0], totals[1])

    def fork_workers() -> None:
        """Fork every worker now, while no other thread runs (a progress bar's starts later)."""
        for _ in range(most):
            tasks_read, tasks_write = os.pipe()
            results_read, results_write = os.pipe()
            serve = partial(_serve, dists, checked, cache_dir, usable, started, tasks_read, results_write)
            pid = fork(serve, keep=(tasks_read, results_write))
            os.close(tasks_read)
            os.close(results_write)
            if pid is None:  # not safe to fork now: what no worker does, the parent does
                os.close(tasks_write)
                os.close(results_read)
                continue
            workers[results_read] = (pid, tasks_write)
            buffers[results_read] = bytearray()

    def assign(fd: int) -> None:
        task_fd = workers[fd][1]
        if words and (not judge or judge[0] == fd or judge[0] not in buffers):
            # One worker judges every distribution's words: each that did would import packaging's
            # name and version modules for them (14 ms of CPU each on the 2-core machine). Words
            # come only with a Looked or a RecordParsed, so none comes once a worker is stopped;
            # the judge, parked, takes them when it is next given a task.
            judge[:] = [fd]
            _write(task_fd, Judge(words[:]))
            words.clear()
        elif looks:
            reading.add(fd)
            _write(task_fd, Look(looks.pop()))
        elif parse and (not pieces or parse[0][0] <= pieces[0][0]):  # the heavier first
            _, index = heapq.heappop(parse)
            reading.add(fd)
            _write(task_fd, Parse(index))
        elif pieces:
            _, index, first, end = heapq.heappop(pieces)
            parsed = results[index]
            assert parsed is not None and parsed.rows is not None
            decided = parsed.decided[first:end] if parsed.decided is not None else [False] * (end - first)
            _write(task_fd, Prove(index, first, parsed.paths[first:end], parsed.rows[first:end], decided))
        elif reading:
            parked.append(fd)  # a RECORD still being read may give more pieces
        else:
            _write(task_fd, Stop())

    def handle(fd: int, message: Message) -> None:
        if isinstance(message, Looked):
            reading.discard(fd)
            for settled in message.settled:
                results[settled.dist] = Parsed(settled.record, settled.paths, None, None, (), (), judged=settled.judged)
                if settled.judged:  # a verdict with findings: a repair step will name it
                    words.append(settled.dist)
                totals[0] += settled.files
                totals[1] += settled.size
                backlog.append(settled)
            for index, weight in message.weighed:
                heapq.heappush(parse, (-weight, index))
            begin_once()
        elif isinstance(message, RecordParsed):
            reading.discard(fd)
            index = message.dist
            problems, outside = unpickle_problems(message.problems) if message.problems is not None else ((), ())
            results[index] = Parsed(
                message.identity,
                message.paths,
                message.rows,
                message.decided,
                problems,
                outside,
                message.entry_found,
                message.entry_hash,
                message.linked,
            )
            backlog.append(message.proved)  # the files the cache vouched for, proved while parsing
            if message.entry_found:  # an entry that no longer settles it: a repair step will likely name it
                words.append(index)
            for first, end, weight in message.cuts:
                heapq.heappush(pieces, (-weight, index, first, end))
            totals[0] += message.files
            totals[1] += message.size
            begin_once()
        elif isinstance(message, Judged):
            for index in message.fit:  # judged by the same rules in the worker (see formats/names)
                vouch(dists[index].name, dists[index].version or None)
        else:  # recorded later, once every waiting worker has its next task
            assert isinstance(message, Proved)
            backlog.append(message)

    def absorb(done: Proved | Settled) -> None:
        """Record what one piece proved (or count a settled distribution's files)."""
        if isinstance(done, Settled):
            if progress is not None:
                progress(done.files, done.size)
            return
        parsed = results[done.dist]
        assert parsed is not None
        parsed.proofs.extend(done.proofs)
        parsed.files[done.first] = done.files
        if progress is not None:
            progress(len(done.proofs), done.size)

    finished = False
    try:
        fork_workers()
        for fd in reversed(list(workers)):
            assign(fd)
        while buffers:
            # The parent's own work waits while any worker waits for it: a worker is never idle
            # while the parent records proofs, and they are recorded while the workers hash.
            ready, _, _ = select.select(list(buffers), [], [], 0 if backlog or meanwhile is not None else None)
            if not ready:
                if backlog:
                    absorb(backlog.pop())
                elif meanwhile is not None and next(meanwhile, _DONE) is _DONE:
                    meanwhile = None
                continue
            for fd in ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:  # the worker is gone: what it held is undone
                    del buffers[fd]
                    reading.discard(fd)
                    if fd in parked:
                        parked.remove(fd)
                    begin_once()
                    continue
                buffer = buffers[fd]
                buffer += chunk
                for frame in complete_frames(buffer):
                    handle(fd, decode(frame))
                    if fd in workers:
                        assign(fd)
            while parked and (parse or pieces or not reading):
                assign(parked.pop())
        for done in backlog:
            absorb(done)
        finished = True
    finally:
        for fd, (pid, task_fd) in workers.items():
            for end in (fd, task_fd):
                with contextlib.suppress(OSError):
                    os.close(end)
            reap(pid, stop=not finished)
    return results


def look_batches(estimates: Sequence[int], workers: int) -> list[list[int]]:
    """The distributions to look at, in batches of about equal rows, the heaviest last (for ``pop()``).

    About two batches per worker, so that a slow one holds up little; what is not settled
    is then parsed heaviest first. A distribution of that many rows or more is a batch of
    its own, looked at first: its stats on a warm cache are the longest look, and came
    late when its batch waited its turn.
    """
    order = sorted(range(len(estimates)), key=estimates.__getitem__, reverse=True)
    share = max(1, sum(estimates) // (2 * workers))
    most = -(-len(estimates) // (2 * workers))  # a cap on distributions per batch: each has its own reads
    batches: list[list[int]] = []
    batch: list[int] = []
    rows = 0
    for index in order:
        batch.append(index)
        rows += estimates[index]
        if rows >= share or len(batch) >= most:
            batches.append(batch)
            batch, rows = [], 0
    if batch:
        batches.append(batch)
    batches.reverse()
    return batches


def repeated(lists: Sequence[Sequence[str]]) -> set[str]:
    """The paths that more than one row claims, over all of ``lists`` (what the workers sent back).

    Nearly always none: one set of every path shows that (cheaper than counting them),
    and only then are they counted.
    """
    seen: set[str] = set()
    for paths in lists:
        seen.update(paths)
    if len(seen) == sum(map(len, lists)):
        return set()
    counts = Counter(chain.from_iterable(lists))
    return {path for path, n in counts.items() if n > 1}


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


def _write(fd: int, task: Message) -> None:
    # A worker that died cannot take it: its work is then left undone, for the parent.
    with contextlib.suppress(OSError):
        send(fd, encode(task))

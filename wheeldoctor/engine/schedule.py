"""What the verification's workers do next: the heaviest task first, and what each task learnt.

The :class:`Schedule` hands out tasks (:mod:`.wire`) to whichever worker is free and takes
their results; it knows nothing of threads, processes or pipes (:mod:`.executors` run it).
The audit first, if asked; then the distributions are looked at, a few at a time, the
heaviest first and alone: one whose cache verdict holds is settled there and then, every
other is weighed by its RECORD's length and its biggest file. Those are then parsed
heaviest first, and their work cut into pieces: every file of 1 MiB or more alone, the
small files of a distribution in runs. A free worker takes the heaviest task left, a
RECORD to parse or a piece to prove, so the biggest file starts as soon as its RECORD is
read, not once every RECORD is, and nothing waits on a worker that drew a heavy share.
A worker with nothing to take while a RECORD is still being read waits: it may give more.
A task whose worker died is an orphan, done in this process once the workers are gone.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from wheeldoctor.engine.tasks import cut
from wheeldoctor.engine.wire import (
    Audit,
    Audited,
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
    Stop,
    Task,
)
from wheeldoctor.model.findings import Finding
from wheeldoctor.model.fingerprint import Identity
from wheeldoctor.model.record import RecordRow


class ProgressSink(Protocol):
    """Receives the size of the work once, then advances as it is done."""

    def begin(self, files: int, total_bytes: int) -> None:
        """The work ahead: this many files, about this many bytes."""

    def advance(self, files: int, done_bytes: int) -> None:
        """Some files are done."""


@dataclass(slots=True, kw_only=True)
class Learnt:
    """What the tasks learnt of one distribution: its RECORD's paths and rows, and what was proved of them."""

    identity: Identity | None
    """RECORD's fingerprint when it was read (the cache's key), or None."""
    paths: list[str]
    rows: list[RecordRow] | None
    """None where the cache's verdict held: nothing to judge but the files it kept as judged."""
    problems: tuple[Finding, ...] = ()
    """The findings of reading RECORD: the one that ``with_record`` adds, then RECORD's own."""
    outside: tuple[Finding, ...] = ()
    decided: list[bool] | None = None
    proofs: list[Proof] = field(default_factory=list)
    records: dict[int, list[FileRecord]] = field(default_factory=dict)
    """The cache's records of the proven files, by the first row of their piece (-1: proved while parsing)."""
    entry: tuple[bool, int | None] = (False, None)
    """Whether a cache entry was found, and its ``hash()``."""
    linked: dict[str, str] | None = None
    kept: list[KeptFile] = field(default_factory=list)

    @classmethod
    def of(cls, parsed: Parsed) -> Learnt:
        """What a :class:`~wheeldoctor.engine.wire.Parsed` says, its proofs while parsing included."""
        learnt = cls(
            identity=parsed.identity,
            paths=parsed.paths,
            rows=parsed.rows,
            problems=parsed.problems,
            outside=parsed.outside,
            decided=parsed.decided,
            entry=parsed.entry,
            linked=parsed.linked,
        )
        learnt.proofs.extend(parsed.proved.proofs)
        learnt.records[parsed.proved.first] = parsed.proved.records
        return learnt


def look_batches(estimates: Sequence[int], indices: Sequence[int], workers: int) -> list[list[int]]:
    """``indices`` in batches of about equal rows (by ``estimates``), the heaviest last (for ``pop()``).

    About two batches per worker, so that a slow one holds up little; what is not settled
    is then parsed heaviest first. A distribution of that many rows or more is a batch of
    its own, looked at first: its stats on a warm cache are the longest look.
    """
    order = sorted(indices, key=estimates.__getitem__, reverse=True)
    share = max(1, sum(estimates[i] for i in indices) // (2 * workers))
    most = -(-len(indices) // (2 * workers))  # a cap on distributions per batch: each has its own reads
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


class Schedule:
    """The verification's tasks and what they learnt, worker by worker (a worker is any hashable name)."""

    def __init__(
        self,
        checked: Sequence[bool],
        looks: list[list[int]],
        planned: dict[int, Learnt],
        *,
        audit: bool = False,
        progress: ProgressSink | None = None,
    ) -> None:
        """``checked``: which distributions have their files proved; ``looks``: batches of indices to
        look at (:func:`look_batches`); ``planned``: the others' rows, made already (a package
        manager's record); ``audit``: whether to audit the hooks' owners and the unowned files."""
        self.learnt: list[Learnt | None] = [None] * len(checked)
        self.audited: list[object] | None = None
        self._looks = looks
        self._parse: list[tuple[int, int]] = []  # heap of (-weight, dist)
        self._pieces: list[tuple[int, int, int, int]] = []  # heap of (-weight, dist, first row, end row)
        self._reading: set[object] = set()  # workers looking or parsing: more pieces may come
        self._held: dict[object, Task] = {}
        self._orphans: list[Task] = []
        self._retry: list[Task] = []
        self._audit = audit
        self._progress = progress
        self._totals = [0, 0]  # files and bytes to prove, known once every RECORD is read
        self._done = [0, 0]  # files and bytes proved before the work was known
        self._begun = progress is None
        for index, learnt in planned.items():
            self._add(index, learnt, learnt.rows if checked[index] and learnt.rows else [], None)

    def next_task(self, worker: object) -> Task | None:
        """The task for ``worker``: the heaviest left; None to wait (a RECORD being read may give more); Stop."""
        task = self._pick()
        if task is not None and not isinstance(task, Stop):
            self._held[worker] = task
            if isinstance(task, Look | Parse):
                self._reading.add(worker)
        return task

    def _pick(self) -> Task | None:
        if self._retry:
            return self._retry.pop()
        if self._audit:
            self._audit = False
            return Audit()
        if self._looks:
            return Look(self._looks.pop())
        parse, pieces = self._parse, self._pieces
        if parse and (not pieces or parse[0][0] <= pieces[0][0]):  # the heavier first
            return Parse(heapq.heappop(parse)[1])
        if pieces:
            _, index, first, end = heapq.heappop(pieces)
            learnt = self.learnt[index]
            assert learnt is not None and learnt.rows is not None
            decided = learnt.decided[first:end] if learnt.decided is not None else [False] * (end - first)
            return Prove(index, first, learnt.paths[first:end], learnt.rows[first:end], decided)
        if self._reading:
            return None
        return Stop()

    def handle(self, worker: object, result: Result) -> None:
        """Take what ``worker``'s task gave."""
        self._held.pop(worker, None)
        self._reading.discard(worker)
        if isinstance(result, Looked):
            for settled in result.settled:
                self.learnt[settled.dist] = Learnt(
                    identity=settled.record, paths=settled.paths, rows=None, kept=settled.kept
                )
                self._count(settled.files, settled.size, settled.files, settled.size)
            for weighed in result.weighed:
                heapq.heappush(self._parse, (-weighed.weight, weighed.dist))
        elif isinstance(result, Parsed):
            self._add(result.dist, Learnt.of(result), [], result)
        elif isinstance(result, Proved):
            proved = self.learnt[result.dist]
            assert proved is not None
            proved.proofs.extend(result.proofs)
            proved.records[result.first] = result.records
            self._count(0, 0, len(result.proofs), result.size)
        else:
            assert isinstance(result, Audited)
            self.audited = result.data
        self._begin_once()

    def lost(self, worker: object) -> None:
        """``worker`` died: what it held is an orphan, for this process to do (see :meth:`adopt`)."""
        self._reading.discard(worker)
        task = self._held.pop(worker, None)
        if task is not None:
            self._orphans.append(task)
        self._begin_once()

    def adopt(self) -> bool:
        """Take the orphans back, to be handed out first; whether any work is left."""
        self._retry.extend(self._orphans)
        self._orphans.clear()
        return bool(self._retry or self._audit or self._looks or self._parse or self._pieces)

    def _add(self, index: int, learnt: Learnt, rows: Sequence[RecordRow], parsed: Parsed | None) -> None:
        """A distribution's rows known: its pieces queued, its work counted."""
        self.learnt[index] = learnt
        if parsed is None:  # planned: every row, cut now
            cuts, files, size = cut(rows, None) if rows else ([], 0, 0)
            proved, bytes_proved = 0, 0
        else:
            cuts, files, size = parsed.cuts, parsed.files, parsed.size
            proved, bytes_proved = len(parsed.proved.proofs), parsed.proved.size
        for piece in cuts:
            heapq.heappush(self._pieces, (-piece.weight, index, piece.first, piece.end))
        self._count(files, size, proved, bytes_proved)

    def _count(self, files: int, size: int, done_files: int, done_bytes: int) -> None:
        self._totals[0] += files
        self._totals[1] += size
        if self._begun and self._progress is not None:
            if done_files or done_bytes:
                self._progress.advance(done_files, done_bytes)
            return
        self._done[0] += done_files
        self._done[1] += done_bytes

    def _begin_once(self) -> None:
        """Tell the progress sink the work's size once every RECORD is read, then what was done already."""
        if self._begun or self._looks or self._parse or self._reading or self._retry:
            return
        self._begun = True
        assert self._progress is not None
        self._progress.begin(*self._totals)
        if any(self._done):
            self._progress.advance(*self._done)

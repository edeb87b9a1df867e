"""The verification's schedule on data alone: the heaviest task first, waiting while a RECORD is read, orphans."""

from __future__ import annotations

import pytest

from wheeldoctor.engine.schedule import Learnt, Schedule
from wheeldoctor.engine.wire import (
    Audit,
    Audited,
    Cut,
    Look,
    Looked,
    Parse,
    Parsed,
    Proof,
    Prove,
    Proved,
    Settled,
    Stop,
    Weighed,
)
from wheeldoctor.model.record import RecordRow

pytestmark = pytest.mark.unit


def _parsed(dist: int, sizes: list[int], cuts: list[Cut]) -> Parsed:
    rows = [RecordRow(f"d{dist}/f{k}", "sha256", b"x", size, k + 1) for k, size in enumerate(sizes)]
    paths = [f"/site/d{dist}/f{k}" for k in range(len(sizes))]
    nothing = Proved(dist, -1, [], [], 0)
    return Parsed(dist, None, paths, rows, None, cuts, (), (), (False, None), None, nothing, len(sizes), sum(sizes))


class Progress:
    def __init__(self) -> None:
        self.begun: list[tuple[int, int]] = []
        self.done = [0, 0]

    def begin(self, files: int, total_bytes: int) -> None:
        self.begun.append((files, total_bytes))

    def advance(self, files: int, done_bytes: int) -> None:
        assert self.begun, "advanced before the work was known"
        self.done[0] += files
        self.done[1] += done_bytes


def test_the_heaviest_task_left_goes_to_whichever_worker_asks() -> None:
    progress = Progress()
    schedule = Schedule([True, True, True], [[2], [0, 1]], {}, audit=True, progress=progress)
    assert schedule.next_task("a") == Audit()  # the audit first: it needs no RECORD read by the others
    assert schedule.next_task("b") == Look([0, 1])  # the batch popped first: the heaviest, put last
    assert schedule.next_task("c") == Look([2])
    assert schedule.next_task("a") is None  # nothing to take while RECORDs are being looked at: wait
    schedule.handle("a", Audited([[], [], [], 0, []]))
    schedule.handle("b", Looked([], [Weighed(0, 10), Weighed(1, 500)]))
    assert schedule.next_task("b") == Parse(1)  # the heavier RECORD first
    schedule.handle("c", Looked([Settled(2, (1, 2, 3, 4, 5), ["/site/d2/a"], 1, 7, [])], []))
    assert schedule.next_task("c") == Parse(0)
    assert schedule.next_task("a") is None  # two RECORDs are being read: wait for their pieces
    schedule.handle("b", _parsed(1, [1 << 22, 10, 20], [Cut(0, 1, 1 << 22), Cut(1, 3, 40)]))
    task = schedule.next_task("a")
    assert isinstance(task, Prove) and (task.dist, task.first, task.paths) == (1, 0, ["/site/d1/f0"])
    schedule.handle("c", _parsed(0, [5], [Cut(0, 1, 5)]))
    assert progress.begun == [(1 + 3 + 1, 7 + (1 << 22) + 30 + 5)]  # once every RECORD is read
    assert progress.done == [1, 7]  # the settled distribution's file, told once the work was known
    second = schedule.next_task("b")
    assert isinstance(second, Prove) and (second.dist, second.first) == (1, 1)  # 40 outweighs 5
    third = schedule.next_task("c")
    assert isinstance(third, Prove) and third.dist == 0
    assert schedule.next_task("c") == Stop()  # nothing left, nobody reading
    schedule.handle("a", Proved(1, 0, [Proof(0, 1, 2, 3, 4, 1, False)], [], 1 << 22))
    assert progress.done == [2, 7 + (1 << 22)]
    assert schedule.audited == [[], [], [], 0, []]
    learnt = schedule.learnt
    assert learnt[2] is not None and learnt[2].rows is None  # settled: no rows
    assert learnt[1] is not None and [p.row for p in learnt[1].proofs] == [0]


def test_a_dead_workers_task_is_an_orphan_for_this_process() -> None:
    schedule = Schedule([True, True], [[1], [0]], {})
    assert schedule.next_task("a") == Look([0])
    assert schedule.next_task("b") == Look([1])
    schedule.lost("a")  # died looking
    assert schedule.next_task("b") is None  # "b" still reads: wait
    schedule.handle("b", Looked([], [Weighed(1, 3)]))
    assert schedule.next_task("b") == Parse(1)
    schedule.handle("b", _parsed(1, [3], [Cut(0, 1, 3)]))
    assert isinstance(schedule.next_task("b"), Prove)
    assert schedule.next_task("b") == Stop()  # the orphan is not a worker's
    assert schedule.adopt()  # this process takes it back
    assert schedule.next_task("here") == Look([0])
    schedule.handle("here", Looked([], [Weighed(0, 1)]))
    assert schedule.next_task("here") == Parse(0)


def test_planned_rows_are_cut_into_pieces_at_once() -> None:
    """A package manager's record is claimed before any task runs: its files go straight to pieces."""
    rows = [RecordRow("a.py", "md5", b"x", 5, 0), RecordRow("b.so", "md5", b"y", 2 << 20, 0)]
    planned = {0: Learnt(identity=None, paths=["/site/a.py", "/site/b.so"], rows=rows)}
    schedule = Schedule([True, False], [[1]], planned)
    first = schedule.next_task("a")
    assert first == Look([1])
    piece = schedule.next_task("b")
    assert isinstance(piece, Prove) and piece.paths == ["/site/b.so"]  # the big file alone, first
    unchecked = Schedule([False], [], planned)
    assert unchecked.next_task("a") == Stop()  # not checked: its rows are for ownership alone

"""Forked hashing workers: the same states as threads, and nothing lost when a worker dies."""

from __future__ import annotations

import gc
import hashlib
import os
import sys
import threading
from pathlib import Path

import pytest

from wheeldoctor.engine import hashing
from wheeldoctor.engine.hashing import hash_files
from wheeldoctor.model.files import FileState, FileStatus, HashRequest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked workers are Linux-only")


@pytest.fixture
def requests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[HashRequest]:
    """Sixty files of many sizes, plus a missing one and a FIFO; the process threshold lowered."""
    monkeypatch.setattr(hashing, "PROCESS_MIN_FILES", 10)
    made = []
    for i in range(60):
        path = tmp_path / f"f{i}"
        path.write_bytes(hashlib.sha512(str(i).encode()).digest() * (i * 300))
        made.append(HashRequest(str(path), frozenset({"sha256", "sha512"})))
    os.mkfifo(tmp_path / "fifo")
    made.append(HashRequest(str(tmp_path / "fifo"), frozenset({"sha256"})))
    made.append(HashRequest(str(tmp_path / "absent"), frozenset({"sha256"})))
    made.append(HashRequest(str(tmp_path / "f7"), frozenset({"sha256"}), frozenset({1})))  # size-only
    return made


def _comparable(states: list[FileState]) -> list[tuple[object, ...]]:
    return [(s.status, s.size, s.digests, s.detail, s.fingerprint) for s in states]


def test_processes_give_the_states_threads_give(requests: list[HashRequest], forks: list[int]) -> None:
    by_threads = hash_files(requests, jobs=2)
    by_processes = hash_files(requests, jobs=2, processes=True)
    assert len(forks) == 2
    assert _comparable(by_processes) == _comparable(by_threads)
    assert {s.status for s in by_processes} == {
        FileStatus.HASHED,
        FileStatus.NOT_REGULAR,
        FileStatus.MISSING,
        FileStatus.SIZE_ONLY,
    }


def test_progress_counts_every_file(requests: list[HashRequest]) -> None:
    seen: list[int] = []
    hash_files(requests, jobs=3, processes=True, progress=lambda n, _: seen.append(n))
    assert sum(seen) == len(requests)


def test_a_worker_that_dies_loses_nothing(requests: list[HashRequest]) -> None:
    parent = os.getpid()
    victim = requests[5].path

    def known(path: str) -> FileState | None:
        if path == victim and os.getpid() != parent:
            os._exit(3)  # the worker dies mid-way, without sending its last batch
        return None

    assert _comparable(hash_files(requests, jobs=2, processes=True, known=known)) == _comparable(
        hash_files(requests, jobs=2)
    )


def test_no_fork_while_another_thread_runs(requests: list[HashRequest], monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> int:
        raise AssertionError("forked while a thread was running")

    monkeypatch.setattr(os, "fork", refuse)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        states = hash_files(requests, jobs=2, processes=True)
    finally:
        stop.set()
        other.join()
    assert _comparable(states) == _comparable(hash_files(requests, jobs=2))


def test_a_forked_child_leaves_its_parents_objects_out_of_its_collections() -> None:
    """Frozen in the child (its collections would copy the parent's heap); the parent takes its own back."""
    from wheeldoctor.engine.workers import run_workers

    def report(share: int, send: object) -> None:
        send([gc.get_freeze_count()])  # type: ignore[operator]

    assert gc.get_freeze_count() == 0
    frames = list(run_workers([0], report))
    assert frames[0][0] > 0
    assert gc.get_freeze_count() == 0
    gc.freeze()  # a caller's own frozen objects stay frozen, and none are added to them
    try:
        frozen = gc.get_freeze_count()  # less whatever is freed from now on
        frames = list(run_workers([0], report))
        assert 0 < frames[0][0] <= frozen
        assert 0 < gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()

"""Streaming digests: right bytes, request order kept, hostile files refused, changes caught."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from wheeldoctor.engine.digests import BUFFER_SIZE, hash_file
from wheeldoctor.engine.executors import default_jobs, examine_all
from wheeldoctor.model.files import FileState, FileStatus, HashRequest

SIZES = [0, 1, 100, 65535, 65536, 65537, BUFFER_SIZE - 1, BUFFER_SIZE, BUFFER_SIZE + 1, 3 * BUFFER_SIZE + 17]


def content(size: int, seed: int = 0) -> bytes:
    """Deterministic, non-repeating-looking bytes of ``size``."""
    block = hashlib.sha512(str(seed).encode()).digest() * 16
    return (block * (size // len(block) + 1))[:size]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, bytes]:
    """Files of every interesting size (around the small-read and buffer boundaries)."""
    made = {}
    for i, size in enumerate(SIZES):
        data = content(size, i)
        path = tmp_path / f"f{i}"
        path.write_bytes(data)
        made[str(path)] = data
    return made


ALL = frozenset({"sha256", "sha384", "sha512"})


@pytest.mark.parametrize("jobs", [1, 2, 8])
def test_digests_and_order(files: dict[str, bytes], jobs: int) -> None:
    requests = [HashRequest(path, ALL) for path in files]
    states = examine_all(requests, jobs=jobs)
    assert len(states) == len(requests)
    for request, state in zip(requests, states, strict=True):
        data = files[request.path]
        assert state.status is FileStatus.HASHED
        assert state.size == len(data)
        for algorithm in ALL:
            assert state.digest(algorithm) == hashlib.new(algorithm, data).digest()
        assert state.digest("md5") is None
        assert state.fingerprint is not None
        assert state.fingerprint.size == len(data)


def test_reusing_one_buffer_never_leaks_bytes_between_files(files: dict[str, bytes]) -> None:
    view = memoryview(bytearray(BUFFER_SIZE))
    # Biggest first, then smaller: stale bytes in the buffer must not reach a digest.
    for path, data in sorted(files.items(), key=lambda kv: -len(kv[1])):
        state = hash_file(HashRequest(path, frozenset({"sha256"})), view)
        assert state.digest("sha256") == hashlib.sha256(data).digest()


def test_size_filter_skips_the_read(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"12345")
    wrong = examine_all([HashRequest(str(path), frozenset({"sha256"}), frozenset({4, 6}))])[0]
    assert (wrong.status, wrong.size, wrong.digests) == (FileStatus.SIZE_ONLY, 5, ())
    right = examine_all([HashRequest(str(path), frozenset({"sha256"}), frozenset({5}))])[0]
    assert right.status is FileStatus.HASHED
    assert right.digest("sha256") == hashlib.sha256(b"12345").digest()


def test_hard_links_are_counted(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"shared")
    os.link(tmp_path / "a", tmp_path / "b")
    state = examine_all([HashRequest(str(tmp_path / "b"), frozenset({"sha256"}))])[0]
    assert state.links == 2


def _make(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind.startswith("dev-"):
        path.symlink_to("/dev/" + kind[4:])
    elif kind == "loop":
        path.symlink_to(path)


@pytest.mark.parametrize(
    ("kind", "status", "detail"),
    [
        ("missing", FileStatus.MISSING, "does not exist"),
        ("fifo", FileStatus.NOT_REGULAR, "is a FIFO"),
        ("directory", FileStatus.NOT_REGULAR, "is a directory"),
        ("dev-zero", FileStatus.NOT_REGULAR, "is a character device"),
        ("dev-urandom", FileStatus.NOT_REGULAR, "is a character device"),
        ("loop", FileStatus.UNREADABLE, "is a symlink loop"),
    ],
)
def test_hostile_files(tmp_path: Path, kind: str, status: FileStatus, detail: str) -> None:
    path = tmp_path / "hostile"
    _make(path, kind)
    done: list[FileState] = []
    worker = threading.Thread(
        target=lambda: done.extend(examine_all([HashRequest(str(path), ALL)], jobs=2)), daemon=True
    )
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "hashing blocked on a hostile file"
    assert done == [FileState(status, detail=detail)]


def test_stat_that_lies_about_the_size_is_changed() -> None:
    # /proc files are regular but stat says 0 bytes: the extra byte read proves a change.
    state = examine_all([HashRequest("/proc/self/status", frozenset({"sha256"}))])[0]
    assert state.status is FileStatus.CHANGED
    assert state.digests == ()


_APPENDER = """
import sys
unit = sys.argv[2].encode()
with open(sys.argv[1], "ab", buffering=0) as fh:
    for _ in range(500_000):  # at most 8 MB: a hasher that never notices must not fill the disk
        fh.write(unit)
"""


@pytest.mark.parametrize("start", [1000, 200_000])
def test_file_growing_while_read_is_never_trusted(tmp_path: Path, start: int) -> None:
    """Append-only writer racing the hasher: every answer is a true prefix digest or CHANGED."""
    path = tmp_path / "growing"
    unit = "0123456789abcdef"
    path.write_bytes(unit.encode() * (start // len(unit)))
    # A separate process, not a thread: it must write while the hasher holds the GIL.
    writer = subprocess.Popen([sys.executable, "-c", _APPENDER, str(path), unit])
    seen: set[FileStatus] = set()
    try:
        while path.stat().st_size == start // len(unit) * len(unit) and writer.poll() is None:
            os.sched_yield()
        view = memoryview(bytearray(BUFFER_SIZE))
        while writer.poll() is None:
            state = hash_file(HashRequest(str(path), frozenset({"sha256"})), view)
            seen.add(state.status)
            assert state.status in (FileStatus.HASHED, FileStatus.CHANGED)
            if state.status is FileStatus.HASHED:
                assert state.size is not None
                expected = (unit.encode() * (state.size // len(unit) + 1))[: state.size]
                assert state.digest("sha256") == hashlib.sha256(expected).digest()
            else:
                assert state.digests == ()
                assert state.detail == "changed while it was being read"
            if FileStatus.CHANGED in seen:
                break
    finally:
        writer.kill()
        writer.wait()
    assert FileStatus.CHANGED in seen


def test_progress_counts_every_file(files: dict[str, bytes], tmp_path: Path) -> None:
    calls: list[tuple[int, int]] = []
    lock = threading.Lock()

    def progress(n: int, size: int) -> None:
        with lock:
            calls.append((n, size))

    requests = [HashRequest(p, frozenset({"sha256"})) for p in files]
    requests.append(HashRequest(str(tmp_path / "absent"), frozenset({"sha256"})))
    examine_all(requests, jobs=4, progress=progress)
    assert sum(n for n, _ in calls) == len(requests)
    assert sum(size for _, size in calls) == sum(len(d) for d in files.values())


def test_no_threads_left_behind(files: dict[str, bytes]) -> None:
    before = threading.active_count()
    examine_all([HashRequest(p, frozenset({"sha256"})) for p in files], jobs=8)
    assert threading.active_count() == before


def test_empty_request_list() -> None:
    assert examine_all([], jobs=4) == []


def test_default_jobs_is_positive() -> None:
    assert default_jobs() >= 1
    assert default_jobs() <= (os.cpu_count() or 1)

"""Hostile files: FIFOs, devices, directories, loops, sockets and oversize files are refused, never read."""

from __future__ import annotations

import os
import socket
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from wheeldoctor.where.filesystem import ReadError, describe_mode, open_regular, read_regular

pytestmark = pytest.mark.unit

T = TypeVar("T")


def finishes(call: Callable[[], T]) -> T:
    """Run ``call`` in a daemon thread; fail (instead of hanging the suite) if it blocks."""
    box: list[T] = []
    worker = threading.Thread(target=lambda: box.append(call()), daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "blocked: the call never returned"
    return box[0]


def hostile(tmp_path: Path, kind: str) -> Path:
    """Make one hostile path of ``kind`` in ``tmp_path`` and return it."""
    path = tmp_path / kind
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind in ("dev-zero", "dev-urandom", "dev-null"):
        path.symlink_to("/dev/" + kind.partition("-")[2])
    elif kind == "loop":
        path.symlink_to(tmp_path / "loop")
    elif kind == "dangling":
        path.symlink_to(tmp_path / "nowhere")
    elif kind == "socket":
        # AF_UNIX paths are limited to ~108 bytes; bind relative to a short cwd.
        sock = socket.socket(socket.AF_UNIX)
        cwd = os.getcwd()
        os.chdir(tmp_path)
        try:
            sock.bind(kind)
        finally:
            os.chdir(cwd)
            sock.close()
    elif kind == "under-a-file":
        (tmp_path / "plain").write_bytes(b"x")
        path = tmp_path / "plain" / "child"
    elif kind != "missing":
        raise AssertionError(kind)
    return path


@pytest.mark.parametrize(
    ("kind", "message", "missing", "not_regular"),
    [
        ("fifo", "is a FIFO", False, True),
        ("directory", "is a directory", False, True),
        ("dev-zero", "is a character device", False, True),
        ("dev-urandom", "is a character device", False, True),
        ("dev-null", "is a character device", False, True),
        ("socket", "is a socket", False, True),
        ("loop", "is a symlink loop", False, False),
        ("dangling", "does not exist", True, False),
        ("missing", "does not exist", True, False),
        ("under-a-file", "does not exist", True, False),
    ],
)
def test_hostile_paths_are_refused(tmp_path: Path, kind: str, message: str, missing: bool, not_regular: bool) -> None:
    path = str(hostile(tmp_path, kind))
    expected = ReadError(message=message, missing=missing, not_regular=not_regular)
    assert finishes(lambda: open_regular(path)) == expected
    assert finishes(lambda: read_regular(path, 1 << 20)) == expected


@pytest.mark.parametrize("size", [0, 1, 4095, 65536, 65537, 3 << 20])
def test_regular_file_is_read_whole(tmp_path: Path, size: int) -> None:
    data = (bytes(range(256)) * (size // 256 + 1))[:size]
    path = tmp_path / "f"
    path.write_bytes(data)
    assert read_regular(str(path), size) == data


def test_regular_file_through_symlink(tmp_path: Path) -> None:
    (tmp_path / "target").write_bytes(b"content")
    (tmp_path / "link").symlink_to("target")
    assert read_regular(str(tmp_path / "link"), 100) == b"content"


def test_open_regular_gives_the_stat_of_what_it_opened(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"12345")
    opened = open_regular(str(path))
    assert not isinstance(opened, ReadError)
    fd, st = opened
    try:
        assert stat.S_ISREG(st.st_mode)
        assert (st.st_ino, st.st_size) == (path.stat().st_ino, 5)
        assert os.read(fd, 10) == b"12345"
    finally:
        os.close(fd)


def test_oversize_file_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"x" * 101)
    result = read_regular(str(path), 100)
    assert isinstance(result, ReadError)
    assert "over the 100-byte limit" in result.message
    assert read_regular(str(path), 101) == b"x" * 101


def test_permission_denied(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("running as root: chmod 000 does not deny reads to root")
    path = tmp_path / "secret"
    path.write_bytes(b"x")
    path.chmod(0)
    try:
        assert read_regular(str(path), 10) == ReadError(message="permission denied")
    finally:
        path.chmod(0o600)


@pytest.mark.parametrize(
    ("mode", "name"),
    [
        (stat.S_IFDIR | 0o755, "a directory"),
        (stat.S_IFIFO | 0o644, "a FIFO"),
        (stat.S_IFCHR | 0o666, "a character device"),
        (stat.S_IFBLK | 0o660, "a block device"),
        (stat.S_IFSOCK | 0o755, "a socket"),
        (stat.S_IFLNK | 0o777, "not a regular file"),
    ],
)
def test_describe_mode(mode: int, name: str) -> None:
    assert describe_mode(mode) == name

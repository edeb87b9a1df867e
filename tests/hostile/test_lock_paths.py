"""A lock's ``path`` and ``file:`` URLs name files inside the lock's folder only, and a size is compared first (#49).

A lock is read from a repository that a pull request may change: its paths must not make
wheeldoctor read (or tell the sha256 of) any file of the host, nor hash 50 GiB.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from conftest import no_traceback
from helpers import WheelFactory, run_cli
from locks import Entry, write_pylock
from test_bounded import measured

TARGET = ("--python-version", "3.11", "--platform", "manylinux_2_28_x86_64")


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A readable file outside the lock's folder, named like a wheel, whose digest must not be told."""
    (tmp_path / "elsewhere").mkdir()
    path = tmp_path / "elsewhere" / "secret-1.0-py3-none-any.whl"
    path.write_bytes(b"the host's secret\n")
    return path


def _lock_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.mark.parametrize("how", ["absolute", "relative", "symlink", "file-url"])
def test_a_path_outside_the_locks_folder_is_refused_in_one_line(tmp_path: Path, secret: Path, how: str) -> None:
    folder = _lock_dir(tmp_path)
    digest = hashlib.sha256(secret.read_bytes()).hexdigest()
    wheel = folder / secret.name  # only its name and the lock's fields matter
    if how == "absolute":
        entry = Entry(wheel, path=str(secret), size=18, sha256="0" * 64)
    elif how == "relative":
        entry = Entry(wheel, path=f"../elsewhere/{secret.name}", size=18, sha256="0" * 64)
    elif how == "symlink":
        (folder / "wheels").mkdir()
        (folder / "wheels" / secret.name).symlink_to(secret)
        entry = Entry(wheel, path=f"wheels/{secret.name}", size=18, sha256="0" * 64)
    else:
        entry = Entry(wheel, url=secret.as_uri(), size=18, sha256="0" * 64)
    lock = write_pylock(folder / "pylock.toml", entry)
    done = run_cli("wheels", "--lock", lock, "--format", "json", *TARGET)
    no_traceback(done)
    assert done.returncode == 2, done.stdout + done.stderr
    first, tip = done.stderr.splitlines()
    assert first.endswith(f"the lock names a file outside the lock's folder {folder}: not read")
    assert tip == f"Tip: pass --find-links DIR, DIR a directory of yours that holds {secret.name}"
    assert digest not in done.stdout + done.stderr


def test_a_path_inside_the_locks_folder_is_read(tmp_path: Path, wheel_factory: WheelFactory) -> None:
    folder = _lock_dir(tmp_path)
    built = wheel_factory("inside", "1.0", {"inside/__init__.py": b""})
    (folder / "wheels").mkdir()
    (folder / "wheels" / built.name).write_bytes(built.read_bytes())
    lock = write_pylock(folder / "pylock.toml", Entry(built, path=f"wheels/{built.name}"))
    done = run_cli("wheels", "--lock", lock, *TARGET)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(1 local)" in done.stderr


@pytest.mark.parametrize("sized", [True, False], ids=["lock-gives-size", "no-size"])
def test_a_50_gib_sparse_file_is_judged_by_its_size_unread(tmp_path: Path, sized: bool) -> None:
    folder = _lock_dir(tmp_path)
    wheel = folder / "huge-1.0-py3-none-any.whl"
    with open(wheel, "wb") as f:
        f.truncate(50 << 30)
    entry = Entry(wheel, path=wheel.name, size=1234 if sized else False, sha256="1" * 64)
    lock = write_pylock(folder / "pylock.toml", entry)
    result = measured("wheels", "--lock", lock, *TARGET, timeout=60)
    print(f"{result.cpu_s:.1f} s CPU, {result.peak_mb:.0f} MB peak, {result.wall_s:.1f} s wall")
    assert result.wall_s < 20 and result.cpu_s < 10
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    if sized:
        assert result.returncode == 1
        assert "WD085" in result.stdout and f"expected 1234 bytes, found {50 << 30} bytes" in result.stdout
    else:  # a wheel that cannot be had (WD086), and the lock's only one: nothing judged, exit 2 with the reason
        assert result.returncode == 2
        assert f"{50 << 30} bytes, more than {2 << 30} (a wheel read whole)" in result.stderr


def test_a_fifo_at_the_locked_path_is_not_waited_on(tmp_path: Path) -> None:
    folder = _lock_dir(tmp_path)
    wheel = folder / "fifo-1.0-py3-none-any.whl"
    os.mkfifo(wheel)
    lock = write_pylock(folder / "pylock.toml", Entry(wheel, path=wheel.name, size=10, sha256="2" * 64))
    done = run_cli("wheels", "--lock", lock, *TARGET)
    no_traceback(done)
    assert done.returncode == 2  # the lock's only wheel cannot be had (WD086): nothing judged
    assert "no such wheel file, and the lock gives no URL" in done.stderr

"""engine/beside.py: work in a forked child beside the parent, with the parent as the fallback."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from helpers import VenvFactory, WheelFactory, uv_install

from wheeldoctor.commands.check import CheckRequest, run_check
from wheeldoctor.engine.beside import Beside
from wheeldoctor.where.target import Target, load_target


def test_the_child_answers_what_the_parent_would(forks: list[int]) -> None:
    parent = os.getpid()
    walk = Beside(lambda: [os.getpid() != parent, ("a", None, 3)])
    assert walk.result() == [True, ("a", None, 3)]  # computed in the child
    assert len(forks) == 1


def test_a_child_that_fails_leaves_the_work_to_the_parent(forks: list[int]) -> None:
    parent = os.getpid()

    def work() -> list[object]:
        if os.getpid() != parent:
            raise RuntimeError("the child fails")
        return ["parent"]

    assert Beside(work).result() == ["parent"]
    assert len(forks) == 1


def test_without_fork_the_work_runs_when_asked(forks: list[int]) -> None:
    ran: list[int] = []
    walk = Beside(lambda: ran.append(1) or ["here"], fork=False)
    assert ran == []
    assert walk.result() == ["here"]
    assert forks == []


def test_cancel_stops_the_child(forks: list[int], tmp_path: Path) -> None:
    marker = tmp_path / "finished"

    def slow() -> list[object]:
        time.sleep(60)
        marker.touch()
        return []

    walk = Beside(slow)
    walk.cancel()
    with pytest.raises(ChildProcessError):
        os.waitpid(forks[0], os.WNOHANG)  # already reaped
    assert not marker.exists()


def test_check_finds_the_same_unowned_files_forked_or_not(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, uv_bin: Path
) -> None:
    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel_factory("good", "1.0", {"good/__init__.py": b""}), uv_bin=uv_bin)
    (venv.site_packages / "stray.py").write_text("x = 1\n")
    (venv.site_packages / "good" / "extra.txt").write_text("\n")
    env = load_target(Target(python=str(venv.python)))
    forked = run_check(env, CheckRequest(processes=True)).unowned
    inline = run_check(env, CheckRequest(processes=False)).unowned
    assert forked == inline
    assert forked is not None and {f.path for f in forked.files} == {
        str(venv.site_packages / "stray.py"),
        str(venv.site_packages / "good" / "extra.txt"),
    }
    assert [i.finding.path for i in forked.importable] == ["stray.py"]

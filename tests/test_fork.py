"""engine/fork.py: no fork beside another thread, nothing inherited but what is given, failures seen."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from helpers import VenvFactory, WheelFactory, uv_install

from wheeldoctor.engine import fork

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forking is for Linux only")


def test_no_fork_once_another_thread_runs() -> None:
    """Checked at the fork itself: a thread started after a caller's own check cannot slip in between."""
    read_end, write_end = os.pipe()
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        assert fork.fork(lambda: os.write(write_end, b"ran"), keep=(write_end,)) is None
    finally:
        stop.set()
        other.join()
    os.close(write_end)
    assert os.read(read_end, 16) == b""  # nothing ran anywhere
    os.close(read_end)


def test_a_child_keeps_only_the_descriptors_it_is_given() -> None:
    stray_read, stray_write = os.pipe()  # an inherited descriptor the child was not given
    read_end, write_end = os.pipe()

    def body() -> None:
        try:
            os.fstat(stray_write)
        except OSError:
            os.write(write_end, b"closed")
        else:
            os.write(write_end, b"open")

    pid = fork.fork(body, keep=(write_end,))
    assert pid is not None
    os.close(write_end)
    answer = os.read(read_end, 16)
    fork.reap(pid)
    for fd in (read_end, stray_read, stray_write):
        os.close(fd)
    assert answer == b"closed"


def test_a_failing_child_is_noted_and_a_stopped_one_is_not() -> None:
    fork.failures.clear()
    pid = fork.fork(lambda: 1 / 0)
    assert pid is not None
    fork.reap(pid)
    assert fork.failures == ["a worker process failed (exit status 1); its work was done in the main process"]
    fork.failures.clear()
    pid = fork.fork(lambda: threading.Event().wait(30))
    assert pid is not None
    fork.reap(pid, stop=True)
    assert fork.failures == []


def test_a_forked_child_leaves_its_parents_objects_out_of_its_collections() -> None:
    """Frozen in the child (its collections would copy the parent's heap); the parent takes its own back."""

    def frozen_in_child() -> int:
        read_end, write_end = os.pipe()
        pid = fork.fork(lambda: os.write(write_end, b"%d" % gc.get_freeze_count()), keep=(write_end,))
        assert pid is not None
        os.close(write_end)
        answer = os.read(read_end, 64)
        os.close(read_end)
        fork.reap(pid)
        return int(answer)

    assert gc.get_freeze_count() == 0
    assert frozen_in_child() > 0
    assert gc.get_freeze_count() == 0
    gc.freeze()  # a caller's own frozen objects stay frozen, and none are added to them
    try:
        frozen = gc.get_freeze_count()  # less whatever is freed from now on
        assert 0 < frozen_in_child() <= frozen
        assert 0 < gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()


_FAILING_WORKERS = """
import os, sys
from wheeldoctor.engine import tasks, verify

parent, real = os.getpid(), tasks.Context.prove

def failing(*args, **kwargs):
    if os.getpid() != parent:
        raise RuntimeError("this worker fails")
    return real(*args, **kwargs)  # what the workers left, this process does

tasks.Context.prove = failing
verify.PROCESS_MIN_FILES = 1
sys.argv = ["wheeldoctor", *sys.argv[1:]]
from wheeldoctor.cli import main
main()
"""


@pytest.mark.parametrize("debug", [False, True])
def test_a_failing_worker_is_a_note_and_its_traceback_under_debug(
    debug: bool, venv_factory: VenvFactory, wheel_factory: WheelFactory, tmp_path: Path
) -> None:
    """The report is the same (the parent did the work); stderr says a worker failed, and why under debug."""
    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel_factory("demo", "1.0", {f"demo/m{i}.py": b"x = %d\n" % i for i in range(9)}))
    args = ["check", "--all", "--json", "--no-cache", "-j", "2", "--python", str(venv.python)]
    env = {k: v for k, v in os.environ.items() if k != "WHEELDOCTOR_DEBUG"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    plain = subprocess.run(
        [sys.executable, "-m", "wheeldoctor", *args], capture_output=True, text=True, env=env, check=False
    )
    if debug:
        env["WHEELDOCTOR_DEBUG"] = "1"
    failing = subprocess.run(
        [sys.executable, "-c", _FAILING_WORKERS, *args], capture_output=True, text=True, env=env, check=False
    )
    assert (failing.returncode, failing.stdout) == (plain.returncode, plain.stdout) == (0, plain.stdout)
    assert "note: a worker process failed (exit status 1); its work was done in the main process" in failing.stderr
    assert ("RuntimeError: this worker fails" in failing.stderr) is debug
    assert "note:" not in plain.stderr


_NO_PROCESS_LEFT = """
import errno, os, sys
from wheeldoctor.engine import verify

def no_process_left():
    raise BlockingIOError(errno.EAGAIN, os.strerror(errno.EAGAIN))

os.fork = no_process_left
verify.PROCESS_MIN_FILES = 1
sys.argv = ["wheeldoctor", *sys.argv[1:]]
from wheeldoctor.cli import main
main()
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_fork_that_fails_leaves_the_work_to_the_parent_and_a_note(
    jobs: str, venv_factory: VenvFactory, wheel_factory: WheelFactory
) -> None:
    """Under a container's pid limit ``fork`` fails (EAGAIN): the same report, done in the parent, and a note."""
    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel_factory("demo", "1.0", {f"demo/m{i}.py": b"x = %d\n" % i for i in range(9)}))
    args = ["check", "--all", "--json", "--no-cache", "-j", jobs, "--python", str(venv.python)]
    env = {k: v for k, v in os.environ.items() if k != "WHEELDOCTOR_DEBUG"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    plain = subprocess.run(
        [sys.executable, "-m", "wheeldoctor", *args], capture_output=True, text=True, env=env, check=False
    )
    failing = subprocess.run(
        [sys.executable, "-c", _NO_PROCESS_LEFT, *args], capture_output=True, text=True, env=env, check=False
    )
    assert (failing.returncode, failing.stdout) == (plain.returncode, plain.stdout) == (0, plain.stdout)
    assert "note: a worker process could not be started (Resource temporarily unavailable)" in failing.stderr
    assert "Traceback" not in failing.stderr

"""The attacks of issue #28 that held on main, each kept as a test so that it keeps holding."""

from __future__ import annotations

import json
import os
import shlex
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import Planted, no_traceback, run_bytes
from helpers import WheelFactory, pip_install, record_hash, run_cli

# -- nothing from the environment runs ---------------------------------------------------------


@pytest.mark.parametrize("hook", ["zz_hook.pth", "sitecustomize.py", "usercustomize.py"])
@pytest.mark.parametrize("how", ["--python", "--path"])
@pytest.mark.parametrize("command", ["check", "doctor", "deps"])
def test_start_up_hooks_never_run(planted: Planted, tmp_path: Path, hook: str, how: str, command: str) -> None:
    marker = tmp_path / "ran"
    code = f"import pathlib; pathlib.Path({str(marker)!r}).touch()"
    (planted.site / hook).write_text(f"{code}\n" if hook.endswith(".py") else f"import os; {code}\n")
    target = planted.venv.python if how == "--python" else planted.site
    done = run_cli(command, *(["--all"] if command == "check" else []), how, target)
    no_traceback(done)
    assert not marker.exists()


# -- names with shell metacharacters are quoted in tips ----------------------------------------


@pytest.mark.parametrize("name", ["x;touch pwned", "x$(touch pwned)", "x`touch pwned`", "x|touch pwned", "x&&true"])
def test_shell_metacharacters_in_a_name_stay_inside_one_argument(planted: Planted, name: str) -> None:
    planted.set_metadata("alpha", new_name=name)
    (planted.site / "alpha/core.py").write_bytes(b"ANSWER = 43\n")
    done = run_cli("check", "--all", "--path", planted.site)
    no_traceback(done)
    tips = [line for line in done.stdout.splitlines() if line.startswith("Tip: ")]
    assert tips
    for tip in tips:
        # Not a project name, so no command at all (issue #28); a command would keep it in one word.
        if tip.startswith("Tip: no command: "):
            assert "is not a valid project name" in tip, tip
            continue
        words = shlex.split(tip.removeprefix("Tip: ").partition("  #")[0])
        assert not {"touch", "true", ";", "|", "&&"} & set(words), words


# -- RECORD paths that leave the environment, files that are no files ---------------------------


@pytest.mark.parametrize(
    "path", ["/etc/passwd", "../../../../../../../../etc/passwd", "alpha/../../../../../../../../../../etc/passwd"]
)
def test_climbing_and_absolute_record_paths_are_refused(planted: Planted, path: str) -> None:
    rows = planted.rows("alpha")
    rows.insert(0, [path, record_hash(b"x"), "1"])
    planted.write_rows("alpha", rows)
    done = run_cli("check", "alpha", "--path", planted.site, "--json")
    no_traceback(done)
    codes = {f["code"] for d in json.loads(done.stdout)["distributions"] for f in d["findings"]}
    assert "WD007" in codes


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "/dev/urandom", "/proc/self/mem", "directory", "loop"])
def test_files_that_are_no_files_are_refused_unread(planted: Planted, kind: str) -> None:
    path = planted.site / "alpha/core.py"
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "loop":
        path.symlink_to(path)
    else:
        path.symlink_to(kind)
    done = run_cli("check", "alpha", "--path", planted.site)
    no_traceback(done)
    assert done.returncode == 1


def test_a_record_that_is_a_fifo_or_binary(planted: Planted) -> None:
    record = planted.record("alpha")
    record.write_bytes(bytes(range(256)) * 64)
    assert run_cli("check", "alpha", "--path", planted.site).returncode == 1
    record.unlink()
    os.mkfifo(record)
    done = run_cli("check", "alpha", "--path", planted.site)
    no_traceback(done)
    assert done.returncode == 1


# -- every format stays valid while pip churns the environment ----------------------------------


def _valid(fmt: str, out: bytes) -> None:
    text = out.decode("utf-8")
    if fmt in ("json", "sarif"):
        json.loads(text)
    elif fmt == "junit":
        ET.fromstring(text.split("\n", 1)[1])
    elif fmt == "github":
        assert all(line.startswith(("::error ", "::warning ", "wheeldoctor ")) for line in text.splitlines())


def test_reports_stay_valid_during_pip_churn(planted: Planted, wheel_factory: WheelFactory) -> None:
    wheels = [wheel_factory("churn", v, {"churn/__init__.py": v.encode() * 1000}) for v in ("1.0", "2.0")]
    stop = threading.Event()

    def churn() -> None:
        n = 0
        while not stop.is_set():
            pip_install(planted.venv, "--no-index", "--no-deps", "--force-reinstall", wheels[n % 2])
            n += 1

    worker = threading.Thread(target=churn)
    worker.start()
    try:
        for command in ("check", "doctor"):
            for fmt in ("text", "json", "github", "junit", "sarif"):
                args = [command, *(["--all"] if command == "check" else []), "--path", planted.site, "--format", fmt]
                done = run_bytes(*args)
                no_traceback(done)
                assert done.returncode in (0, 1), done.stderr
                _valid(fmt, done.stdout)
    finally:
        stop.set()
        worker.join()

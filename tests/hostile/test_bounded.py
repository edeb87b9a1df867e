"""Bounded work whatever the input (issue #28, item 6 and 9): RECORDs that run away, files far too long.

Each run is measured in its own child (``os.wait4``'s rusage), forked by a small launcher: CPU
seconds and peak memory, which a busy machine inflates less than wall-clock time. The limits
are the issue's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import Planted

CPU_LIMIT_S = 10
MEMORY_LIMIT_MB = 300


@dataclass(frozen=True)
class Measured:
    returncode: int
    stdout: str
    stderr: str
    cpu_s: float
    peak_mb: float
    wall_s: float


#: Runs ``python -m wheeldoctor ARGS`` as its own child and writes that child's exit code, CPU
#: seconds and peak resident memory (``os.wait4``) to the file named first. A child forked by
#: the test process itself would count the test process's memory too: a forked child's peak
#: includes what it shared before ``exec``, and pytest holds a few hundred megabytes by then.
_LAUNCHER = """
import json, os, sys
report, args = sys.argv[1], sys.argv[2:]
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, "-m", "wheeldoctor", *args])
_, status, usage = os.wait4(pid, 0)
with open(report, "w") as out:
    json.dump([os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, usage.ru_maxrss], out)
"""


def measured(*args: str | Path, timeout: float = 120) -> Measured:
    """``python -m wheeldoctor ARGS`` with its own CPU time and peak resident memory (``os.wait4``)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "usage.json"
        started = time.monotonic()
        child = subprocess.Popen(
            [sys.executable, "-c", _LAUNCHER, str(report), *map(str, args)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,  # the launcher and its child are killed together on a timeout
        )
        timer = threading.Timer(timeout, lambda: os.killpg(child.pid, signal.SIGKILL))
        timer.start()
        try:
            child.wait()
        finally:
            timer.cancel()
            timer.join()  # gone before the next test: one that forks needs this process single-threaded
        wall = time.monotonic() - started
        if child.returncode == -signal.SIGKILL or not report.exists():
            pytest.fail(f"no answer within {timeout} s")
        returncode, cpu_s, maxrss = json.loads(report.read_text())
        if returncode == -signal.SIGKILL:
            pytest.fail(f"no answer within {timeout} s")
        out.seek(0)
        err.seek(0)
        return Measured(
            returncode,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
            cpu_s,
            maxrss / 1024,
            wall,
        )


def _bounded(result: Measured) -> None:
    print(f"{result.cpu_s:.1f} s CPU, {result.peak_mb:.0f} MB peak, {result.wall_s:.1f} s wall")  # shown with -s
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    assert result.cpu_s < CPU_LIMIT_S, f"{result.cpu_s:.1f} s of CPU"
    assert result.peak_mb < MEMORY_LIMIT_MB, f"{result.peak_mb:.0f} MB at peak"


def test_four_million_rows_of_a(planted: Planted) -> None:
    planted.record("alpha").write_bytes(b"a\n" * 4_000_000)
    result = measured("check", "alpha", "--path", planted.site, "--json")
    _bounded(result)
    assert result.returncode == 1
    assert len(result.stdout.splitlines()) < 5_000  # capped: not 4 M findings
    assert "more malformed row(s)" in result.stdout


def test_an_unterminated_quote_in_fifty_megabytes(planted: Planted) -> None:
    record = planted.record("alpha")
    record.write_bytes(b'"' + b"alpha/x.py,sha256=abc,1\n" * (50_000_000 // 24) + record.read_bytes())
    result = measured("check", "alpha", "--path", planted.site, "--json")
    _bounded(result)
    assert result.returncode == 1
    assert "unterminated quote" in result.stdout


def test_one_line_of_fifty_megabytes(planted: Planted) -> None:
    record = planted.record("alpha")
    record.write_bytes(b"a" * 50_000_000 + b"\n" + record.read_bytes())
    result = measured("check", "alpha", "--path", planted.site)
    _bounded(result)
    assert result.returncode == 1


@pytest.mark.parametrize("size", [20 << 30, 1 << 40], ids=["20GiB", "1TiB"])
def test_a_sparse_file_far_longer_than_recorded_is_judged_by_its_size(planted: Planted, size: int) -> None:
    path = planted.site / "alpha/core.py"
    with open(path, "r+b") as f:
        f.truncate(size)
    result = measured("check", "alpha", "--path", planted.site, "--no-cache", timeout=60)
    _bounded(result)
    assert result.returncode == 1
    assert result.wall_s < 30  # the bad-input check's own bound
    assert f"{size} bytes" in result.stdout  # the sizes are the evidence


def test_a_file_a_little_longer_keeps_its_appended_evidence(planted: Planted) -> None:
    """Within the window, what was appended is still told apart, and the file's digest is ``found``."""
    path = planted.site / "alpha/core.py"
    path.write_bytes(path.read_bytes() + b"# one more line\n")
    result = measured("check", "alpha", "--path", planted.site)
    assert result.returncode == 1
    assert "with 16 byte(s) of code appended" in result.stdout
    assert "found sha256=" in result.stdout


def test_the_gate_answers_on_a_sparse_file(planted: Planted) -> None:
    with open(planted.site / "alpha/core.py", "r+b") as f:
        f.truncate(1 << 40)
    code = "import sys, wheeldoctor; print(wheeldoctor.is_intact('alpha'))"
    started = time.monotonic()
    done = subprocess.run(
        [str(planted.venv.python), "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        check=False,
    )
    assert time.monotonic() - started < 30
    assert done.stdout.strip() == "False", done.stderr


def _requires(planted: Planted, name: str, lines: list[str], extras: int = 0) -> None:
    """Give ``name``'s METADATA these Requires-Dist lines (and Provides-Extra x0..), RECORD kept consistent."""
    head = planted.venv.dist_info(name) / "METADATA"
    kept = [
        line for line in head.read_text().splitlines() if not line.startswith(("Requires-Dist:", "Provides-Extra:"))
    ]
    added = [f"Provides-Extra: x{i}" for i in range(extras)] + [f"Requires-Dist: {line}" for line in lines]
    planted.rewrite(name, "METADATA", ("\n".join(kept[:3] + added + kept[3:]) + "\n").encode())


def _deps_bounded(result: Measured) -> None:
    _bounded(result)
    assert result.returncode == 1, result.stderr


def test_deps_is_linear_in_requirements_times_extras_asked_for(planted: Planted) -> None:
    """2,000 extras asked for, of a distribution with 2,000 requirements, each for one of them (was 44 s, 567 MB)."""
    _requires(planted, "alpha", [f"beta[x{i}]" for i in range(2000)])
    _requires(planted, "beta", [f"c{i}; extra == 'x{i}'" for i in range(2000)], extras=2000)
    result = measured("deps", "--path", planted.site, "--no-cache")
    _deps_bounded(result)
    assert "2000 dependency conflict(s) (0 of them pip check's too)" in result.stdout


def test_deps_on_a_hundred_thousand_requires_dist_lines(planted: Planted) -> None:
    """100,000 lines, 200 of a thousand extras asked for: each extra finds its own lines."""
    _requires(planted, "alpha", [f"beta[x{i}]" for i in range(200)])
    _requires(planted, "beta", [f"c{i}; extra == 'x{i % 1000}'" for i in range(100_000)], extras=1000)
    result = measured("deps", "--path", planted.site, "--no-cache")
    _deps_bounded(result)
    assert "20000 dependency conflict(s)" in result.stdout


def test_deps_stops_where_every_extra_adds_every_requirement(planted: Planted) -> None:
    """``extra != ""`` holds for any extra: 2,000 x 2,000 conflicts would be 4 million. Cut, and said (WD033)."""
    _requires(planted, "alpha", [f"beta[x{i}]" for i in range(2000)])
    _requires(planted, "beta", [f"c{i}; extra != ''" for i in range(2000)], extras=2000)
    result = measured("deps", "--path", planted.site, "--no-cache")
    _deps_bounded(result)
    assert (
        "WD033: not judged: its extras' markers ask for more than 100000 requirement and extra pairs" in result.stdout
    )


def _open_quote_then_a_lines(planted: Planted) -> None:
    """An unterminated quote, then 50 MB of ``a`` lines: each a malformed row once the quote's row is cut."""
    record = planted.record("alpha")
    record.write_bytes(b'"' + b"a\n" * 25_000_000 + record.read_bytes())


def test_an_unterminated_quote_then_fifty_megabytes_of_rows_checked_by_name(planted: Planted) -> None:
    """Was 26 s of CPU: every one of 25 million malformed rows was parsed. Reading stops after 100,000."""
    _open_quote_then_a_lines(planted)
    result = measured("check", "alpha", "--path", planted.site)
    _bounded(result)
    assert result.returncode == 1
    assert "the rest of RECORD is not read" in result.stdout


def test_an_unterminated_quote_then_fifty_megabytes_of_rows_checked_with_all(planted: Planted) -> None:
    """``check --all``, as run by default (its cache, its ownership audit): within 10 s and 400 MB (#49)."""
    _open_quote_then_a_lines(planted)
    result = measured("check", "--all", "--path", planted.site)
    print(f"{result.cpu_s:.1f} s CPU, {result.peak_mb:.0f} MB peak, {result.wall_s:.1f} s wall")
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    assert result.returncode == 1
    assert result.cpu_s < CPU_LIMIT_S and result.wall_s < 10, result
    assert result.peak_mb < 400, f"{result.peak_mb:.0f} MB at peak"


def test_three_million_rows_without_a_hash(planted: Planted) -> None:
    """Each row a WD015 finding of its own took a minute and 2.9 GB: a hundred are listed, the rest counted."""
    record = planted.record("alpha")
    record.write_bytes(b"".join(b"alpha/m%d.py,,\n" % i for i in range(3_000_000)) + record.read_bytes())
    result = measured("check", "alpha", "--path", planted.site)
    _bounded(result)
    assert result.returncode == 1
    assert "more row(s) like this, not listed" in result.stdout
    assert len(result.stdout.splitlines()) < 1_000

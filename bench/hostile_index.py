"""The preflight attacks of issue #49 through the command line, with the shipped bounds: time and peak memory.

Each attack is ``wheels --lock pylock.toml --no-cache`` against a lying index on 127.0.0.1
(``tests/range_server.py``) or a lock that names files it should not. Each run is a new
process, measured by ``os.wait4``: wall time, CPU time and peak resident memory. A run is
killed after ``--timeout`` seconds and may not map more than ``--memory-cap`` MiB (so an
unbounded version fails with MemoryError instead of taking the shared machine down).

    python bench/hostile_index.py                 # this checkout
    python bench/hostile_index.py --old /tmp/old  # and another version's package, interleaved

Run from the repository root. The issue's bound: every attack ends within 90 s and 512 MB.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "hostile"))

from helpers import build_wheel  # noqa: E402
from locks import Entry, write_pylock  # noqa: E402
from range_server import answer, drip, endless, range_index  # noqa: E402

TARGET = ("--python-version", "3.11", "--platform", "manylinux_2_28_x86_64")


@dataclass(frozen=True)
class Run:
    returncode: int
    wall_s: float
    cpu_s: float
    peak_mb: float
    said: str


#: A small process that forks the run and reports its rusage: measured from here, the run's peak memory would
#: count the pages it shared with this (large) process before exec. The cap is set in the child before exec.
_LAUNCHER = """
import json, os, resource, sys
report, cap, args = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
pid = os.fork()
if pid == 0:
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    os.execv(sys.executable, [sys.executable, "-m", "wheeldoctor", *args])
_, status, usage = os.wait4(pid, 0)
with open(report, "w") as out:
    json.dump([os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, usage.ru_maxrss], out)
"""


def _run(package_dir: Path | None, args: list[str], timeout: float, memory_cap_mb: int) -> Run:
    """``python -m wheeldoctor ARGS`` (from ``package_dir`` if given): wall, CPU and peak memory by ``wait4``."""
    import json

    env = dict(os.environ)
    if package_dir is not None:
        env["PYTHONPATH"] = str(package_dir)
    with tempfile.TemporaryFile() as err, tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "usage.json"
        started = time.monotonic()
        child = subprocess.Popen(
            [sys.executable, "-c", _LAUNCHER, str(report), str(memory_cap_mb << 20), *args],
            cwd="/",  # not this checkout: PYTHONPATH decides which package runs
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )
        try:
            child.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
        wall = time.monotonic() - started
        err.seek(0)
        lines = err.read().decode("utf-8", "replace").splitlines()
        returncode, cpu, peak = json.loads(report.read_text()) if report.exists() else (-9, 0.0, 0)
    said = next((line for line in lines if line.startswith(("error:", "note:"))), lines[0] if lines else "")
    if returncode == -signal.SIGKILL:
        said = f"killed after {timeout:.0f} s"
    return Run(returncode, wall, cpu, peak / 1024, said[:150])


def _big_directory_wheel(directory: Path, name: str, entries: int) -> Path:
    """A wheel whose central directory holds ``entries`` tiny members (about 50 bytes each)."""
    path = directory / f"{name}-1.0-py3-none-any.whl"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for i in range(entries):
            archive.writestr(f"{name}/{i:x}", b"")
        archive.writestr(f"{name}-1.0.dist-info/RECORD", b"")
    path.write_bytes(buffer.getvalue())
    return path


@dataclass(frozen=True)
class Attack:
    name: str
    lie: Callable[..., bool] | None
    sized: bool = True
    wheels: str = "plain"  # plain, bigdir, local-outside, local-sparse


def _attacks() -> list[Attack]:
    return [
        Attack("endless body, lock without size (x8)", endless, sized=False),
        Attack("endless body, lock with size (x8)", endless),
        Attack("body dripped, 1 byte / 5 s (x8)", drip(5.0)),
        Attack("headers dripped, 1 byte / 5 s (x8)", drip(5.0, headers=True)),
        Attack("503 with Retry-After: 999999 (x8)", answer(503, {"Retry-After": "999999"})),
        Attack("206 with a 20-digit Content-Length (x8)", answer(206, {"Content-Length": "9" * 20}, b"")),
        Attack("central directory of 300,000 entries (x8)", None, wheels="bigdir"),
        Attack("lock path outside its folder", None, wheels="local-outside"),
        Attack("lock path: a 50 GiB sparse file, no size", None, sized=False, wheels="local-sparse"),
    ]


@contextmanager
def _scene(attack: Attack, work: Path) -> Iterator[Path]:
    """The lock of ``attack`` (and its index, serving while the block runs)."""
    scene = work / attack.name.split(",")[0].replace(" ", "-")
    wheels = scene / "index"
    repo = scene / "repo"
    wheels.mkdir(parents=True, exist_ok=True)
    repo.mkdir(exist_ok=True)
    if attack.wheels == "local-outside":
        secret = scene / "secret-1.0-py3-none-any.whl"
        secret.write_bytes(b"secret\n")
        yield write_pylock(repo / "pylock.toml", Entry(secret, path=str(secret), size=7, sha256="0" * 64))
        return
    if attack.wheels == "local-sparse":
        sparse = repo / "sparse-1.0-py3-none-any.whl"
        with open(sparse, "wb") as f:
            f.truncate(50 << 30)
        yield write_pylock(repo / "pylock.toml", Entry(sparse, path=sparse.name, size=False, sha256="1" * 64))
        return
    if attack.wheels == "bigdir":
        built = [_big_directory_wheel(wheels, f"big{i}", 300_000) for i in range(8)]
    else:
        built = [build_wheel(wheels, f"w{i}", "1.0", {f"w{i}/__init__.py": b"x = 1\n"}) for i in range(8)]
    with range_index(wheels) as index:
        index.lie = attack.lie
        entries = [
            Entry(b, url=index.file_url(b.name), size=attack.sized, sha256=hashlib.sha256(b.read_bytes()).hexdigest())
            for b in built
        ]
        yield write_pylock(repo / "pylock.toml", *entries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", type=Path, help="a directory holding another version's wheeldoctor package")
    parser.add_argument("--timeout", type=float, default=150.0)
    parser.add_argument("--memory-cap", type=int, default=3072, help="MiB of address space per run")
    parser.add_argument("--only", help="run the attacks whose name holds this text")
    options = parser.parse_args()
    versions: list[tuple[str, Path | None]] = [("new", ROOT)]
    if options.old is not None:
        versions.append(("old", options.old))
    print(f"{'attack':45} {'version':7} {'rc':>4} {'wall s':>7} {'cpu s':>6} {'peak MB':>8}  said")
    with tempfile.TemporaryDirectory() as tmp:
        for attack in _attacks():
            if options.only and options.only not in attack.name:
                continue
            with ExitStack() as stack:
                lock = stack.enter_context(_scene(attack, Path(tmp)))
                for label, package in versions:
                    args = ["wheels", "--lock", str(lock), "--no-cache", *TARGET]
                    run = _run(package, args, options.timeout, options.memory_cap)
                    print(
                        f"{attack.name:45} {label:7} {run.returncode:>4} {run.wall_s:>7.1f} {run.cpu_s:>6.1f} "
                        f"{run.peak_mb:>8.0f}  {run.said}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()

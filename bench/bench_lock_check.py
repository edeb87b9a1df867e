"""Benchmark: ``check --all --lock`` cold and warm against plain ``check --all``, on one real environment.

Builds under ``bench/.work/lockcheck/`` (reused between runs):

* ``pylock.toml``: ``uv pip compile --format pylock.toml --python-version 3.11`` of a JAX CPU
  and scientific stack (36 wheels, about 180 MiB of wheels);
* ``venv``: a venv synced from that lock by ``uv pip sync``.

Then, in one run, ``--rounds`` rounds, the legs interleaved so that background load hits all
of them alike, each a new process:

1. ``lock cold``: ``check --all --lock pylock.toml`` with an empty cache directory: every
   RECORD fetched from PyPI by range;
2. ``lock warm``: the same with the RECORDs and the verification cache filled (no network);
3. ``plain cold``: ``check --all`` with an empty cache directory (every file hashed);
4. ``plain warm``: ``check --all`` with its verification cache filled.

The goal (#45): ``lock warm`` at most 2x ``plain warm``, or ``plain warm`` + 0.25 s, whichever is larger.

Reported: median and best wall time, median CPU time of the process tree, exit code, and for
the lock legs the bytes and requests the run says it fetched.

Run from the repository root: ``/work/venv/bin/python bench/bench_lock_check.py [--rounds 5]``
(needs PyPI for the first build and for every cold leg).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "bench" / ".work" / "lockcheck"
STACK = ["jax[cpu]", "scipy", "pandas", "scikit-learn", "matplotlib", "requests", "rich", "httpx"]
FETCH_LINE = re.compile(
    r"RECORDs of (\d+) locked wheel\(s\) \(([^)]*)\): ([\d.]+) (B|KiB|MiB|GiB) fetched in (\d+) request"
)
UNITS = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}


def uv() -> str:
    from uv import find_uv_bin

    return str(find_uv_bin())


def run(cmd: Sequence[str | Path], **kwargs: object) -> None:
    print("  $", " ".join(str(c) for c in cmd), flush=True)
    env = {**os.environ, "UV_LINK_MODE": "copy", "UV_NO_PROGRESS": "1"}
    subprocess.run([str(c) for c in cmd], check=True, env=env, **kwargs)  # type: ignore[call-overload]


def build() -> tuple[Path, Path]:
    """The lock and the venv synced from it, made once."""
    WORK.mkdir(parents=True, exist_ok=True)
    lock = WORK / "pylock.toml"
    venv = WORK / "venv"
    python = venv / "bin" / "python"
    if not (WORK / ".complete").exists():
        shutil.rmtree(venv, ignore_errors=True)
        requirements = WORK / "requirements.in"
        requirements.write_text("\n".join(STACK) + "\n")
        run([uv(), "pip", "compile", "--quiet", "--format", "pylock.toml", "--python-version", "3.11",
             "-o", lock, requirements])  # fmt: skip
        run([uv(), "venv", "--quiet", "--python", sys.executable, venv])
        run([uv(), "pip", "sync", "--quiet", "--python", python, lock])
        (WORK / ".complete").write_text("")
    return lock, python


@dataclass(frozen=True, slots=True)
class Sample:
    wall: float
    cpu: float
    rc: int
    fetched: int | None
    requests: int | None
    wheels: int | None


def child(cmd: Sequence[str | Path], cache: Path) -> Sample:
    """One wheeldoctor process with ``cache`` as its cache directory: wall and CPU time, rc, what it fetched."""
    cache.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(REPO), "WHEELDOCTOR_CACHE_DIR": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: byte-code written once and used
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([str(c) for c in cmd], check=False, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(map(str, cmd))}: exit {done.returncode}\n{done.stderr}")
    match = FETCH_LINE.search(done.stderr)
    if match is None:
        return Sample(wall, cpu, done.returncode, None, None, None)
    fetched = round(float(match[3]) * UNITS[match[4]])
    return Sample(wall, cpu, done.returncode, fetched, int(match[5]), int(match[1]))


def size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    lock, python = build()
    load_before = os.getloadavg()[0]
    wheeldoctor = [sys.executable, "-m", "wheeldoctor", "check", "--all", "--python", str(python)]
    with_lock = [*wheeldoctor, "--lock", str(lock)]
    scratch = Path(tempfile.mkdtemp(prefix="wd-bench-lock-"))
    warm_lock, warm_plain = scratch / "warm-lock", scratch / "warm-plain"
    try:
        # Fill the two warm caches (and the page cache) once, outside the measured rounds.
        child(with_lock, warm_lock)
        child(wheeldoctor, warm_plain)
        legs: dict[str, list[Sample]] = {"lock cold": [], "lock warm": [], "plain cold": [], "plain warm": []}
        for round_ in range(args.rounds):
            cold = scratch / f"cold-{round_}"
            legs["lock cold"].append(child(with_lock, cold / "lock"))
            legs["lock warm"].append(child(with_lock, warm_lock))
            legs["plain cold"].append(child(wheeldoctor, cold / "plain"))
            legs["plain warm"].append(child(wheeldoctor, warm_plain))
            print(f"round {round_ + 1}/{args.rounds}: " + ", ".join(f"{k} {v[-1].wall:.2f} s" for k, v in legs.items()))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    count = sum(1 for line in lock.read_text().splitlines() if line.strip() == "[[packages]]")
    print(f"\nlock: {count} packages; environment: {python.parent.parent}; {args.rounds} rounds; "
          f"{os.cpu_count()} CPUs")  # fmt: skip
    print(f"{'leg':<11} {'median':>8} {'best':>8} {'CPU':>8} {'rc':>3}  fetched")
    for name, samples in legs.items():
        walls = [s.wall for s in samples]
        fetched = ""
        if samples[0].fetched is not None:
            fetched = f"{size(statistics.median(s.fetched or 0 for s in samples))} in "
            fetched += (
                f"{statistics.median(s.requests or 0 for s in samples):.0f} request(s), {samples[0].wheels} RECORDs"
            )
        rcs = {s.rc for s in samples}
        print(
            f"{name:<11} {statistics.median(walls):>7.2f}s {min(walls):>7.2f}s "
            f"{statistics.median(s.cpu for s in samples):>7.2f}s {'/'.join(map(str, sorted(rcs))):>3}  {fetched}"
        )
    base = statistics.median(s.wall for s in legs["plain cold"])
    for name in ("lock cold", "lock warm"):
        extra = statistics.median(s.wall for s in legs[name]) - base
        print(f"{name} over plain cold: {extra:+.2f} s")
    warm, plain = (statistics.median(s.wall for s in legs[k]) for k in ("lock warm", "plain warm"))
    allowed = max(2 * plain, plain + 0.25)
    verdict = "within" if warm <= allowed else "OVER"
    print(f"lock warm / plain warm: {warm / plain:.2f}x ({warm:.2f} s against {plain:.2f} s;", end=" ")
    print(f"{verdict} the goal of {allowed:.2f} s)")

    print(f"load average (1 min): {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()

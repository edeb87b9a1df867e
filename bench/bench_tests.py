"""Benchmark: this checkout's test suite against another version's, in one run.

The suite's time depends on what else the machine runs, so measure a change against the
code it started from, interleaved, and read the CPU time (user + sys of pytest and every
process it started) beside the wall time. Give ``--old`` a whole tree of the other version::

    mkdir /tmp/old && git archive b06877a | tar -x -C /tmp/old
    python bench/bench_tests.py --old /tmp/old --repeat 3                  # the README's command
    python bench/bench_tests.py --old /tmp/old -- -m unit                  # the unit tests
    python bench/bench_tests.py --old /tmp/old -- tests/hostile -p no:xdist

Each version runs ``python -m pytest -q -p no:cacheprovider --durations=0 ARGS`` from its
own tree (its tests, its settings, its package first on ``sys.path``), alternating which
goes first. It prints the medians, whether both passed, and each version's slowest test
files (setup + call + teardown, summed; under xdist the files' times overlap).
"""

from __future__ import annotations

import argparse
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_DURATION = re.compile(r"^\s*(\d+\.\d+)s (?:call|setup|teardown)\s+(\S+?)::")


def children_cpu() -> float:
    """User + sys seconds of every finished child process (and theirs) so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_suite(tree: Path, args: list[str]) -> tuple[float, float, int, str, dict[str, float]]:
    """One run of the suite in ``tree``: wall, CPU, exit code, summary line, seconds per file."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=0", *args]
    cpu, start = children_cpu(), time.perf_counter()
    done = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - start, children_cpu() - cpu
    per_file: dict[str, float] = {}
    summary = ""
    for line in done.stdout.splitlines():
        if found := _DURATION.match(line):
            per_file[found[2]] = per_file.get(found[2], 0.0) + float(found[1])
        elif "passed" in line or "failed" in line:
            summary = line.strip("= ")
    return wall, cpu, done.returncode, summary, per_file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="a whole tree of the other version")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--files", type=int, default=10, help="how many of the slowest files to list")
    parser.add_argument("pytest_args", nargs="*", help="after --: what to pass to pytest")
    args = parser.parse_args()
    if not (args.old / "tests" / "conftest.py").is_file():
        raise SystemExit(f"{args.old} holds no test suite")
    trees = {"old": args.old.resolve(), "new": REPO}
    walls: dict[str, list[float]] = {name: [] for name in trees}
    cpus: dict[str, list[float]] = {name: [] for name in trees}
    files: dict[str, dict[str, float]] = {name: {} for name in trees}
    for round_ in range(args.repeat):
        for name in ("old", "new") if round_ % 2 == 0 else ("new", "old"):
            wall, cpu, rc, summary, per_file = run_suite(trees[name], args.pytest_args)
            walls[name].append(wall)
            cpus[name].append(cpu)
            for path, seconds in per_file.items():
                files[name][path] = files[name].get(path, 0.0) + seconds
            print(f"{name}: wall {wall:6.1f} s, cpu {cpu:6.1f} s, exit {rc}: {summary}", flush=True)
    for name in trees:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        print(f"{name} median: wall {wall:6.1f} s, cpu {cpu:6.1f} s")
    for name in trees:
        print(f"{name}: slowest files (mean seconds per run)")
        for path, seconds in sorted(files[name].items(), key=lambda item: -item[1])[: args.files]:
            print(f"  {seconds / args.repeat:7.1f}  {path}")


if __name__ == "__main__":
    main()

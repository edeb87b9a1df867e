"""A/B: what judging unhashed ``.pyc`` rows by their code (WD062) costs a warm ``check --all``.

Runs the same check of one environment with the judgement off (A) and on (B), alternating,
each in a fresh process, and prints the median CPU time (user + sys, the child that
unmarshals and compiles included) and wall time of each, and how many ``.pyc`` were judged::

    python bench/ab_bytecode.py --python /work/venv/bin/python --runs 7

Figures are in docs/security.md (``.pyc`` files recorded without a hash). On the GPU host,
point ``--python`` at the inference environment (torch and friends ship thousands of modules).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

_RUN = """
import json, sys
from wheeldoctor.commands.check import CheckRequest, run_check
from wheeldoctor.where.target import Target, load_target
env = load_target(Target(python=sys.argv[1]))
result = run_check(env, CheckRequest(bytecode=sys.argv[2] == "on", processes=True, cache_dir=sys.argv[3] or None))
print(json.dumps(result.bytecode))
"""


def _once(python: str, mode: str, cache: str) -> tuple[float, float, object]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _RUN, python, mode, cache], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True, help="the environment's interpreter")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--cache", default="", help="a cache directory (default: none: every file hashed)")
    args = parser.parse_args()
    times: dict[str, list[tuple[float, float]]] = {"off": [], "on": []}
    judged: object = None
    for mode in ("off", "on"):  # warm the page cache
        _once(args.python, mode, args.cache)
    for _ in range(args.runs):
        for mode in ("off", "on"):
            cpu, wall, counts = _once(args.python, mode, args.cache)
            times[mode].append((cpu, wall))
            judged = counts if mode == "on" else judged
    for mode, runs in times.items():
        cpu = statistics.median(c for c, _ in runs)
        wall = statistics.median(w for _, w in runs)
        print(f"{mode:>3}: median CPU {cpu:.2f} s, wall {wall:.2f} s over {len(runs)} runs")
    print(f".pyc judged, not judged: {judged}")


if __name__ == "__main__":
    main()

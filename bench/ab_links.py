"""A/B: a warm ``check --all`` with this checkout against another version's, alternating runs.

Measures what the WD008 link check costs an environment's warm run: give ``--old`` a
directory holding the other version's ``wheeldoctor`` package::

    git archive ac9ca1d wheeldoctor | tar -x -C /tmp/before
    python bench/ab_links.py --old /tmp/before --python /work/venv/bin/python

Each version runs once first (the caches warm), then both alternate ``--runs`` times; the
median wall time of each run is printed, and of its link step alone (``verify._linked_out``,
timed in the process: the whole run's noise on a shared host is larger than the step).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


#: Runs ``check --all`` with the link step timed, its seconds written last on stderr.
_TIMED = """
import os, sys, time
from wheeldoctor.engine import verify
step = verify._linked_out
def timed(*args, **kwargs):
    started = time.perf_counter()
    try:
        return step(*args, **kwargs)
    finally:
        os.write(2, b"\\nlink-step %f\\n" % (time.perf_counter() - started))
verify._linked_out = timed
sys.argv = ["wheeldoctor", "check", "--all"]
from wheeldoctor.cli import main
main()
"""


def _run(python: str, tree: str) -> tuple[float, float]:
    """The run's wall time and its link step's, in seconds."""
    env = {**os.environ, "PYTHONPATH": tree}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: byte-code written once and used
    started = time.perf_counter()
    command = [python, "-c", _TIMED]
    # Run from /: "-c" puts the working directory first on sys.path, ahead of PYTHONPATH.
    done = subprocess.run(command, env=env, cwd=os.sep, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    took = time.perf_counter() - started
    steps = [float(line.split()[1]) for line in done.stderr.decode().splitlines() if line.startswith("link-step ")]
    return took, sum(steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True, help="a directory holding the other version's wheeldoctor")
    parser.add_argument("--python", default=sys.executable, help="the environment's interpreter")
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    trees = {"old": str(Path(args.old).resolve()), "new": str(REPO)}
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    for tree in trees.values():
        _run(args.python, tree)  # warm: the caches and the page cache
    for _ in range(args.runs):
        for name, tree in trees.items():
            times[name].append(_run(args.python, tree))
    for name, taken in times.items():
        run = statistics.median(t for t, _ in taken)
        step = statistics.median(s for _, s in taken)
        where = f"medians of {len(taken)}; {trees[name]}"
        print(f"{name}: run {1000 * run:.0f} ms, link step {1000 * step:.1f} ms ({where})")


if __name__ == "__main__":
    main()

"""Benchmark: a warm ``snapshot`` against a warm ``check --all`` on the same environment.

Both run as whole processes (``python -m wheeldoctor ...``), interleaved, ``--repeat``
times each, with one cache directory filled first by both: the figures are the medians
(and bests) of wall time, and the CPU time of each process tree. A snapshot is the check's
own verification plus one digest per RECORD (kept by RECORD's fingerprint), the platform
tags and the document; the question is what that adds. Also prints the snapshot's size.

Uses the big environment of ``bench/bench_verify.py`` (``bench/.work/big``, built with uv
from PyPI on first use), or ``--python`` for any other interpreter.

Run from the repository root: ``.venv/bin/python bench/bench_snapshot.py --repeat 11``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (the process and its workers) of one run; it must exit 0 or 1."""
    cpu, wall = _children_cpu(), time.perf_counter()
    done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - wall
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.decode(errors='replace')}")
    return wall, _children_cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=None, help="the environment's interpreter (default: bench/.work/big)")
    parser.add_argument("--repeat", type=int, default=11)
    args = parser.parse_args()
    if args.python is None:
        from bench_verify import BIG, WORK, venv

        python = str(venv(WORK / "big", *BIG))
    else:
        python = args.python
    work = tempfile.mkdtemp(prefix="wheeldoctor-bench-snapshot-")
    env = {
        **os.environ,
        "WHEELDOCTOR_CACHE_DIR": os.path.join(work, "cache"),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    env.pop("WHEELDOCTOR_NO_CACHE", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: byte-code written once and used
    out = os.path.join(work, "snapshot.json")
    runs = {
        "check --all": [sys.executable, "-m", "wheeldoctor", "check", "--all", "--python", python],
        "snapshot": [sys.executable, "-m", "wheeldoctor", "snapshot", "--python", python, "-o", out],
    }
    for cmd in runs.values():  # fill the cache (verdicts, metadata, RECORD digests), then let it settle
        timed(cmd, env)
    time.sleep(2.5)
    for cmd in runs.values():
        timed(cmd, env)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
    for _ in range(args.repeat):
        for name, cmd in runs.items():
            samples[name].append(timed(cmd, env))
    size = os.path.getsize(out)
    with open(out, encoding="utf-8") as stream:
        import json

        dists = len(json.load(stream)["distributions"])
    print(f"{python}: {dists} distributions; snapshot {size} bytes ({size / max(dists, 1):.0f} per distribution)")
    print(f"{os.cpu_count()} CPUs; {args.repeat} interleaved runs each, warm cache")
    medians = {}
    for name, got in samples.items():
        walls = [w for w, _ in got]
        medians[name] = statistics.median(walls)
        cpus = statistics.median(c for _, c in got)
        best = min(walls)
        print(f"  {name:12} median {medians[name] * 1e3:7.1f} ms, best {best * 1e3:7.1f} ms, CPU {cpus * 1e3:7.1f} ms")
    ratio = medians["snapshot"] / medians["check --all"]
    print(f"warm snapshot / warm check --all: {ratio:.3f} ({(ratio - 1) * 100:+.1f}%)")


if __name__ == "__main__":
    main()

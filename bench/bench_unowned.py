"""Benchmark: what auditing start-up hooks and unowned files adds to ``check --all``.

Uses the big environment of ``bench/bench_verify.py`` (``bench/.work/big``; run that
once first, or pass ``--python`` for any other interpreter). Measures in this process,
interleaved, medians of ``--repeat`` runs:

1. the ownership map (every path every RECORD lists; also when it must read the RECORDs
   the commands defer), the hook audit, and the walk over every site directory that finds
   unowned files: wall and CPU time;
2. the whole audit in one process (``audit_data``: the map of the deferred RECORDs, the
   walk, the hooks' owners), and the same taken from its memo in a cache directory, as a
   warm ``check --all`` takes it (every path it read stat'ed again);
3. ``check --all --no-cache`` without and with that audit (``CheckRequest(audit=...)``), on
   the environment loaded as the commands load it (RECORDs deferred); with the audit, it is
   one of the engine's tasks, run beside the verification's.

Run from the repository root: ``.venv/bin/python bench/bench_unowned.py --repeat 7``.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from wheeldoctor.commands.check import CheckRequest, run_check
from wheeldoctor.engine import cache
from wheeldoctor.engine.audit import audit_data
from wheeldoctor.where.hook_files import hook_paths
from wheeldoctor.where.hooks import audit_hooks
from wheeldoctor.where.ownership import Owners
from wheeldoctor.where.system_files import system_owners
from wheeldoctor.where.target import Target, load_target
from wheeldoctor.where.unowned import scan_unowned

BIG = Path(__file__).resolve().parent / ".work" / "big" / "bin" / "python"


def _cpu() -> float:
    """CPU seconds of this process and of its waited-for children (the forked hashing workers)."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def timed(job: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds (the whole process tree) of one call."""
    wall, cpu = time.perf_counter(), _cpu()
    job()
    return time.perf_counter() - wall, _cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=str(BIG))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    env = load_target(Target(python=args.python))
    # As the commands load it: RECORDs left for the verification (and the audit) to read.
    deferred = load_target(Target(python=args.python), defer_records=True)
    owners = Owners(env, system_owners(env))
    scan = scan_unowned(env, owners)
    recorded = sum(len(d.record.listed) for d in env.distributions if d.record is not None)
    print(f"{args.python}: {len(env.distributions)} distributions, {recorded} recorded paths")
    print(f"walk: {scan.scanned} files in {len(scan.site_dirs)} site dir(s); {len(scan.files)} unowned")
    hooks = hook_paths(deferred)
    memo_dir = tempfile.mkdtemp(prefix="wheeldoctor-bench-")
    audit_data(deferred, hooks, memo_dir)  # kept now, unless something changed within the settle window
    time.sleep(2 * cache.SETTLE_NS / 1e9)
    audit_data(deferred, hooks, memo_dir)
    parts: dict[str, Callable[[], object]] = {
        "ownership map": lambda: Owners(env, system_owners(env)),
        "ownership map, reading the deferred RECORDs": lambda: Owners(deferred, system_owners(deferred)),
        "hook audit": lambda: audit_hooks(env, owners.owner),
        "unowned walk": lambda: scan_unowned(env, owners),
        "whole audit (map of the deferred RECORDs, walk, hooks' owners)": lambda: audit_data(deferred, hooks),
        "the same, from its memo": lambda: audit_data(deferred, hooks, memo_dir),
        "check --all --no-cache, no audit": lambda: run_check(deferred, CheckRequest(processes=True, audit=False)),
        "check --all --no-cache, with audit": lambda: run_check(deferred, CheckRequest(processes=True, audit=True)),
    }
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in parts}
    try:
        for _ in range(args.repeat):
            for name, job in parts.items():
                samples[name].append(timed(job))
    finally:
        shutil.rmtree(memo_dir, ignore_errors=True)  # the bench's own temporary directory
    print("| part | wall (median) | CPU, workers included (median) |")
    print("| --- | --- | --- |")
    for name, values in samples.items():
        wall = statistics.median(v[0] for v in values) * 1e3
        cpu = statistics.median(v[1] for v in values) * 1e3
        print(f"| {name} | {wall:,.1f} ms | {cpu:,.1f} ms |")


if __name__ == "__main__":
    main()

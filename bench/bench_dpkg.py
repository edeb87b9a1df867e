"""Benchmark: what reading dpkg's database costs a ``check --all``, on this machine's own interpreter.

Times, interleaved, in one run (median of N, wall clock, warm page cache):

* ``read_owners``: every ``/var/lib/dpkg/info/*.list`` scanned, md5sums, status, diversions
  and path filters read for the packages that own files under the environment's site dirs;
* the same for an environment dpkg owns nothing in (a venv's site-packages): the lists'
  scan alone, which every check on a Debian machine pays;
* ``wheeldoctor check --all --python PYTHON --no-cache`` as a whole process.

Usage: ``python bench/bench_dpkg.py [--python /usr/bin/python3] [--runs N]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time

from wheeldoctor.where.dpkg_owners import DEFAULT_ADMINDIR, read_owners
from wheeldoctor.where.target import Target, load_target


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default="/usr/bin/python3")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    env = load_target(Target(python=args.python))
    owned, empty, whole = [], [], []
    with tempfile.TemporaryDirectory() as elsewhere:
        for _ in range(args.runs):
            start = time.perf_counter()
            found = read_owners(DEFAULT_ADMINDIR, {d.location for d in env.distributions})
            owned.append(time.perf_counter() - start)
            start = time.perf_counter()
            read_owners(DEFAULT_ADMINDIR, [elsewhere])
            empty.append(time.perf_counter() - start)
            start = time.perf_counter()
            command = [sys.executable, "-m", "wheeldoctor", "check", "--all", "--no-cache", "--python", args.python]
            subprocess.run(command, capture_output=True, check=False)
            whole.append(time.perf_counter() - start)
    assert found is not None
    files = sum(len(p.files) for p in found.packages.values())
    print(f"dpkg lists scanned: {found.lists_read}; packages owning files here: {len(found.packages)}; files: {files}")
    print(f"read_owners, this environment: {_median_ms(owned):.1f} ms")
    print(f"read_owners, nothing owned:    {_median_ms(empty):.1f} ms")
    print(f"check --all --no-cache:         {_median_ms(whole):.1f} ms")
    print(f"share of the check:             {100 * statistics.median(owned) / statistics.median(whole):.1f} %")


if __name__ == "__main__":
    main()

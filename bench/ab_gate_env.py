"""A/B: the runtime gate on a distribution already installed, this checkout against another version's.

For machines with a real stack and no network (the GPU host): no wheel is built. Each
round runs, as whole processes of ``--python``, ``is_intact(NAME)`` cold (an empty cache
directory) and warm (a filled one) for each version, alternating which goes first. Inside
the warm processes it also times, in the same process, a bare ``os.stat`` loop over the
distribution's recorded files, the floor a warm gate can approach::

    python3 bench/ab_gate_env.py --old /tmp/base --dist torch --repeat 9
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

_PROBE = """
import sys, time, os, json
sys.path.insert(0, {package!r})
start = time.perf_counter()
import wheeldoctor
verdict = wheeldoctor.is_intact({dist!r})
gate = time.perf_counter() - start
from importlib.metadata import distribution
d = distribution({dist!r})
paths = [str(d.locate_file(f)) for f in (d.files or ())]
start = time.perf_counter()
for p in paths:
    try:
        os.stat(p)
    except OSError:
        pass
loop = time.perf_counter() - start
print(json.dumps({{"verdict": bool(verdict), "gate": gate, "stat_loop": loop, "files": len(paths)}}))
"""


def run(python: str, package: Path, dist: str, cache: str) -> dict[str, float]:
    env = dict(os.environ, WHEELDOCTOR_CACHE_DIR=cache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: byte-code written once and used
    env.pop("PYTHONPATH", None)
    start = time.perf_counter()
    done = subprocess.run(
        [python, "-c", _PROBE.format(package=str(package), dist=dist)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(done.stdout)
    result["process"] = time.perf_counter() - start
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="a directory holding the other version's package")
    parser.add_argument("--dist", default="torch")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    versions = {"old": args.old.resolve(), "new": REPO}
    warm = {name: tempfile.mkdtemp(prefix=f"wd-gate-{name}-") for name in versions}
    samples: dict[tuple[str, str, str], list[float]] = {}
    try:
        for name, package in versions.items():
            run(args.python, package, args.dist, warm[name])  # fill the cache
        for round_ in range(args.repeat):
            for name in ("old", "new") if round_ % 2 == 0 else ("new", "old"):
                cold_dir = tempfile.mkdtemp(prefix="wd-gate-cold-")
                try:
                    cold = run(args.python, versions[name], args.dist, cold_dir)
                finally:
                    shutil.rmtree(cold_dir, ignore_errors=True)
                hot = run(args.python, versions[name], args.dist, warm[name])
                for mode, result in (("cold", cold), ("warm", hot)):
                    for key in ("process", "gate"):
                        samples.setdefault((mode, name, key), []).append(result[key])
                samples.setdefault(("warm", name, "stat_loop"), []).append(hot["stat_loop"])
    finally:
        for directory in warm.values():
            shutil.rmtree(directory, ignore_errors=True)
    print(f"gate on {args.dist} with {args.python}: median; best (ms)")
    for (mode, name, key), values in sorted(samples.items()):
        print(f"{mode:5} {name:4} {key:10} {statistics.median(values) * 1000:9.1f}; {min(values) * 1000:9.1f}")


if __name__ == "__main__":
    main()

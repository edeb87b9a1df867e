"""Benchmark: this checkout's ``check --all`` against another version's, in one run.

Machines lent for an hour differ from one loan to the next by more than most changes
gain, so a change is best measured against the code it started from, on one machine,
interleaved. Give ``--old`` a directory holding the other version's ``wheeldoctor``
package, for instance::

    mkdir /tmp/old && git archive 5bb5b97 wheeldoctor | tar -x -C /tmp/old
    python bench/bench_versions.py --old /tmp/old --repeat 11

Each version runs as whole processes of ``check --all --json --python PY`` (warm cache,
each version its own; and ``--no-cache``), alternating which goes first, with a bare
``python -c pass`` for scale. It prints medians and bests, and whether every output was
the same JSON: a faster version that answers differently is not faster. Byte-code is
written and used (``PYTHONDONTWRITEBYTECODE`` is dropped), as for an installed package.
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


def command(package_dir: Path, python: str, *extra: str) -> list[str]:
    """``check --all --json`` run from ``package_dir``; no PYTHONPATH, which the probe would pass on."""
    code = (
        f"import runpy, sys; sys.path.insert(0, {str(package_dir)!r}); sys.argv[0] = 'wheeldoctor'; "
        "runpy.run_module('wheeldoctor', run_name='__main__')"
    )
    return [sys.executable, "-c", code, "check", "--all", "--json", "--python", python, *extra]


def timed(cmd: list[str], cache_dir: str) -> tuple[float, bytes]:
    env = dict(os.environ, WHEELDOCTOR_CACHE_DIR=cache_dir)
    env.pop("PYTHONPATH", None)
    # As installed: byte-code written once (the first run) and used. With it off (the GPU
    # host sets PYTHONDONTWRITEBYTECODE=1), every run compiles each module from source.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd[3:])} could not run (exit {done.returncode})")
    return time.perf_counter() - start, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="a directory holding the other version's package")
    parser.add_argument("--python", default=sys.executable, help="the environment to check (default: this one)")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    if not (args.old / "wheeldoctor" / "__init__.py").is_file():
        raise SystemExit(f"{args.old} holds no wheeldoctor package")
    versions = {"old": args.old.resolve(), "new": REPO}
    caches = {name: tempfile.mkdtemp(prefix=f"wd-{name}-") for name in versions}
    times: dict[tuple[str, str], list[float]] = {}
    outputs: dict[tuple[str, str], set[bytes]] = {}
    try:
        for name, package_dir in versions.items():
            timed(command(package_dir, args.python), caches[name])  # fill its cache
        for round_ in range(args.repeat):
            for mode, extra in (("warm cache", ()), ("no cache", ("--no-cache",))):
                for name in ("old", "new") if round_ % 2 == 0 else ("new", "old"):
                    seconds, output = timed(command(versions[name], args.python, *extra), caches[name])
                    times.setdefault((mode, name), []).append(seconds)
                    outputs.setdefault((mode, name), set()).add(output)
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            times.setdefault(("bare python -c pass", ""), []).append(time.perf_counter() - start)
    finally:
        for cache_dir in caches.values():
            shutil.rmtree(cache_dir, ignore_errors=True)
    print(f"{'':28}{'median':>12}{'best':>12}")
    for (mode, name), values in times.items():
        label = f"{mode}, {name}" if name else mode
        print(f"{label:28}{statistics.median(values) * 1000:9.1f} ms{min(values) * 1000:9.1f} ms")
    parsed = {json.dumps(json.loads(output), sort_keys=True) for found in outputs.values() for output in found}
    print(f"every output the same JSON: {len(parsed) == 1}")


if __name__ == "__main__":
    main()

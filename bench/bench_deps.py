"""Benchmark: ``wheeldoctor deps`` against ``pip check`` on a healthy environment of ~100 distributions.

Builds (or reuses) ``bench/.work/deps/``: 100 wheels with a web of satisfied requirements
(specifiers, markers, extras), installed into a uv venv seeded with pip by ``ensurepip``
(offline). Then times whole processes, interleaved, in the same run:

* ``wheeldoctor deps --python VENV`` and ``python -m pip --python VENV check``, both run
  from this interpreter's environment against the venv (same shape of invocation);
* ``VENV/bin/python -m pip check``: pip inside the venv, its best case (no re-exec).

Usage: ``python bench/bench_deps.py [--runs N] [--packages N] [--rebuild]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / ".work" / "deps"
sys.path.insert(0, str(ROOT / "tests"))

from helpers import build_wheel, find_uv, make_venv, run_checked  # noqa: E402

SEED = 20240611
STAMP = "stamp.json"


def plan(count: int) -> list[tuple[str, str, list[str], dict[str, list[str]]]]:
    """``count`` packages, each requiring a few earlier ones, every requirement satisfied."""
    rng = random.Random(SEED)
    packages: list[tuple[str, str, list[str], dict[str, list[str]]]] = []
    for i in range(count):
        name, version = f"bench-pkg-{i:03d}", f"1.{i % 10}.0"
        requires: list[str] = []
        extras: dict[str, list[str]] = {}
        for j in sorted(rng.sample(range(i), min(i, rng.randint(0, 4)))):
            dep, minor = f"bench-pkg-{j:03d}", j % 10
            spec = rng.choice([f">=1.{minor}", ">=1.0,<2", "~=1.0", "==1.*", f"!=1.{(minor + 1) % 10}.0", ""])
            marker = rng.choice(["", "", "", '; python_version >= "3.8"', '; sys_platform == "win32"'])
            requires.append(f"{dep}{spec}{marker}")
        if i and rng.random() < 0.2:
            extras["fast"] = [f"bench-pkg-{rng.randrange(i):03d}>=1"]
        if i > 1 and rng.random() < 0.15:
            extras["docs"] = [f"bench-pkg-{rng.randrange(i):03d}"]
        packages.append((name, version, requires, extras))
    # Ask for some extras, as applications do.
    for i in range(count // 2, count, 7):
        with_extra = next((p for p in packages[:i] if "fast" in p[3]), None)
        if with_extra is not None:
            packages[i][2].append(f"{with_extra[0]}[fast]>=1")
    return packages


def build(count: int, rebuild: bool) -> Path:
    """The venv's interpreter, building the environment only when it is missing or stale."""
    python = WORK / "venv" / "bin" / "python"
    stamp = {"packages": count, "seed": SEED, "python": sys.version}
    stamp_path = WORK / STAMP
    if not rebuild and python.exists() and stamp_path.exists() and json.loads(stamp_path.read_text()) == stamp:
        return python
    shutil.rmtree(WORK, ignore_errors=True)
    wheels = WORK / "wheels"
    built = [
        build_wheel(wheels, n, v, {f"{n.replace('-', '_')}/__init__.py": b""}, requires=r, extras=e)
        for n, v, r, e in plan(count)
    ]
    venv = make_venv(WORK / "venv")
    run_checked([venv.python, "-m", "ensurepip", "--default-pip"])
    uv = find_uv()
    run_checked([uv, "pip", "install", "--python", venv.python, "--no-deps", "--offline", *built])
    stamp_path.write_text(json.dumps(stamp))
    return venv.python


def timed(argv: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Wall time of one whole process."""
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: byte-code written once and used
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start, done


def main() -> int:
    """Build, check both tools agree the environment is healthy, time them, print the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--packages", type=int, default=100)
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()

    python = build(args.packages, args.rebuild)
    wheeldoctor = shutil.which("wheeldoctor", path=str(Path(sys.executable).parent))
    commands = {
        "wheeldoctor deps --python VENV": [wheeldoctor or "wheeldoctor", "deps", "--python", str(python)],
        "pip --python VENV check": [sys.executable, "-m", "pip", "--python", str(python), "check"],
        "VENV/bin/python -m pip check": [str(python), "-m", "pip", "check"],
    }
    _, report = timed([*commands["wheeldoctor deps --python VENV"], "--json"])
    document = json.loads(report.stdout)
    for label, argv in commands.items():
        _, done = timed(argv)
        if done.returncode != 0:
            print(f"{label} says the environment is not healthy:\n{done.stdout}{done.stderr}", file=sys.stderr)
            return 1
    summary = document["summary"]
    print(
        f"environment: {summary['distributions']} distributions, {summary['requirements']} requirements "
        f"({python.parent.parent})"
    )
    print(f"python {sys.version.split()[0]}, {args.runs} runs each, interleaved, after one warm-up")
    samples: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(args.runs):
        for label, argv in commands.items():
            samples[label].append(timed(argv)[0])
    medians = {label: statistics.median(times) for label, times in samples.items()}
    for label, times in samples.items():
        print(f"  {label:32s} median {medians[label] * 1000:7.1f} ms   min {min(times) * 1000:7.1f} ms")
    ours = medians["wheeldoctor deps --python VENV"]
    for label in ("pip --python VENV check", "VENV/bin/python -m pip check"):
        print(f"ratio {label} / wheeldoctor deps: {medians[label] / ours:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

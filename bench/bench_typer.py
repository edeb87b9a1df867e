"""Benchmark: wheeldoctor's start-up with typer 0.28 (the cap) against the newest typer.

Builds ``bench/.work/typer/TYPER_VERSION/``: one venv per typer version with this checkout
of wheeldoctor (``--no-deps``, so the ``<0.29`` cap does not stop it) and packaging, rich
and that typer from the index. Then times whole processes, interleaved: ``--version``
(typer parses nothing but the one flag), and ``check --all`` / ``deps`` against an empty
site directory (the command line is parsed; almost no work follows).

Usage: ``python bench/bench_typer.py [--runs N] [--versions 0.28.0 0.29.2]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / ".work" / "typer"


def venv(version: str) -> Path:
    """A venv with this checkout and typer ``version`` (reinstalled each time: the checkout changes)."""
    prefix = WORK / version
    python = prefix / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", prefix], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "packaging", "rich", f"typer=={version}"], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", ROOT], check=True)
    return prefix / "bin" / "wheeldoctor"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=25)
    parser.add_argument("--versions", nargs="+", default=["0.28.0", "0.29.2"])
    args = parser.parse_args()
    empty = WORK / "empty-site"
    empty.mkdir(parents=True, exist_ok=True)
    commands = {
        "--version": ["--version"],
        "check --all --path EMPTY": ["check", "--all", "--path", str(empty), "--no-cache"],
        "deps --path EMPTY": ["deps", "--path", str(empty)],
    }
    exes = {v: venv(v) for v in args.versions}
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.runs):
        for label, argv in commands.items():
            for version, exe in exes.items():
                start = time.perf_counter()
                done = subprocess.run([exe, *argv], capture_output=True, check=False)
                times.setdefault((label, version), []).append(time.perf_counter() - start)
                if done.returncode not in (0, 1):
                    raise SystemExit(done.stderr.decode())
    print(f"| command | {' | '.join(f'typer {v} median (min)' for v in args.versions)} |")
    print(f"| --- | {' | '.join('---' for _ in args.versions)} |")
    for label in commands:
        cells = []
        for version in args.versions:
            xs = times[(label, version)]
            cells.append(f"{statistics.median(xs) * 1000:.1f} ms ({min(xs) * 1000:.1f} ms)")
        print(f"| `wheeldoctor {label}` | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()

"""A/B: every command the engine serves, this checkout against other versions, interleaved in one run.

Each round runs, as whole processes, each case once per version (the order rotating from
round to round), and prints the median wall time and the median CPU time (user + system
of the process and the children it waited for: on a shared machine, CPU compares where
wall time swings), each as a ratio to the first ``--version``. Cases:

* ``check-warm``: ``check --all --json --python PY``, each version with its own filled cache;
* ``check-cold``: the same with ``--no-cache``;
* ``deps``: ``deps --json --python PY``, its memos warm;
* ``deps-cold`` and ``deps-text`` (not run unless named in ``--cases``): ``deps`` with
  ``--no-cache``, and warm with its plain report (compared as text);
* ``snapshot``: ``snapshot --python PY --host bench``, warm;
* ``gate-cold`` and ``gate-warm``: ``is_intact(DIST)`` in a process of the gate's
  interpreter (an empty cache directory each time; a filled one). With ``--gate-dist``, DIST
  is a distribution of PY (``torch`` on a GPU host) and each warm gate also times a bare
  ``os.stat`` loop over its files (``gate-stat-loop``); without, a venv of one wheel
  (400 small files and three of 24 MiB, installed by uv) is built for it.

Every version's outputs of one case are compared (timings left out): a faster version
that answers differently is not faster. Byte-code is written and used, as installed::

    git worktree add /tmp/base b06877a
    python bench/ab_engine.py --version base=/tmp/base --rounds 15
    python bench/ab_engine.py --version base=/tmp/base --python /venv/bin/python --gate-dist torch

``--version NAME=DIR`` may be repeated (variants of one version, say); ``new`` is this checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CASES = ("check-warm", "check-cold", "deps", "snapshot", "gate-cold", "gate-warm")
#: Cases run only when ``--cases`` names them.
MORE_CASES = ("deps-cold", "deps-text")
#: Keys whose values differ from one run to the next.
VOLATILE = {"elapsed", "elapsed_s", "seconds", "duration", "timings", "time", "started", "cache_dir", "created"}

_GATE = """
import sys, time, os, json
sys.path.insert(0, {package!r})
import wheeldoctor
verdict = wheeldoctor.is_intact({dist!r})
loop = None
if {loop!r}:
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
print(json.dumps({{"verdict": bool(verdict), "stat_loop": loop}}))
"""


def _wheeldoctor(package: Path, *args: str) -> list[str]:
    code = (
        f"import sys; sys.path.insert(0, {str(package)!r}); sys.argv[0] = 'wheeldoctor'; "
        "from wheeldoctor.cli import main; main()"
    )
    return [sys.executable, "-c", code, *args]


def _run(argv: list[str], cache: str) -> tuple[float, float, bytes]:
    """Wall and CPU seconds of one whole process, and its stdout."""
    env = dict(os.environ, WHEELDOCTOR_CACHE_DIR=cache)
    for name in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "WHEELDOCTOR_NO_CACHE"):
        env.pop(name, None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv[3:]} could not run (exit {done.returncode}): {done.stderr.decode()[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def _comparable(case: str, output: bytes) -> str:
    if case.startswith("gate"):
        return json.dumps(json.loads(output)["verdict"])
    if case == "deps-text":
        return output.decode(errors="replace")
    return json.dumps(_scrub(json.loads(output)), sort_keys=True)


def _gate_venv(work: Path) -> tuple[str, str]:
    """A venv of one wheel for the gate: its interpreter and the distribution's name."""
    sys.path.insert(0, str(REPO / "tests"))
    from helpers import build_wheel, make_venv, uv_install

    files = {f"gated/m{i:03d}.py": b"x = %d\n" % i * 40 for i in range(400)}
    files.update({f"gated/lib{i}.so": os.urandom(24 << 20) for i in range(3)})
    venv = make_venv(work / "gate-venv")
    uv_install(venv, "--no-deps", build_wheel(work / "wheels", "gated", "1.0", files))
    return str(venv.python), "gated"


class Bench:
    """The cases of one run, each timed for every version, interleaved."""

    def __init__(self, args: argparse.Namespace, versions: dict[str, Path], work: Path) -> None:
        self.args, self.versions, self.work = args, versions, work
        self.cases = [c for c in args.cases.split(",") if c]
        unknown = set(self.cases) - {*CASES, *MORE_CASES}
        if unknown:
            raise SystemExit(f"unknown cases: {', '.join(sorted(unknown))}")
        self.caches = {name: str(work / f"cache-{name}") for name in versions}
        self.gate_python, self.gate_dist = args.python, args.gate_dist
        if any(c.startswith("gate") for c in self.cases) and self.gate_dist is None:
            self.gate_python, self.gate_dist = _gate_venv(work)
        self.walls: dict[tuple[str, str], list[float]] = {}
        self.cpus: dict[tuple[str, str], list[float]] = {}
        self.outputs: dict[str, set[str]] = {}
        self.loops: list[float] = []

    def argv(self, case: str, package: Path) -> list[str]:
        if case.startswith("gate"):
            loop = case == "gate-warm" and self.args.gate_dist is not None
            return [self.gate_python, "-c", _GATE.format(package=str(package), dist=self.gate_dist, loop=loop)]
        extra = {
            "check-warm": ["check", "--all", "--json"],
            "check-cold": ["check", "--all", "--json", "--no-cache"],
            "deps": ["deps", "--json"],
            "deps-cold": ["deps", "--json", "--no-cache"],
            "deps-text": ["deps"],
            "snapshot": ["snapshot", "--host", "bench"],
        }[case]
        return _wheeldoctor(package, *extra, "--python", self.args.python)

    def warm_up(self) -> None:
        """Byte-code written, caches and memos filled."""
        for name, package in self.versions.items():
            for case in self.cases:
                if case != "gate-cold":
                    _run(self.argv(case, package), self.caches[name])

    def round(self, number: int) -> None:
        names = list(self.versions)
        order = names[number % len(names) :] + names[: number % len(names)]
        for case in self.cases:
            for name in order:
                cache = tempfile.mkdtemp(dir=self.work) if case == "gate-cold" else self.caches[name]
                wall, cpu, output = _run(self.argv(case, self.versions[name]), cache)
                if case == "gate-cold":
                    shutil.rmtree(cache)
                self.walls.setdefault((case, name), []).append(wall)
                self.cpus.setdefault((case, name), []).append(cpu)
                self.outputs.setdefault(case, set()).add(_comparable(case, output))
                if case == "gate-warm" and self.args.gate_dist is not None:
                    self.loops.append(json.loads(output)["stat_loop"])
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        self.walls.setdefault(("python -c pass", ""), []).append(time.perf_counter() - start)

    def report(self) -> None:
        first = next(iter(self.versions))
        print(f"{self.args.rounds} rounds, --python {self.args.python}; medians (ratio to {first})")
        print(f"{'case':16}{'version':>10}{'wall ms':>12}{'ratio':>8}{'cpu ms':>12}{'ratio':>8}")
        median = statistics.median
        for case in self.cases:
            base_wall, base_cpu = median(self.walls[(case, first)]), median(self.cpus[(case, first)])
            for name in self.versions:
                wall, cpu = median(self.walls[(case, name)]), median(self.cpus[(case, name)])
                ratios = f"{wall * 1000:12.1f}{wall / base_wall:8.3f}{cpu * 1000:12.1f}{cpu / base_cpu:8.3f}"
                print(f"{case:16}{name:>10}{ratios}")
            print(f"{'':16}{'same output':>22}: {len(self.outputs[case]) == 1}")
        print(f"{'python -c pass':16}{'':>10}{median(self.walls[('python -c pass', '')]) * 1000:12.1f}")
        if self.loops:
            print(f"{'gate-stat-loop':16}{'':>10}{median(self.loops) * 1000:12.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="append", default=[], metavar="NAME=DIR", help="another version's tree")
    parser.add_argument("--python", default="python3", help="the environment checked (default: python3)")
    parser.add_argument("--rounds", type=int, default=11)
    known = ",".join(CASES + MORE_CASES)
    parser.add_argument("--cases", default=",".join(CASES), help=f"a comma-separated list of {known}")
    parser.add_argument("--gate-dist", help="gate on this distribution of --python (else a built venv's)")
    args = parser.parse_args()
    versions: dict[str, Path] = {}
    for given in args.version:
        name, _, directory = given.partition("=")
        if not (Path(directory) / "wheeldoctor" / "__init__.py").is_file():
            raise SystemExit(f"{directory} holds no wheeldoctor package")
        versions[name] = Path(directory).resolve()
    versions["new"] = REPO
    work = Path(tempfile.mkdtemp(prefix="wd-ab-"))
    try:
        bench = Bench(args, versions, work)
        bench.warm_up()
        for number in range(args.rounds):
            bench.round(number)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    bench.report()


if __name__ == "__main__":
    main()

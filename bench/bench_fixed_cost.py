"""Benchmark: the fixed cost of a command, beside ``uv pip check``, ``pip check`` and a bare interpreter.

For each environment it times whole processes, interleaved, over ``--runs`` rounds (the
order rotates each round), and prints medians as a Markdown table:

* ``wheeldoctor deps --python PY`` (piped: the plain report; its memos warm, in the
  version's cache directory), the same with ``--no-cache`` (cold), ``uv pip check --python PY``
  (when uv is found), ``PY -m pip check`` (when PY has pip) and ``PY -c pass``;
* ``wheeldoctor check --all --python PY`` with a warm cache (filled before the rounds,
  a cache directory per version), and the same pinned to one CPU (as a 1-CPU CI
  container runs it: one job), where the system can pin a process;
* ``wheeldoctor --version``.

Environments: PY (``--python``; default, the interpreter this one is built on, e.g. the
pyenv or system ``python3`` under a venv), and a built venv of ~100 distributions with a
web of requirements (``bench/bench_deps.py``'s, under ``bench/.work/deps``; built with
the stdlib's venv and pip, offline, where uv is missing). ``--no-built`` leaves it out.

``--old DIR`` also times another version's package, run the same way, in the same rounds::

    git worktree add /tmp/base a1c52ea
    python bench/bench_fixed_cost.py --old /tmp/base

Bytecode is written and used (``PYTHONDONTWRITEBYTECODE`` is dropped), as for an installed
package; the warm-up round writes it. Every wheeldoctor runs as
``python -c "...; from wheeldoctor.cli import main; main()"`` with its package directory
first on ``sys.path`` (no ``PYTHONPATH``, which the probe would pass on to the environment
read); the console script does the same import. Tools that are missing are skipped, with a note.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Case:
    """One command line timed in every round."""

    env: str
    label: str
    argv: list[str]
    version: str = ""
    """``new`` or ``old`` for wheeldoctor's commands; empty for the others."""
    cache: str | None = None
    one_cpu: bool = False
    """Run pinned to one CPU (its affinity), so that it sees one CPU and takes one job."""
    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    """CPU seconds of the process and the children it waited for (the probe), user and system."""
    outputs: set[bytes] = field(default_factory=set)


def wheeldoctor(package_dir: Path, *args: str) -> list[str]:
    """A wheeldoctor process run from ``package_dir``, as the console script runs it."""
    code = (
        f"import sys; sys.path.insert(0, {str(package_dir)!r}); sys.argv[0] = 'wheeldoctor'; "
        "from wheeldoctor.cli import main; main()"
    )
    return [sys.executable, "-c", code, *args]


def run(case: Case) -> tuple[float, float, subprocess.CompletedProcess[bytes]]:
    """Wall time and CPU time of one whole process, stdout piped, stdin closed.

    CPU time counts what the process and the children it waited for spent, whatever else
    runs on the machine: on a shared, loaded machine it compares versions where wall time
    cannot.
    """
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    env.pop("PYTHONPATH", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: the warm-up compiles each version once
    if case.cache is not None:
        env["WHEELDOCTOR_CACHE_DIR"] = case.cache
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # Pinned through this process, which the child inherits: a ``preexec_fn`` would cost
    # the child's start the fast spawn the other cases get.
    cpus = os.sched_getaffinity(0) if case.one_cpu else None
    if cpus is not None:
        os.sched_setaffinity(0, {min(cpus)})
    try:
        done = subprocess.run(case.argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, check=False)
    finally:
        if cpus is not None:
            os.sched_setaffinity(0, cpus)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done


def find_uv() -> str | None:
    """uv from PATH or from the ``uv`` package beside this interpreter; None when neither is there."""
    found = shutil.which("uv")
    if found is None:
        try:
            from uv import find_uv_bin

            found = find_uv_bin()
        except (ImportError, FileNotFoundError):
            return None
    return found


def has_pip(python: str) -> bool:
    """Whether ``python -m pip`` runs."""
    done = subprocess.run([python, "-m", "pip", "--version"], capture_output=True, check=False)
    return done.returncode == 0


def built_env(count: int) -> str | None:
    """The interpreter of bench_deps.py's venv of ``count`` distributions; None where it cannot be built."""
    sys.path.insert(0, str(ROOT / "bench"))
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        import bench_deps
        from helpers import build_wheel
    except ImportError as e:
        print(f"note: built environment skipped ({e})", file=sys.stderr)
        return None
    if find_uv() is not None:
        return str(bench_deps.build(count, rebuild=False))
    # No uv (an offline host): the stdlib's venv with pip from ensurepip installs the same wheels.
    work = ROOT / "bench" / ".work" / f"fixed-cost-env-{count}"
    python = work / "venv" / "bin" / "python"
    if not python.exists():
        shutil.rmtree(work, ignore_errors=True)
        wheels = [
            build_wheel(work / "wheels", n, v, {f"{n.replace('-', '_')}/__init__.py": b""}, requires=r, extras=e)
            for n, v, r, e in bench_deps.plan(count)
        ]
        subprocess.run([sys.executable, "-m", "venv", work / "venv"], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", *wheels], check=True)
    return str(python)


def cases_for(env: str, python: str, versions: dict[str, Path], caches: dict[str, str], uv: str | None) -> list[Case]:
    """Every command timed against ``python``'s environment."""
    cases = []
    for name, package_dir in versions.items():
        argv = wheeldoctor(package_dir, "deps", "--python", python)
        # Its own cache too: versions that key the metadata memo apart would rewrite one shared file each run.
        cases.append(Case(env, "wheeldoctor deps", argv, name, cache=caches[name]))
    for name, package_dir in versions.items():  # cold: nothing kept, every METADATA read and requirement parsed
        argv = wheeldoctor(package_dir, "deps", "--no-cache", "--python", python)
        cases.append(Case(env, "wheeldoctor deps --no-cache", argv, name))
    if uv is not None:
        cases.append(Case(env, "uv pip check", [uv, "pip", "check", "--python", python]))
    if has_pip(python):
        cases.append(Case(env, "pip check", [python, "-m", "pip", "check"]))
    for name, package_dir in versions.items():
        argv = wheeldoctor(package_dir, "check", "--all", "--python", python)
        cases.append(Case(env, "wheeldoctor check --all (warm)", argv, name, cache=caches[name]))
    if hasattr(os, "sched_setaffinity"):
        for name, package_dir in versions.items():
            argv = wheeldoctor(package_dir, "check", "--all", "--python", python)
            label = "wheeldoctor check --all (warm, one CPU)"
            cases.append(Case(env, label, argv, name, cache=caches[name], one_cpu=True))
    cases.append(Case(env, "python -c pass", [python, "-c", "pass"]))
    return cases


def table(cases: list[Case], old: bool) -> str:
    """The Markdown table: medians, bests, and ratios to the environment's bare interpreter and to old."""
    bare = {c.env: statistics.median(c.times) for c in cases if c.label == "python -c pass"}
    median = {(c.env, c.label, c.version): statistics.median(c.times) for c in cases}
    head = "| environment | command | version | median ms | best ms | x `python -c pass` | CPU ms median |"
    rule = "| --- | --- | --- | ---: | ---: | ---: | ---: |"
    if old:
        head, rule = head + " new / old |", rule + " ---: |"
    rows = [head, rule]
    for c in cases:
        m = median[(c.env, c.label, c.version)]
        ratio = f"{m / bare[c.env]:.2f}" if c.env in bare else ""
        cpu = statistics.median(c.cpu) * 1000
        row = f"| {c.env} | {c.label} | {c.version} | {m * 1000:.1f} | {min(c.times) * 1000:.1f} | {ratio} |"
        row += f" {cpu:.1f} |"
        if old:
            base = median.get((c.env, c.label, "old"))
            row += f" {m / base:.2f} |" if c.version == "new" and base else " |"
        rows.append(row)
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_python = os.path.join(sys.base_prefix, "bin", "python3")
    parser.add_argument("--python", default=default_python, help=f"the interpreter to inspect ({default_python})")
    parser.add_argument("--old", type=Path, help="a directory holding another version's wheeldoctor package")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--packages", type=int, default=100, help="distributions in the built environment")
    parser.add_argument("--no-built", action="store_true", help="leave the built environment out")
    args = parser.parse_args()

    versions = {"new": ROOT}
    if args.old is not None:
        if not (args.old / "wheeldoctor" / "cli" / "__init__.py").is_file():
            print(f"{args.old} holds no wheeldoctor package with wheeldoctor/cli", file=sys.stderr)
            return 2
        versions["old"] = args.old.resolve()
    uv = find_uv()
    if uv is None:
        print("note: uv not found: `uv pip check` skipped", file=sys.stderr)
    envs = {"own python3": args.python}
    if not args.no_built and (built := built_env(args.packages)) is not None:
        envs[f"built venv ({args.packages} dists)"] = built
    caches = {name: tempfile.mkdtemp(prefix=f"wd-fixed-{name}-") for name in versions}
    cases = [c for env, python in envs.items() for c in cases_for(env, python, versions, caches, uv)]
    cases += [Case("-", "wheeldoctor --version", wheeldoctor(d, "--version"), name) for name, d in versions.items()]
    try:
        for case in cases:  # a warm-up each, which fills the caches
            _, _, done = run(case)
            if done.returncode not in (0, 1):
                print(f"{case.label} ({case.version or case.env}) could not run:", file=sys.stderr)
                print(done.stderr.decode(errors="replace"), file=sys.stderr)
                return 2
        for round_ in range(args.runs):
            shift = round_ % len(cases)
            for case in cases[shift:] + cases[:shift]:
                seconds, cpu, done = run(case)
                case.times.append(seconds)
                case.cpu.append(cpu)
                case.outputs.add(done.stdout)
    finally:
        for cache in caches.values():
            shutil.rmtree(cache, ignore_errors=True)
    print(f"python {sys.version.split()[0]} runs wheeldoctor; {os.cpu_count()} CPUs; {args.runs} rounds, interleaved")
    for env, python in envs.items():
        print(f"- {env}: {python}")
    print()
    print(table(cases, old=len(versions) > 1))
    if len(versions) > 1:
        by_key: dict[tuple[str, str], dict[str, set[bytes]]] = {}
        for c in cases:
            if c.version:
                by_key.setdefault((c.env, c.label), {})[c.version] = c.outputs
        same = all(v.get("new") == v.get("old") for v in by_key.values())
        print(f"\nevery wheeldoctor output the same in both versions: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

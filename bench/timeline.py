"""Where one ``wheeldoctor`` command's time goes, from the moment it is spawned to its exit.

    python3 bench/timeline.py [--repeat N] [--big MB] -- check --all --python python3 --no-cache

Runs the command N times as a new process of this interpreter (wheeldoctor from this
checkout, as ``bench_verify.py`` runs it) and prints, per run, when each stage began and
ended, in milliseconds after the spawn: the interpreter ready, the environment read
(``load_target``), the verification's forked workers (``workers``), every RECORD parse of
``--rows`` rows or more and every file of ``--big`` MB or more each worker proved, and the
exit. Nothing of wheeldoctor changes: the stages are timed by wrapping its functions as their
modules are imported, from a prelude run before the command.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

PRELUDE = r"""
import os, sys, time, atexit, importlib.abc, importlib.machinery
_T0 = float(os.environ["WD_T0"])
_OUT = os.environ["WD_TIMELINE"]
_BIG = int(os.environ["WD_BIG"])
_ROWS = int(os.environ["WD_ROWS"])

def _event(*what):
    line = (repr((round((time.time() - _T0) * 1000, 1), os.getpid(), *what)) + "\n").encode()
    fd = os.open(_OUT, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.write(fd, line)
    os.close(fd)

_event("python ready")

def _span(name, function, keep=lambda *a, **k: True):
    def wrapper(*args, **kwargs):
        kept = keep(*args, **kwargs)
        if kept:
            _event(name + " begins", kept)
        try:
            return function(*args, **kwargs)
        finally:
            if kept:
                _event(name + " ends", kept)
    return wrapper

def _patch(module):
    name = module.__name__
    if name == "wheeldoctor.where.target":
        module.load_target = _span("environment read", module.load_target)
    elif name == "wheeldoctor.engine.executors":
        module.Workers.run = _span("workers", module.Workers.run)
    elif name == "wheeldoctor.engine.tasks":
        def big(self, task, *rest):
            size = task.rows[0][3] or 0
            alone = len(task.rows) == 1 and size >= _BIG
            return f"{os.path.basename(task.paths[0])} {size / 1e6:.0f} MB" if alone else False
        def long(self, index, *rest, **kwargs):
            dist = self.dists[index]
            try:
                rows = os.stat(os.path.join(dist.path, "RECORD")).st_size // 100
            except OSError:
                rows = 0
            return f"{os.path.basename(dist.path)} ~{rows} rows" if rows >= _ROWS else False
        module.Context.prove = _span("prove", module.Context.prove, big)
        module.Context.parse = _span("parse", module.Context.parse, long)
    elif name == "wheeldoctor.cli.app":
        _event("app imported")

_WANTED = {
    "wheeldoctor.where.target", "wheeldoctor.engine.executors", "wheeldoctor.engine.tasks", "wheeldoctor.cli.app",
}

class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in _WANTED:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            execute = spec.loader.exec_module
            def exec_module(module):
                execute(module)
                _patch(module)
            spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, _Finder())
atexit.register(lambda: _event("exit"))
import runpy
sys.argv[0] = "wheeldoctor"
runpy.run_module("wheeldoctor", run_name="__main__")
"""


def run_once(command: list[str], big: int, rows: int) -> list[tuple[object, ...]]:
    """The events of one run, in the order they happened."""
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "events")
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "WD_TIMELINE": out,
            "WD_BIG": str(big),
            "WD_ROWS": str(rows),
        }
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: byte-code written once and used
        env["WD_T0"] = repr(time.time())
        subprocess.run([sys.executable, "-c", PRELUDE, *command], env=env, stdout=subprocess.DEVNULL, check=False)
        spawned_to_exit = (time.time() - float(env["WD_T0"])) * 1000
        with open(out) as f:
            events = [eval(line) for line in f]  # our own repr() lines
    events.sort(key=lambda event: event[0])
    events.append((round(spawned_to_exit, 1), 0, "reaped"))
    return events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--big", type=float, default=100.0, help="files of this many MB or more are shown")
    parser.add_argument("--rows", type=int, default=2000, help="RECORDs of about this many rows or more are shown")
    parser.add_argument("--json", action="store_true", help="the events as JSON, one run per line")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    run_once(command, int(args.big * 1e6), args.rows)  # untimed: writes the byte-code the runs use
    for run in range(args.repeat):
        events = run_once(command, int(args.big * 1e6), args.rows)
        if args.json:
            print(json.dumps(events))
            continue
        print(f"-- run {run + 1}: {' '.join(command)}")
        for at, pid, *what in events:
            print(f"{at:9.1f} ms  {pid:>7}  {' '.join(map(str, what))}")


if __name__ == "__main__":
    main()

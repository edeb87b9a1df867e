"""A/B: this checkout's JSON documents against another version's, on real environments.

Builds venvs with real wheels (intact, a modified file, a missing file, a clash pair, a
start-up hook, a broken requirement), installed by uv, then runs ``check --all --json``,
``doctor --json`` and ``snapshot`` (no cache, cold cache, warm cache; one job and two) with
both versions and compares the documents, timings left out. Each such run is made twice:
as the command line makes it (these venvs are small: verified by threads), and with forked
workers however few the files (``forked``: as a big environment is verified). Give ``--old``
a directory holding the other version's ``wheeldoctor`` package (a git worktree of the
commit before will do), and ``--also`` a real interpreter (``python3``) to compare on too::

    git worktree add /tmp/base b06877a
    python bench/ab_json.py --old /tmp/base --also python3

Exit 0 when every document is the same, 1 otherwise (the differing keys are printed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from helpers import build_wheel, make_venv, uv_install  # noqa: E402

#: Keys whose values legitimately differ from one run to the next.
VOLATILE = {"elapsed", "elapsed_s", "seconds", "duration", "timings", "time", "started", "cache_dir"}


def _build(work: Path) -> dict[str, Path]:
    """Each environment's interpreter, by name."""
    wheels = work / "wheels"
    plain = build_wheel(wheels, "alpha", "1.0", {"alpha/__init__.py": b"A = 1\n", "alpha/data.txt": b"x" * 5000})
    beta = build_wheel(wheels, "beta", "2.0", {"beta/__init__.py": b"B = 2\n"}, requires=["alpha>=1"])
    needs = build_wheel(wheels, "gamma", "0.1", {"gamma/__init__.py": b""}, requires=["alpha>=5", "nothere"])
    clash_a = build_wheel(wheels, "clash-a", "1.0", {"shared/mod.py": b"A\n", "clash_a.py": b""})
    clash_b = build_wheel(wheels, "clash-b", "1.0", {"shared/mod.py": b"B\n", "clash_b.py": b""})
    hook = build_wheel(wheels, "hooky", "1.0", {"hooky.pth": b"import os\n", "hooky/__init__.py": b""})
    big = build_wheel(wheels, "big", "1.0", {f"big/m{i}.py": bytes([65 + i % 26]) * (i * 997) for i in range(60)})
    envs: dict[str, Path] = {}

    def venv(name: str, *wheel_files: Path) -> Path:
        v = make_venv(work / name)
        for w in wheel_files:
            uv_install(v, "--no-deps", w)
        envs[name] = v.python
        return v.site_packages

    venv("intact", plain, beta, big)
    site = venv("modified", plain, beta, big)
    (site / "alpha" / "data.txt").write_bytes(b"y" * 5000)
    (site / "big" / "m7.py").write_bytes(b"changed")
    site = venv("missing", plain, beta, big)
    (site / "alpha" / "__init__.py").unlink()
    (site / "big" / "m9.py").unlink()
    venv("clash", clash_a, clash_b, plain)
    venv("hooks", hook, plain)
    site = venv("mixed", plain, beta, needs, clash_a, clash_b, hook, big)
    (site / "beta" / "__init__.py").write_bytes(b"B = 3\n")
    (site / "stray.py").write_bytes(b"")
    return envs


#: Forked workers however few the files: the threshold is in one module or another, by version.
_FORKED = """
import importlib
for name in ("wheeldoctor.engine.verify", "wheeldoctor.engine.hashing"):
    try:
        importlib.import_module(name).PROCESS_MIN_FILES = 1
    except (ImportError, AttributeError):
        pass
"""


def _command(package_dir: Path, *args: str, forked: bool = False) -> list[str]:
    code = (
        f"import runpy, sys; sys.path.insert(0, {str(package_dir)!r}); sys.argv[0] = 'wheeldoctor'; "
        + (f"exec({_FORKED!r}); " if forked else "")
        + "runpy.run_module('wheeldoctor', run_name='__main__')"
    )
    return [sys.executable, "-c", code, *args]


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def _run(package_dir: Path, cache: Path, *args: str, forked: bool = False) -> tuple[int, Any]:
    env = dict(os.environ, WHEELDOCTOR_CACHE_DIR=str(cache))
    env.pop("PYTHONPATH", None)
    done = subprocess.run(_command(package_dir, *args, forked=forked), env=env, capture_output=True, check=False)
    try:
        document = json.loads(done.stdout)
    except ValueError:
        document = {"unparsed": done.stdout.decode(errors="replace"), "stderr": done.stderr.decode(errors="replace")}
    return done.returncode, _scrub(document)


def _diff(a: Any, b: Any, where: str = "") -> list[str]:
    if type(a) is not type(b):
        return [f"{where}: {_short(a)} != {_short(b)}"]
    if isinstance(a, dict):
        out = []
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                out.append(f"{where}.{key}: only in {'new' if key in b else 'old'}")
            else:
                out.extend(_diff(a[key], b[key], f"{where}.{key}"))
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} items != {len(b)} items"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _diff(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {_short(a)} != {_short(b)}"]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 300 else text[:300] + "..."


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="a directory holding the other version's package")
    parser.add_argument("--work", type=Path, help="where to build the environments (default: a temporary dir)")
    parser.add_argument("--also", action="append", default=[], help="another interpreter to compare on")
    args = parser.parse_args()
    if not (args.old / "wheeldoctor" / "__init__.py").is_file():
        raise SystemExit(f"{args.old} holds no wheeldoctor package")
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        envs = _build(work / "envs")
        envs.update({f"also{i}": Path(p) for i, p in enumerate(args.also)})
        failures = 0
        commands = (["check", "--all", "--json"], ["doctor", "--json"], ["snapshot", "--host", "ab"])
        for name, python in envs.items():
            for command, forked in ((c, f) for c in commands for f in (False, True)):
                caches = {v: Path(tmp) / f"cache-{v}-{name}-{command[0]}-{forked}" for v in ("old", "new")}
                for mode in ("--no-cache", "cold", "warm"):
                    for jobs in ("1", "2"):
                        extra = ["--no-cache"] if mode == "--no-cache" else []
                        full = [*command, "--python", str(python), "-j", jobs, *extra]
                        old = _run(args.old, caches["old"], *full, forked=forked)
                        new = _run(REPO, caches["new"], *full, forked=forked)
                        diffs = _diff(old, new)
                        label = f"{name} {command[0]} {mode} -j{jobs}{' forked' if forked else ''}"
                        if diffs:
                            failures += 1
                            print(f"DIFFERENT {label}:", *diffs[:20], sep="\n  ")
                        else:
                            print(f"same      {label} (exit {new[0]})")
        print("identical" if not failures else f"{failures} differing runs")
        return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""A/B: the runtime gate (``wheeldoctor.is_intact``) of this checkout against another version's, in one run.

Builds a venv with one real wheel (a few hundred small files and a few big ones, installed
by uv), then times, as whole processes of the venv's interpreter, ``is_intact(name)`` cold
(an empty cache directory each time), first (no entry for the distribution, in a cache
directory in use: it holds the code's digest, copied from the warm one) and warm (a
filled one), each version's package put first on ``sys.path``, alternating which goes
first::

    python bench/ab_gate.py --old /tmp/base --repeat 21
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from helpers import build_wheel, make_venv, uv_install  # noqa: E402


def _code(package_dir: Path) -> str:
    return (
        f"import sys; sys.path.insert(0, {str(package_dir)!r}); import wheeldoctor; "
        "assert wheeldoctor.is_intact('gated') is True"
    )


def _timed(python: Path, code: str, cache_dir: str) -> float:
    # As installed: byte-code written once and used (PYTHONDONTWRITEBYTECODE dropped).
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    env["WHEELDOCTOR_CACHE_DIR"] = cache_dir
    start = time.perf_counter()
    subprocess.run([str(python), "-c", code], env=env, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="a directory holding the other version's package")
    parser.add_argument("--repeat", type=int, default=11)
    args = parser.parse_args()
    versions = {"old": args.old.resolve(), "new": REPO}
    with tempfile.TemporaryDirectory() as tmp:
        files = {f"gated/m{i:03d}.py": b"x = %d\n" % i * 40 for i in range(400)}
        files.update({f"gated/lib{i}.so": os.urandom(24 << 20) for i in range(3)})
        venv = make_venv(Path(tmp) / "venv")
        uv_install(venv, "--no-deps", build_wheel(Path(tmp) / "wheels", "gated", "1.0", files))
        warm = {name: tempfile.mkdtemp(prefix=f"wd-{name}-", dir=tmp) for name in versions}
        for name, package in versions.items():
            _timed(venv.python, _code(package), warm[name])  # fill it
        times: dict[tuple[str, str], list[float]] = {}
        for round_ in range(args.repeat):
            for name in ("old", "new") if round_ % 2 == 0 else ("new", "old"):
                cold = tempfile.mkdtemp(dir=tmp)
                times.setdefault(("cold", name), []).append(_timed(venv.python, _code(versions[name]), cold))
                shutil.rmtree(cold)
                first = tempfile.mkdtemp(dir=tmp)
                for kept in Path(warm[name]).glob("*.code"):
                    shutil.copy2(kept, first)
                times.setdefault(("first", name), []).append(_timed(venv.python, _code(versions[name]), first))
                shutil.rmtree(first)
                times.setdefault(("warm", name), []).append(_timed(venv.python, _code(versions[name]), warm[name]))
        print(f"{'':16}{'median':>12}{'best':>12}")
        for (mode, name), values in sorted(times.items()):
            print(f"{mode + ', ' + name:16}{statistics.median(values) * 1000:9.1f} ms{min(values) * 1000:9.1f} ms")


if __name__ == "__main__":
    main()

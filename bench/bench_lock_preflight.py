"""Benchmark: ``wheels --lock`` (RECORDs by range) against downloading the wheels, then ``wheels *.whl``.

Builds under ``bench/.work/preflight/`` (reused between runs): ``pylock.toml``, made by
``uv pip compile --format pylock.toml --python-version 3.11 --python-platform
x86_64-manylinux_2_28`` of ``torch`` from PyPI (torch, triton and the nvidia-* wheels: about
30 wheels, about 3 GB).

Then, in one run:

1. ``lock cold``: ``wheels --lock pylock.toml --python-version 3.11 --platform
   manylinux_2_28_x86_64 --json`` with an empty cache directory (every RECORD by range from
   PyPI), ``--rounds`` times, and ``lock warm`` (RECORDs cached), interleaved;
2. ``download``: ``pip download --no-deps --no-cache-dir --require-hashes`` of the very wheels
   the lock selects (by their URL and sha256, so pip asks the index nothing), into a fresh
   ``bench/.work/preflight/wheels/``: ``--download-rounds`` times (default 1: it costs the
   whole stack's bytes each time);
3. ``wheels *.whl --json`` on the downloaded wheels, ``--rounds`` times;

and checks that the two reports find the same clashes. The baseline is 2 + 3 (the median of 3).

Run from the repository root: ``/work/venv/bin/python bench/bench_lock_preflight.py``
(needs PyPI; check free disk first: the wheels stay in ``bench/.work/``, ignored by git).

``--ab OTHER`` compares instead this checkout's ``wheels --lock`` with another checkout's
(``OTHER``, a repository root, run with ``PYTHONPATH=OTHER``) on the GPU stack of #47:
``bench/.work/preflight/pylock.gpu.toml``, ``uv pip compile`` of torch, triton,
flashinfer-python, nvidia-cutlass-dsl and opencv-python for CPython 3.12 on
x86_64-manylinux_2_28. Each round runs both, alternating which goes first, each with an
empty cache (every RECORD, and here every hook, by range from PyPI); it prints the
medians of wall and CPU time (the child's user + sys), the bytes and requests, and the
start-up hooks this checkout's report lists. Nothing is downloaded whole.
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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "bench" / ".work" / "preflight"
TARGET = ["--python-version", "3.11", "--platform", "manylinux_2_28_x86_64"]


def uv() -> str:
    from uv import find_uv_bin

    return str(find_uv_bin())


def build() -> Path:
    lock = WORK / "pylock.toml"
    if not lock.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        requirements = WORK / "requirements.in"
        requirements.write_text("torch\n")
        cmd = [uv(), "pip", "compile", "--quiet", "--format", "pylock.toml", "--python-version", "3.11",
               "--python-platform", "x86_64-manylinux_2_28", "-o", str(lock), str(requirements)]  # fmt: skip
        print("  $", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
    return lock


def selected(report: dict[str, Any]) -> list[str]:
    """The wheels a ``wheels --lock --json`` report judged, as requirement lines: name, URL and sha256."""
    import tomllib

    lock = tomllib.loads((WORK / "pylock.toml").read_text())
    by_url = {w["url"]: (p["name"], w) for p in lock["packages"] for w in p.get("wheels", [])}
    lines = []
    for entry in report["wheels"]:
        name, wheel = by_url[entry["file"]]
        lines.append(f"{name} @ {wheel['url']} --hash=sha256:{wheel['hashes']['sha256']}\n")
    return lines


@dataclass(frozen=True, slots=True)
class Sample:
    wall: float
    rc: int
    report: dict[str, Any]
    cpu: float = 0.0
    """The child's user + sys seconds."""


def wheeldoctor(args: Sequence[str], cache: Path, repo: Path = REPO) -> Sample:
    import resource

    cache.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(repo), "WHEELDOCTOR_CACHE_DIR": str(cache)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "wheeldoctor", "wheels", *args, "--json"], check=False, env=env,
                          capture_output=True, text=True)  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        sys.exit(f"wheels {' '.join(args[:3])}...: exit {done.returncode}\n{done.stderr}")
    return Sample(wall, done.returncode, json.loads(done.stdout), cpu)


GPU_STACK = ["torch", "triton", "flashinfer-python", "nvidia-cutlass-dsl", "opencv-python"]
GPU_TARGET = ["--python-version", "3.12", "--platform", "manylinux_2_28_x86_64"]


def build_gpu() -> Path:
    lock = WORK / "pylock.gpu.toml"
    if not lock.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        requirements = WORK / "gpu-requirements.in"
        requirements.write_text("".join(f"{name}\n" for name in GPU_STACK))
        cmd = [uv(), "pip", "compile", "--quiet", "--format", "pylock.toml", "--python-version", "3.12",
               "--python-platform", "x86_64-manylinux_2_28", "-o", str(lock), str(requirements)]  # fmt: skip
        print("  $", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
    return lock


def ab(other: Path, rounds: int) -> None:
    """``wheels --lock`` of the GPU stack, cold, this checkout against ``other``, interleaved."""
    lock = build_gpu()
    by_lock = ["--lock", str(lock), *GPU_TARGET]
    legs: dict[str, list[Sample]] = {"this": [], "other": []}
    roots = {"this": REPO, "other": other.resolve()}
    scratch = Path(tempfile.mkdtemp(prefix="wd-bench-ab-"))
    try:
        for round_ in range(rounds):
            order = ("this", "other") if round_ % 2 == 0 else ("other", "this")
            for leg in order:
                legs[leg].append(wheeldoctor(by_lock, scratch / f"{leg}-{round_}", roots[leg]))
            print(f"round {round_ + 1}/{rounds}: " + ", ".join(
                f"{leg} {legs[leg][-1].wall:.2f} s ({legs[leg][-1].cpu:.2f} s CPU)" for leg in legs))  # fmt: skip
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"\n{len(legs['this'][0].report['wheels'])} wheels; {os.cpu_count()} CPUs; {rounds} rounds, cold")
    for leg, samples in legs.items():
        fetched = samples[0].report["fetched"]
        print(f"{leg + ' (' + str(roots[leg]) + ')':<40} wall {statistics.median(s.wall for s in samples):.2f} s, "
              f"CPU {statistics.median(s.cpu for s in samples):.2f} s, {size(fetched['bytes'])} in "
              f"{fetched['requests']} requests, exit {samples[0].rc}")  # fmt: skip
    wall = statistics.median(s.wall for s in legs["this"]) / statistics.median(s.wall for s in legs["other"])
    cpu = statistics.median(s.cpu for s in legs["this"]) / statistics.median(s.cpu for s in legs["other"])
    print(f"this / other: wall {wall:.2f}, CPU {cpu:.2f}")
    for hook in legs["this"][0].report.get("startup_hooks", []):
        finding = hook["finding"]["code"] if hook["finding"] else None
        print(f"hook: {hook['path']}: known {hook['known']!r}, executes {hook['executes']}, finding {finding}")


def download(wheels: list[str], into: Path) -> float:
    """``pip download`` of exactly these wheels (URL and sha256), timed; ``into`` is made afresh."""
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    requirements = into.parent / "download.txt"
    requirements.write_text("".join(wheels))
    # No --platform: pip's does not accept the older manylinux tags the lock selected, and this
    # machine (CPython 3.11, glibc 2.36, x86_64) takes every one of these wheels as it is.
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-cache-dir",
           "--require-hashes", "-d", str(into), "-r", str(requirements)]  # fmt: skip
    # No pip.conf and no find-links: a constraint, a local index or a wheelhouse there would change the leg.
    env = {k: v for k, v in os.environ.items() if k != "PIP_FIND_LINKS"} | {"PIP_CONFIG_FILE": os.devnull}
    start = time.perf_counter()
    subprocess.run(cmd, check=True, env=env)
    return time.perf_counter() - start


def clashes(report: dict[str, Any]) -> tuple[object, ...]:
    """What a ``wheels`` report concludes, without where the wheels came from."""
    return (report["healthy"], report["clashes"], report["overwrites"], report["clash_pairs"])


def size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return f"{n} B"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--download-rounds", type=int, default=1)
    parser.add_argument("--ab", type=Path, metavar="OTHER", help="compare with another checkout on the GPU stack")
    args = parser.parse_args()
    if args.ab is not None:
        ab(args.ab, args.rounds)
        return
    lock = build()
    load_before = os.getloadavg()[0]
    by_lock = ["--lock", str(lock), *TARGET]
    scratch = Path(tempfile.mkdtemp(prefix="wd-bench-preflight-"))
    try:
        warm = scratch / "warm"
        wheeldoctor(by_lock, warm)  # fills the warm cache, outside the measured rounds
        cold: list[Sample] = []
        hot: list[Sample] = []
        for round_ in range(args.rounds):
            cold.append(wheeldoctor(by_lock, scratch / f"cold-{round_}"))
            hot.append(wheeldoctor(by_lock, warm))
            print(f"round {round_ + 1}/{args.rounds}: lock cold {cold[-1].wall:.2f} s, warm {hot[-1].wall:.2f} s")
        wheels = selected(cold[0].report)
        into = WORK / "wheels"
        downloads = []
        for round_ in range(args.download_rounds):
            downloads.append(download(wheels, into))
            print(f"download {round_ + 1}/{args.download_rounds}: {downloads[-1]:.1f} s", flush=True)
        files = sorted(str(p) for p in into.glob("*.whl"))
        local: list[Sample] = []
        for round_ in range(args.rounds):
            local.append(wheeldoctor(files, scratch / f"local-{round_}"))
            print(f"round {round_ + 1}/{args.rounds}: wheels *.whl {local[-1].wall:.2f} s")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    fetched = cold[0].report["fetched"]
    downloaded = sum(os.path.getsize(f) for f in files)
    cold_s = statistics.median(s.wall for s in cold)
    warm_s = statistics.median(s.wall for s in hot)
    download_s = statistics.median(downloads)
    local_s = statistics.median(s.wall for s in local)
    baseline = download_s + local_s
    print(f"\n{len(wheels)} wheels selected, {size(fetched['wheels_size'])} of wheels; {os.cpu_count()} CPUs; "
          f"{args.rounds} rounds, download {args.download_rounds} round(s)")  # fmt: skip
    print(f"{'leg':<24} {'median':>8} {'best':>8}  bytes")
    print(f"{'wheels --lock, cold':<24} {cold_s:>7.2f}s {min(s.wall for s in cold):>7.2f}s  "
          f"{size(fetched['bytes'])} in {fetched['requests']} requests "
          f"({100 * fetched['bytes'] / fetched['wheels_size']:.2f}%)")  # fmt: skip
    print(f"{'wheels --lock, warm':<24} {warm_s:>7.2f}s {min(s.wall for s in hot):>7.2f}s  "
          f"{size(hot[0].report['fetched']['bytes'])} in {hot[0].report['fetched']['requests']} requests")  # fmt: skip
    print(f"{'pip download':<24} {download_s:>7.2f}s {min(downloads):>7.2f}s  {size(downloaded)} "
          f"in {len(files)} files ({downloaded / download_s / 2**20:.0f} MiB/s)")  # fmt: skip
    print(f"{'wheels *.whl':<24} {local_s:>7.2f}s {min(s.wall for s in local):>7.2f}s")
    print(f"{'download + wheels *.whl':<24} {baseline:>7.2f}s")
    print(f"cold: {baseline / cold_s:.0f}x faster, {100 * fetched['bytes'] / downloaded:.2f}% of the bytes; "
          f"warm: {baseline / warm_s:.0f}x faster")  # fmt: skip
    same = clashes(cold[0].report) == clashes(local[0].report)
    print(f"reports: exit {cold[0].rc} (lock) and {local[0].rc} (wheels); "
          f"clashes, overwrites and pairs {'the same' if same else 'DIFFER'}: {clashes(cold[0].report)}")  # fmt: skip
    if not same:
        print(f"wheels *.whl: {clashes(local[0].report)}")

    print(f"load average (1 min): {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()

"""Benchmark: wheeldoctor's verification against the vLLM workaround it replaces.

Builds its environments from real PyPI wheels under ``bench/.work/`` (reused between runs):

* ``cu13``: a venv holding only ``nvidia-cutlass-dsl-libs-cu13`` (the wheel vLLM checks);
* ``big``: a venv with about a hundred real distributions (tens of thousands of files).

Then measures, side by side in one run, every figure as a new process (best and median of
``--repeat`` runs, interleaved so that background load hits all of them alike):

1. the gate on the cu13 wheel: the seed's ``_is_libs_cu13_install_intact`` against
   ``wheeldoctor.is_intact`` cold (empty cache) and warm (cache filled), timed inside the
   child from before its first import, with the child's peak RSS over a bare interpreter;
2. the whole big environment: the seed's loop stretched to every distribution against
   ``wheeldoctor check --all --no-cache`` (and with a warm cache), as whole processes,
   with the CPU time of each process tree (how much work, however it was spread);
3. the floor of each: SHA-256 throughput measured here, one core and all cores at once;
   floor = max(biggest file / one-core rate, total bytes / all-core rate); and, for the
   whole environment, the measured floor: bare forked processes reading and hashing its
   recorded files from the page cache, biggest first;
4. where the whole-environment time goes, and small files hashed by threads vs processes.

Run from the repository root with the dev venv: ``.venv/bin/python bench/bench_verify.py``
(needs network for the first run; ``--repeat 7`` for steadier figures).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "bench" / ".work"
CU13 = "nvidia-cutlass-dsl-libs-cu13"
CU13_SPEC = "nvidia-cutlass-dsl-libs-cu13==4.5.*"
#: A large real environment: uv resolves these to about a hundred distributions.
BIG = [
    *("boto3", "awscli", "numpy", "pandas", "scipy", "sympy", "networkx", "jinja2", "rich", "pygments"),
    *("pytest", "hypothesis", "setuptools", "matplotlib", "scikit-learn", "requests", "httpx", "pydantic"),
    *("sqlalchemy", "flask", "django", "fastapi", "openpyxl", "lxml", "pillow", "black", "mypy", "ipython"),
    "sphinx",
]

# The seed (vLLM PR #43427), verbatim but for pybase64 -> base64 and the name as a parameter.
SEED = r"""
import hashlib
import importlib.metadata
import base64


def _is_intact(name):
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    files = dist.files
    if not files:
        return False
    for pkg_path in files:
        file_hash = pkg_path.hash
        if file_hash is None or not file_hash.value or file_hash.mode != "sha256":
            continue
        try:
            with open(pkg_path.locate(), "rb") as f:
                digest = hashlib.sha256(f.read()).digest()
        except OSError:
            return False
        actual = base64.urlsafe_b64encode(digest).decode().rstrip("=")
        if actual != file_hash.value:
            return False
    return True
"""

# Every child reports its peak RSS on exit. VmHWM, not ru_maxrss: Linux carries the
# parent's high-water mark across fork and exec into ru_maxrss, VmHWM starts afresh.
_PEAK = r"""
import atexit as _atexit, sys as _sys
def _peak():
    try:
        with open("/proc/self/status") as f:
            kb = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        import resource
        kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    _sys.stderr.write("\n@peak %d\n" % kb)
_atexit.register(_peak)
"""
_CLOCK = "import time\n_t0 = time.perf_counter()\n"
_REPORT = "_t = time.perf_counter() - _t0\nimport json\nprint(json.dumps({'seconds': _t, 'answer': _answer}))\n"
CHILD_BARE = _PEAK + _CLOCK + "_answer = None\n" + _REPORT


def child_seed(name: str) -> str:
    return _PEAK + _CLOCK + SEED + f"_answer = _is_intact({name!r})\n" + _REPORT


def child_ours(name: str) -> str:
    return _PEAK + _CLOCK + f"import wheeldoctor\n_answer = wheeldoctor.is_intact({name!r})\n" + _REPORT


def child_ours_imported(name: str) -> str:
    """The same call with wheeldoctor's modules imported before the clock starts: the check alone."""
    return (
        _PEAK
        + "import wheeldoctor.engine.cache, wheeldoctor.gate.quick\n"
        + _CLOCK
        + f"import wheeldoctor\n_answer = wheeldoctor.is_intact({name!r})\n"
        + _REPORT
    )


SEED_LOOP = (
    _PEAK
    + SEED
    + "names = sorted({d.metadata['Name'] for d in importlib.metadata.distributions()})\n"
    + "raise SystemExit(0 if all([_is_intact(n) for n in names]) else 1)\n"
)
CLI = _PEAK + "import runpy, sys\nsys.argv[0] = 'wheeldoctor'\nrunpy.run_module('wheeldoctor', run_name='__main__')\n"


# --------------------------------------------------------------------------
# environments
# --------------------------------------------------------------------------


def uv() -> str:
    from uv import find_uv_bin

    return str(find_uv_bin())


def run(cmd: Sequence[str | Path], **kwargs: object) -> None:
    print("  $", " ".join(str(c) for c in cmd), flush=True)
    env = {**os.environ, "UV_LINK_MODE": "copy", "UV_NO_PROGRESS": "1"}
    subprocess.run([str(c) for c in cmd], check=True, env=env, **kwargs)  # type: ignore[call-overload]


def venv(path: Path, *install: str) -> Path:
    python = path / "bin" / "python"
    if not (path / ".complete").exists():
        shutil.rmtree(path, ignore_errors=True)
        run([uv(), "venv", "--quiet", "--python", sys.executable, path])
        run([uv(), "pip", "install", "--quiet", "--python", python, *install])
        (path / ".complete").write_text("")
    return python


def build() -> tuple[Path, Path]:
    WORK.mkdir(parents=True, exist_ok=True)
    wheels = WORK / "wheels"
    if not list(wheels.glob("nvidia_cutlass_dsl_libs_cu13-*.whl")):
        run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", CU13_SPEC, "-d", wheels])
    wheel = sorted(wheels.glob("nvidia_cutlass_dsl_libs_cu13-*.whl"))[-1]
    cu13 = venv(WORK / "cu13", "--no-deps", str(wheel))
    big = venv(WORK / "big", *BIG)
    # wheeldoctor runs from this checkout (PYTHONPATH): give it bytecode, as an install would.
    subprocess.run(
        [str(cu13), "-m", "compileall", "-q", str(REPO / "wheeldoctor")], check=True, stdout=subprocess.DEVNULL
    )
    return cu13, big


def site_packages(python: Path) -> str:
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout.strip()


# --------------------------------------------------------------------------
# measuring
# --------------------------------------------------------------------------


class Sample:
    """One child process: wall time, the time it reported, peak RSS (KiB), answer, and CPU time.

    CPU time is user + system of the child and everything it waited for (its probe, its
    workers): what the whole process tree cost, however many cores it spread over.
    """

    def __init__(self, wall: float, inner: float | None, rss_kb: int, answer: object, rc: int, cpu: float) -> None:
        self.wall, self.inner, self.rss_kb, self.answer, self.rc, self.cpu = wall, inner, rss_kb, answer, rc, cpu


def child(cmd: Sequence[str | Path], env: dict[str, str] | None = None) -> Sample:
    """Run one process to its end; it reports its own peak RSS (see ``_PEAK``)."""
    full = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    full.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.Popen([str(c) for c in cmd], stdout=out, stderr=err, env=full)
        proc.wait()
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        out.seek(0)
        text = out.read().decode()
        err.seek(0)
        errors = err.read().decode()
    peak = next((int(line[6:]) for line in reversed(errors.splitlines()) if line.startswith("@peak ")), 0)
    inner, answer = None, None
    try:
        report = json.loads(text.strip().splitlines()[-1])
        inner, answer = report.get("seconds"), report.get("answer")
    except (ValueError, IndexError, AttributeError):
        pass
    return Sample(wall, inner, peak, answer, proc.returncode, cpu)


def interleave(runs: dict[str, object], repeat: int) -> dict[str, list[Sample]]:
    """Run every named job ``repeat`` times, round-robin; a job is a zero-argument callable."""
    samples: dict[str, list[Sample]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, job in runs.items():
            samples[name].append(job())  # type: ignore[operator]
    return samples


def sha256_rates(jobs: int) -> tuple[float, float]:
    """Bytes per second of SHA-256: one core, and ``jobs`` threads together (best of three)."""
    block = os.urandom(64 << 20)
    one = 0.0
    for _ in range(3):
        start = time.perf_counter()
        hashlib.sha256(block).digest()
        one = max(one, len(block) / (time.perf_counter() - start))
    together = 0.0
    for _ in range(3):
        threads = [threading.Thread(target=lambda: hashlib.sha256(block).digest()) for _ in range(jobs)]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        together = max(together, jobs * len(block) / (time.perf_counter() - start))
    return one, together


def recorded_files(python: Path, names: Sequence[str] | None = None) -> list[tuple[str, int]]:
    """(absolute path, size) of every regular file the active distributions record."""
    from packaging.utils import canonicalize_name

    from wheeldoctor.judge.claims import resolve
    from wheeldoctor.where.target import Target, load_target

    env = load_target(Target(python=str(python)))
    wanted = None if names is None else {str(canonicalize_name(n)) for n in names}
    files: dict[str, int] = {}
    for dist in env.active():
        if wanted is None or dist.name in wanted:
            for claim in resolve(dist)[0]:
                with contextlib.suppress(OSError):
                    files[claim.path] = os.stat(claim.path).st_size
    return list(files.items())


def floor(sizes: Sequence[int], one: float, together: float) -> float:
    return max(max(sizes, default=0) / one, sum(sizes) / together)


def file_hash_time(path: str, repeat: int = 5) -> float:
    """Best time to read ``path`` from the page cache and hash it, alone, as ``sha256sum`` would."""
    buffer = memoryview(bytearray(4 << 20))
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        hasher = hashlib.sha256()
        with open(path, "rb", buffering=0) as f:
            while n := f.readinto(buffer):
                hasher.update(buffer[:n])
        best = min(best, time.perf_counter() - start)
    return best


def _hash_paths(paths: Sequence[str]) -> int:
    buffer = memoryview(bytearray(1 << 20))
    for path in paths:
        hasher = hashlib.sha256()
        with open(path, "rb", buffering=0) as f:
            while n := f.readinto(buffer):
                hasher.update(buffer[:n])
    return len(paths)


def hashed_by_processes(files: Sequence[tuple[str, int]], jobs: int, repeat: int = 3) -> float:
    """Best time for ``jobs`` forked processes to read and hash every file from the page cache.

    Biggest first, every file of 1 MiB or more alone, the rest in batches: this host's
    practical floor for the bytes alone, with no interpreter start-up, RECORD or judging.
    Where cores share memory bandwidth or a clock budget, it is well above the computed one.
    """
    import multiprocessing

    big = [path for path, size in sorted(files, key=lambda f: -f[1]) if size >= 1 << 20]
    small = [path for path, size in files if size < 1 << 20]
    tasks = [[path] for path in big] + [small[i : i + 256] for i in range(0, len(small), 256)]
    best = float("inf")
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        for _ in range(repeat):
            start = time.perf_counter()
            for _ in pool.imap_unordered(_hash_paths, tasks):
                pass
            best = min(best, time.perf_counter() - start)
    return best


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:9.1f} ms"


def summary(samples: list[Sample], inner: bool = True) -> tuple[float, float]:
    values = [(s.inner if inner else s.wall) or 0.0 for s in samples]
    return min(values), statistics.median(values)


# --------------------------------------------------------------------------
# the report
# --------------------------------------------------------------------------


def table(
    samples: dict[str, list[Sample]], seed: str, floor_s: float, base_kb: int, inner: bool, width: int = 34
) -> None:
    """Best and median time, ratio to the seed and to the floor, peak RSS over a bare interpreter."""
    seed_median = summary(samples[seed], inner)[1]
    header = f"{'':{width}}{'best':>12}{'median':>12}{'vs seed':>9}{'/ floor':>9}{'peak RSS':>11}{'extra':>9}"
    print(f"{header}{'cpu (median)':>15}  answer")
    for name, runs in samples.items():
        best, median = summary(runs, inner)
        peak = max(s.rss_kb for s in runs)
        answers = sorted({str(s.answer if inner else s.rc) for s in runs})
        cpu = statistics.median(s.cpu for s in runs)
        print(
            f"{name:{width}}{ms(best)}{ms(median)}{seed_median / median:8.1f}x{median / floor_s:8.2f}x"
            f"{peak / 1024:8.1f} MB{(peak - base_kb) / 1024:6.1f} MB{ms(cpu)}  {' '.join(answers)}"
        )
    print(f"{'floor':{width}}{ms(floor_s)}")


def bench_gate(python: Path, name: str, repeat: int, one: float, together: float) -> None:
    print(f"\n== gate: is_intact({name!r}), {python} ==")
    files = recorded_files(python, [name])
    if not files:
        print(f"{name} is not installed there (or records no file): skipped")
        return
    sizes = [s for _, s in files]
    biggest = max(files, key=lambda item: item[1])[0]
    alone = file_hash_time(biggest)
    print(f"{len(files)} files, {sum(sizes) / 1e6:.1f} MB, biggest {max(sizes) / 1e6:.1f} MB")
    floors(sizes, one, together)
    warm_dir = Path(tempfile.mkdtemp(prefix="wd-warm-"))
    ours = child_ours(name)
    child([python, "-c", ours], {"WHEELDOCTOR_CACHE_DIR": str(warm_dir)})  # fill it

    def cold(code: str) -> Sample:
        empty = tempfile.mkdtemp(prefix="wd-cold-")
        try:
            return child([python, "-c", code], {"WHEELDOCTOR_CACHE_DIR": empty})
        finally:
            shutil.rmtree(empty)

    seed = "seed (vLLM, pybase64 -> base64)"
    samples = interleave(
        {
            seed: lambda: child([python, "-c", child_seed(name)]),
            "ours, cold (empty cache)": lambda: cold(ours),
            "ours, no cache": lambda: child([python, "-c", ours], {"WHEELDOCTOR_NO_CACHE": "1"}),
            "ours, cold, imports not timed": lambda: cold(child_ours_imported(name)),
            "ours, warm (new process)": lambda: child([python, "-c", ours], {"WHEELDOCTOR_CACHE_DIR": str(warm_dir)}),
            "bare interpreter (python -c pass)": lambda: child([python, "-c", CHILD_BARE]),
        },
        repeat,
    )
    shutil.rmtree(warm_dir)
    base = min(s.rss_kb for s in samples["bare interpreter (python -c pass)"])
    table(samples, seed, floor(sizes, one, together), base, inner=True)
    print(f"(new processes; time inside each, from before its first import; bare interpreter {base / 1024:.1f} MB)")
    cold_median = summary(samples["ours, cold (empty cache)"])[1]
    print(
        f"the biggest file alone, read from the page cache and hashed (as sha256sum would): {ms(alone)}; "
        f"ours cold is {cold_median / alone:.2f}x that"
    )
    bare_wall = statistics.median(s.wall for s in samples["bare interpreter (python -c pass)"])
    warm_wall = statistics.median(s.wall for s in samples["ours, warm (new process)"])
    print(f"warm, whole process above a bare `python -c pass`: {ms(warm_wall - bare_wall)} (wall, medians)")


def floors(sizes: Sequence[int], one: float, together: float) -> None:
    """Print both floors: the biggest file on one core, and every byte over every core."""
    print(
        f"floors: the biggest file at the one-core rate {ms(max(sizes, default=0) / one)}; "
        f"total bytes over all cores {ms(sum(sizes) / together)}"
    )


def bench_environment(
    python: Path, repeat: int, one: float, together: float, sweep: Sequence[int], details: bool
) -> None:
    print(f"\n== whole environment, {python} ==")
    files = recorded_files(python)
    sizes = [s for _, s in files]
    env_floor = floor(sizes, one, together)
    small = sum(1 for s in sizes if s < 1 << 16)
    dists = count_distributions(python)
    print(
        f"{dists} distributions, {len(files)} recorded files ({small} under 64 KiB), "
        f"{sum(sizes) / 1e6:.1f} MB, biggest {max(sizes) / 1e6:.1f} MB"
    )
    floors(sizes, one, together)
    from wheeldoctor.engine.executors import default_jobs

    jobs = max(sweep, default=0) or default_jobs()  # what the check itself uses by default
    print(
        f"measured floor: {jobs} bare processes read and hash every recorded file, biggest first, in "
        f"{ms(hashed_by_processes(files, jobs)).strip()} (no start-up, no RECORD, nothing judged)"
    )
    ours: list[str | Path] = [sys.executable, "-c", CLI, "check", "--all", "--json", "--python", python]
    warm_dir = Path(tempfile.mkdtemp(prefix="wd-warm-"))
    child(ours, {"WHEELDOCTOR_CACHE_DIR": str(warm_dir)})  # fill it
    bare = [child([sys.executable, "-c", CHILD_BARE]) for _ in range(3)]
    seed = "seed loop over every distribution"
    runs: dict[str, object] = {
        seed: lambda: child([python, "-c", SEED_LOOP]),
        "ours: check --all --no-cache": lambda: child([*ours, "--no-cache"]),
    }
    for jobs in sweep:
        command = [*ours, "--no-cache", "--jobs", str(jobs)]
        runs[f"ours: ... --no-cache --jobs {jobs}"] = lambda command=command: child(command)
    runs["ours: check --all, warm cache"] = lambda: child(ours, {"WHEELDOCTOR_CACHE_DIR": str(warm_dir)})
    runs["ours: --help (start-up alone)"] = lambda: child([sys.executable, "-c", CLI, "--help"])
    samples = interleave(runs, repeat)
    shutil.rmtree(warm_dir)
    table(samples, seed, env_floor, min(s.rss_kb for s in bare), inner=False)
    print("(whole processes, wall time from spawn to exit; cpu: user + system of the whole process tree;")
    print(" the answer column is the exit code; peak RSS is the parent's own)")
    if len(sweep) > 1:
        first = statistics.median(s.wall for s in samples[f"ours: ... --no-cache --jobs {sweep[0]}"])
        for jobs in sweep[1:]:
            median = statistics.median(s.wall for s in samples[f"ours: ... --no-cache --jobs {jobs}"])
            print(f"--jobs {sweep[0]} -> --jobs {jobs}: {first / median:.1f}x")
    peak = max(s.rss_kb for s in samples["ours: check --all --no-cache"])
    start = max(s.rss_kb for s in samples["ours: --help (start-up alone)"])
    print(
        f"peak RSS of check --all --no-cache: {peak / 1024:.1f} MB, {(peak - start) / 1024:.1f} MB above start-up "
        f"({(peak - start) * 1024 / max(len(files), 1):.0f} bytes per recorded file)"
    )
    if details:
        breakdown(python, files, default_jobs())


def count_distributions(python: Path) -> int:
    from wheeldoctor.where.target import Target, load_target

    return len(load_target(Target(python=str(python)), with_records=False).active())


def breakdown(big: Path, files: list[tuple[str, int]], jobs: int) -> None:
    """Where the no-cache time goes, in this process: start-up, loading, hashing, system calls."""
    from wheeldoctor.commands.check import CheckRequest, run_check
    from wheeldoctor.engine.executors import examine_all
    from wheeldoctor.model.files import HashRequest
    from wheeldoctor.where.target import Target, load_target

    def timed(job: object) -> float:
        start = time.perf_counter()
        job()  # type: ignore[operator]
        return time.perf_counter() - start

    loaded = timed(lambda: load_target(Target(python=str(big))))
    env = load_target(Target(python=str(big)))
    checked = timed(lambda: run_check(env, CheckRequest(processes=True)))
    requests = [HashRequest(path, frozenset({"sha256"})) for path, _ in files]
    threads_1 = timed(lambda: examine_all(requests, jobs=1))
    threads_n = timed(lambda: examine_all(requests, jobs=jobs))
    paths = [p for p, _ in files]
    syscalls = timed(lambda: _syscalls_only(paths))
    syscalls_n = timed(lambda: _forked([lambda part=part: _syscalls_only(paths[part::jobs]) for part in range(jobs)]))
    print("where it goes (in this process, best of one):")
    print(f"  load the environment (probe, {len(env.distributions)} RECORDs and METADATA) {ms(loaded)}")
    print(f"  run_check: resolve, plan, hash ({jobs} processes), judge, clashes   {ms(checked)}")
    print(f"  the exact path alone (examine_all): 1 thread {ms(threads_1)}, {jobs} threads {ms(threads_n)}")
    print(f"  system calls alone, no hashing (stat open fstat read fstat close): 1 process {ms(syscalls)}, ", end="")
    print(f"{jobs} processes {ms(syscalls_n)}")


def _forked(jobs: Sequence[object]) -> None:
    """Run each zero-argument callable in its own forked process; wait for all."""
    pids = []
    for job in jobs:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            try:
                job()  # type: ignore[operator]
            finally:
                os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)


def _syscalls_only(paths: Sequence[str]) -> None:
    flags = os.O_RDONLY | os.O_CLOEXEC
    for path in paths:
        os.stat(path)
        fd = os.open(path, flags)
        os.fstat(fd)
        while os.read(fd, 1 << 20):
            pass
        os.fstat(fd)
        os.close(fd)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-environment", action="store_true", help="only the gate")
    parser.add_argument("--skip-gate", action="store_true", help="only the whole environment")
    parser.add_argument(
        "--python", type=Path, help="bench this interpreter's own environment instead of building one (no network)"
    )
    parser.add_argument("--gate", metavar="NAME", help=f"the distribution the gate checks (default {CU13}, built)")
    parser.add_argument(
        "--jobs", default="", metavar="N,N,...", help="also time check --all --no-cache --jobs N for each N"
    )
    parser.add_argument("--details", action="store_true", help="where the time goes, measured in this process")
    args = parser.parse_args()
    from wheeldoctor.engine.executors import default_jobs

    jobs = default_jobs()
    sweep = [int(n) for n in args.jobs.split(",") if n.strip()]
    if args.python is not None:
        gate_python = env_python = args.python
        gate_name = args.gate
    else:
        print("building environments under", WORK)
        gate_python, env_python = build()
        gate_name = args.gate or CU13
    one, together = sha256_rates(jobs)
    print(
        f"\nSHA-256: {one / 1e9:.2f} GB/s on one core, {together / 1e9:.2f} GB/s on {jobs} threads together "
        f"(effective cores {together / one:.2f}); load average {os.getloadavg()[0]:.2f}"
    )
    if not args.skip_gate and gate_name:
        bench_gate(gate_python, gate_name, args.repeat, one, together)
    if not args.skip_environment:
        bench_environment(env_python, args.repeat, one, together, sweep, args.details)


if __name__ == "__main__":
    main()

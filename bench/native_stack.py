"""Native libraries of a real stack: what it needs from where, every finding, and what the section costs.

For the GPU host (torch, JAX, CuPy, the nvidia wheels), or any interpreter, offline::

    python3 bench/native_stack.py --python python3 --repeat 15

1. ``check --all --json`` of this checkout on ``--python``: the native section summed up,
   *what the stack needs from where* (the environment's own wheels, by distribution; the
   system loader path; the driver; found nowhere), then every native finding in full.
2. Timings, interleaved round by round: ``check --all`` with a warm cache and with
   ``--no-cache``, each with and without the native section (the same code, the section
   switched off in the process by replacing its entry point), as whole processes;
   medians and bests of wall time and of CPU time (user+sys of the process and its workers).
   The target: warm within 10% of the check without the section, ``--no-cache`` within 20%.
3. The scan alone, in this process: every object read and every need found, cold (first
   run) and again (the page cache warm), and how many objects, needs and candidates.

``--confirm`` asks the system's dynamic loader itself about every shared object the scan
judged (``LD_TRACE_LOADED_OBJECTS=1 ld.so PATH``, as ``ldd`` does: it maps the object and
its needs, and runs nothing of theirs) and prints where the libraries it finds nowhere differ
from the scan's, so that each finding, and each silence, can be checked against the loader.
wheeldoctor never does this; this script does it only when asked.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

#: Run wheeldoctor from this checkout; ``OFF`` first switches the native section off.
RUN = (
    "import sys; sys.path.insert(0, {repo!r}); {off}"
    "from wheeldoctor.cli import main; sys.argv[0] = 'wheeldoctor'; main()"
)
OFF = (
    "import wheeldoctor.commands.check as c; from wheeldoctor.judge.policy import Acceptances; "
    "c.native_section = lambda *a, **k: (None, Acceptances(())); "
)


def command(python: str, *extra: str, native: bool = True) -> list[str]:
    code = RUN.format(repo=str(REPO), off="" if native else OFF)
    return [sys.executable, "-c", code, "check", "--all", "--python", python, *extra]


def run(cmd: list[str], cache_dir: str) -> tuple[float, float, bytes]:
    """Wall seconds, CPU seconds (the process and its children) and stdout of one run."""
    env = dict(os.environ, WHEELDOCTOR_CACHE_DIR=cache_dir)
    env.pop("PYTHONPATH", None)  # the probe would pass it on to the environment read
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: byte-code written once, then used
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd[3:])} could not run (exit {done.returncode})")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def where_from(document: dict[str, Any]) -> None:
    """The summary: each provider, its libraries and how many objects need each."""
    native = document.get("native")
    if native is None:
        raise SystemExit("the document has no native section")
    print(
        f"interpreter: {native['machine']}; {native['objects']} shared objects of it, "
        f"{native['extension_modules']} extension modules, {native['loaded_on_import']} loaded on import, "
        f"{native['foreign']} for another machine; ld.so.cache: {native['ld_so_cache']}"
        + (f" ({native['ld_so_cache_problem']})" if native["ld_so_cache_problem"] else "")
    )
    by: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    for source in native["sources"]:
        group = source["owner"] or (os.path.dirname(os.path.normpath(source["path"])) if source["path"] else "-")
        by[source["provider"]][group][source["library"]] = (
            by[source["provider"]][group].get(source["library"], 0) + source["needed_by"]
        )
    titles = {
        "environment": "the environment's own wheels (found on the object's RPATH/RUNPATH)",
        "loaded-first": "the environment's wheels, once loaded first (found by SONAME)",
        "system": "the system loader path (ld.so.cache, default directories)",
        "driver": "the GPU driver (found nowhere here)",
        "unresolved": "found nowhere",
    }
    print("\n## What the stack needs from where\n")
    print("| from | provider | libraries (objects needing each) |\n| --- | --- | --- |")
    for provider, title in titles.items():
        for group in sorted(by.get(provider, {})):
            libraries = by[provider][group]
            listed = ", ".join(f"{name} ({n})" for name, n in sorted(libraries.items()))
            print(f"| {title} | {group} | {listed} |")
    print(f"\n## Findings ({len(native['findings'])})\n")
    for found in native["findings"]:
        finding = found["finding"]
        subject = f"{found['subject']} {found['version']}" if found["version"] else found["subject"]
        path = f"{finding['path']} " if finding["path"] else ""
        print(f"- {subject}: {finding['code']}: {path}{finding['message']}")


def _loader() -> str | None:
    found = sorted(glob.glob("/lib64/ld-linux-*.so.*") + glob.glob("/lib/ld-linux-*.so.*"))
    return found[0] if found else None


def _not_found(loader: str, path: str) -> set[str]:
    """What the system's loader cannot find for ``path``, asked as ldd asks it: it maps the object
    and what it needs, lists them, and runs none of it. LD_LIBRARY_PATH is left out, as wheeldoctor
    leaves it out."""
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"} | {"LD_TRACE_LOADED_OBJECTS": "1"}
    done = subprocess.run([loader, path], capture_output=True, text=True, timeout=60, check=False, env=env)
    return {line.split("=>")[0].strip() for line in done.stdout.splitlines() if "=> not found" in line}


def confirm(python: str) -> None:
    """Every object of the scan against the system's loader (see the module's doc)."""
    loader = _loader()
    if loader is None:
        print("no ld.so found to confirm with")
        return
    sys.path.insert(0, str(REPO))
    from wheeldoctor.model.native import Provider
    from wheeldoctor.where.native import scan_native
    from wheeldoctor.where.target import Target, load_target

    scan = scan_native(load_target(Target(python=python), defer_records=True))
    by_path = {o.path: o for o in scan.objects}
    missing: dict[str, set[str]] = {}

    def ours(path: str, seen: frozenset[str] = frozenset()) -> set[str]:
        """What the scan finds nowhere (or only loaded first) for ``path`` and what it loads from the environment."""
        if path in missing:
            return missing[path]
        o = by_path[path]
        found = {n.name for n in o.needs if n.provider in (Provider.UNRESOLVED, Provider.LOADED_FIRST)}
        for n in o.needs:
            child = os.path.normpath(n.path) if n.path and n.provider is Provider.ENVIRONMENT else None
            if child in by_path and child not in seen:
                found |= ours(child, seen | {path})
        missing[path] = found
        return found

    judged = [o for o in scan.objects if not o.foreign and o.elf is not None]
    differ = []
    for o in judged:
        theirs, mine = _not_found(loader, o.path), ours(o.path)
        if theirs != mine:
            differ.append((o.recorded, sorted(theirs - mine), sorted(mine - theirs)))
    print(f"\n## Every object against the loader (LD_TRACE_LOADED_OBJECTS=1 {loader})\n")
    print(f"{len(judged)} objects asked; the loader and the scan differ on {len(differ)}:")
    for recorded, loader_only, scan_only in differ:
        print(f"- {recorded}: not found by the loader only: {loader_only}; by the scan only: {scan_only}")
    print("(by the scan only: found once loaded first, or a loader's RPATH the trace of one object cannot see)")


def timings(python: str, repeat: int) -> None:
    caches = {native: tempfile.mkdtemp(prefix=f"wd-native-{native}-") for native in (True, False)}
    results: dict[tuple[str, bool], list[tuple[float, float]]] = defaultdict(list)
    try:
        for native in (True, False):
            run(command(python, native=native), caches[native])  # fill its cache, write byte-code
        for round_ in range(repeat):
            for mode, extra in (("warm", ()), ("no-cache", ("--no-cache",))):
                order = (True, False) if round_ % 2 == 0 else (False, True)
                for native in order:
                    wall, cpu, _ = run(command(python, *extra, native=native), caches[native])
                    results[(mode, native)].append((wall, cpu))
    finally:
        for directory in caches.values():
            shutil.rmtree(directory, ignore_errors=True)
    print("\n## check --all, with and without the native section\n")
    print("| mode | native | wall median | wall best | CPU median | CPU best |\n| --- | --- | --- | --- | --- | --- |")
    medians: dict[tuple[str, bool], float] = {}
    for (mode, native), values in sorted(results.items(), key=lambda kv: (kv[0][0], not kv[0][1])):
        walls, cpus = [v[0] for v in values], [v[1] for v in values]
        medians[(mode, native)] = statistics.median(walls)
        print(
            f"| {mode} | {'with' if native else 'without'} | {statistics.median(walls) * 1000:.1f} ms | "
            f"{min(walls) * 1000:.1f} ms | {statistics.median(cpus) * 1000:.1f} ms | {min(cpus) * 1000:.1f} ms |"
        )
    for mode, limit in (("warm", 1.10), ("no-cache", 1.20)):
        ratio = medians[(mode, True)] / medians[(mode, False)]
        print(f"{mode}: with/without = {ratio:.3f} (target <= {limit:.2f}): {'met' if ratio <= limit else 'NOT met'}")


def scan_alone(python: str) -> None:
    sys.path.insert(0, str(REPO))
    from wheeldoctor.where.native import scan_native
    from wheeldoctor.where.target import Target, load_target

    env = load_target(Target(python=python), defer_records=True)
    print("\n## The scan alone (in this process)\n")
    for label in ("first", "again", "again"):
        start, cpu = time.perf_counter(), time.process_time()
        scan = scan_native(env)
        wall, spent = time.perf_counter() - start, time.process_time() - cpu
        needs = sum(len(o.needs) for o in scan.objects)
        counts = f"{len(scan.objects)} objects, {needs} needs"
        print(f"- {label}: {wall * 1000:.1f} ms wall, {spent * 1000:.1f} ms CPU; {counts}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the environment to read (default: this one)")
    parser.add_argument("--repeat", type=int, default=11, help="rounds of timings (0: none)")
    parser.add_argument("--confirm", action="store_true", help="ask the system's loader about every object")
    args = parser.parse_args()
    cache = tempfile.mkdtemp(prefix="wd-native-doc-")
    try:
        _, _, out = run(command(args.python, "--json"), cache)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    document = json.loads(out)
    where_from(document)
    if args.confirm:
        confirm(args.python)
    scan_alone(args.python)
    if args.repeat:
        timings(args.python, args.repeat)


if __name__ == "__main__":
    main()

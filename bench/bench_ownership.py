"""Benchmark: the ownership map over a large environment, against importlib.metadata.

Builds a synthetic site directory of N distributions (dist-infos with RECORDs only; the
map needs no file contents), some pairs sharing paths, then times in one run:

* wheeldoctor: read every RECORD, resolve every row, group by real path, find clashes;
* baseline: the loop a user would write with importlib.metadata
  (``for dist in distributions(): for f in dist.files: owners[f.locate()]...``).

Run: python bench/bench_ownership.py [--rows-per-dist 300] [--sizes 250 500 1000]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import tempfile
import time
from collections import defaultdict
from pathlib import Path


def build_site(site: Path, dists: int, rows_per_dist: int) -> int:
    """Write ``dists`` dist-infos; every tenth shares 20 paths with its neighbour."""
    total = 0
    for i in range(dists):
        name = f"bench_dist_{i:05d}"
        info = site / f"{name}-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        lines = []
        for j in range(rows_per_dist):
            owner = i - 1 if (i % 10 == 1 and j < 20) else i  # shared with the previous dist
            digest = base64.urlsafe_b64encode(hashlib.sha256(f"{i}-{j}".encode()).digest()).rstrip(b"=").decode()
            lines.append(f"bench_pkg_{owner:05d}/mod_{j:04d}.py,sha256={digest},{100 + j}")
        lines.append(f"{name}-1.0.dist-info/RECORD,,")
        (info / "RECORD").write_text("\n".join(lines) + "\n")
        total += len(lines)
    return total


def ours(site: Path) -> tuple[float, int, int]:
    from wheeldoctor.judge.claims import resolve
    from wheeldoctor.judge.clash import find_clashes
    from wheeldoctor.where.environment import load_environment

    start = time.perf_counter()
    env = load_environment("bench", [str(site)], [str(site)])
    owners: dict[str, list[object]] = {}
    for dist in env.active():
        for claim in resolve(dist)[0]:
            owners.setdefault(claim.path, []).append(claim)
    clashes = find_clashes(owners, {})  # type: ignore[arg-type]
    return time.perf_counter() - start, len(owners), len(clashes)


def baseline(site: Path) -> tuple[float, int, int]:
    from importlib.metadata import distributions

    start = time.perf_counter()
    owners: dict[str, list[str]] = defaultdict(list)
    for dist in distributions(path=[str(site)]):
        for file in dist.files or ():
            owners[os.path.normpath(file.locate())].append(dist.metadata["Name"])
    clashes = sum(1 for names in owners.values() if len(set(names)) > 1)
    return time.perf_counter() - start, len(owners), clashes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows-per-dist", type=int, default=300)
    parser.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000])
    args = parser.parse_args()
    print(f"{'dists':>6} {'rows':>8} | {'wheeldoctor':>11} {'rows/s':>10} | {'importlib':>9} | {'ratio':>5} | clashes")
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            site = Path(tmp) / "site-packages"
            rows = build_site(site, size, args.rows_per_dist)
            t_ours, paths_ours, clashes_ours = min((ours(site) for _ in range(3)), key=lambda r: r[0])
            t_base, paths_base, clashes_base = min((baseline(site) for _ in range(3)), key=lambda r: r[0])
            assert paths_ours == paths_base - size, (paths_ours, paths_base)  # they also count RECORD rows
            assert clashes_ours == clashes_base
            print(
                f"{size:>6} {rows:>8} | {t_ours:>10.3f}s {rows / t_ours:>10,.0f} | {t_base:>8.3f}s | "
                f"{t_base / t_ours:>4.1f}x | {clashes_ours}"
            )


if __name__ == "__main__":
    main()

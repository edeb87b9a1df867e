"""Take a wheeldoctor snapshot on every alive node of a Ray cluster and gather them here.

    python ray_snapshots.py --address auto --out snapshots/ [-- --python /path/to/env/bin/python]
    wheeldoctor diff snapshots/*.json

One task per alive node, pinned there with a NodeAffinitySchedulingStrategy (not soft: a
node that cannot run it is reported, never silently replaced by another). Each task runs
``python -m wheeldoctor snapshot`` with the interpreter Ray runs it with, that is, the
environment the cluster's jobs use, and sends the snapshot back as text. Every snapshot
that comes back is kept; a node lost on the way (gone between listing and scheduling, dead
while it ran, or not done by ``--timeout``) is named on stderr, and the exit code is 1.
Without ``--address`` a local cluster is started (``ray.init()``).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy


@ray.remote(num_cpus=0, max_retries=0)
def snapshot_here(extra: list[str]) -> dict[str, Any]:
    """Snapshot this node's environment; the text and how it went."""
    import socket

    host = socket.gethostname()
    done = subprocess.run(
        [sys.executable, "-m", "wheeldoctor", "snapshot", "--host", host, *extra],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    node = ray.get_runtime_context().get_node_id()
    return {"node": node, "host": host, "rc": done.returncode, "snapshot": done.stdout, "stderr": done.stderr[-2000:]}


def gather(nodes: Sequence[dict[str, Any]], out: str, extra: list[str], timeout: float) -> tuple[list[str], list[str]]:
    """A snapshot task on each of ``nodes`` (``ray.nodes()`` entries): the files written, and the nodes lost, why.

    Each task is waited for on its own: one that fails (its node gone, a snapshot that
    failed) is named, and the others' snapshots are still kept.
    """
    tasks = {
        snapshot_here.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=n["NodeID"], soft=False)
        ).remote(extra): n["NodeID"]
        for n in nodes
    }
    os.makedirs(out, exist_ok=True)
    written: list[str] = []
    lost: list[str] = []
    pending = list(tasks)
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        ready, pending = ray.wait(pending, num_returns=1, timeout=max(0.0, deadline - time.monotonic()))
        for ref in ready:
            try:
                result = ray.get(ref)
            except ray.exceptions.RayError as e:  # unschedulable, node died, worker crashed
                lost.append(f"node {tasks[ref]}: {type(e).__name__}: {str(e).strip().splitlines()[0][:300]}")
                continue
            if result["rc"] != 0:
                lost.append(f"node {result['node']} ({result['host']!r}): snapshot failed: {result['stderr'].strip()}")
                continue
            written.append(_keep(out, result))
    for ref in pending:
        ray.cancel(ref, force=True)
        lost.append(f"node {tasks[ref]}: no answer within {timeout:.0f} s")
    return written, lost


def _keep(out: str, result: dict[str, Any]) -> str:
    """Write one node's snapshot atomically as ``snap-HOST-NODEID.json``; its path."""
    # Host names come from the nodes: only a safe spelling of one goes into a file name.
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", result["host"])[:64].lstrip(".") or "node"
    path = os.path.join(out, f"snap-{safe}-{result['node'][:12]}.json")
    fd, temporary = tempfile.mkstemp(dir=out, prefix=".snap-")
    with os.fdopen(fd, "w", encoding="utf-8") as stream:
        stream.write(result["snapshot"])
    os.chmod(temporary, 0o644)  # mkstemp's 0600 would surprise whoever collects the files
    os.replace(temporary, path)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default=None, help="Ray cluster address (default: start a local one)")
    parser.add_argument("--out", default="snapshots", help="directory for snap-HOST-NODE.json files")
    parser.add_argument("--timeout", type=float, default=1200, help="seconds to wait for every node (default 1200)")
    parser.add_argument("extra", nargs="*", help="more wheeldoctor snapshot options, after --")
    args = parser.parse_args()

    if args.address is None:
        ray.init(include_dashboard=False, num_cpus=1, object_store_memory=80 << 20)
    else:
        ray.init(address=args.address)
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    written, lost = gather(nodes, args.out, args.extra, args.timeout)
    for path in written:
        print(path)
    for line in lost:
        print(f"lost: {line}", file=sys.stderr)
    ray.shutdown()
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())

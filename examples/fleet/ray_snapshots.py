"""Take a wheeldoctor snapshot on every alive node of a Ray cluster and gather them here.

    python ray_snapshots.py --address auto --out snapshots/
    wheeldoctor diff snapshots/*.json

One task per alive node, pinned there with a NodeAffinitySchedulingStrategy (not soft: a
node that cannot run it is reported, never silently replaced by another). Each task runs
``python -m wheeldoctor snapshot`` with the interpreter Ray runs it with, that is, the
environment the cluster's jobs use, and sends the snapshot back as text. Without
``--address`` a local cluster is started (``ray.init()``), as the tests do.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default=None, help="Ray cluster address (default: start a local one)")
    parser.add_argument("--out", default="snapshots", help="directory for snap-HOST-NODE.json files")
    parser.add_argument("extra", nargs="*", help="more wheeldoctor snapshot options, after --")
    args = parser.parse_args()

    if args.address is None:
        ray.init(include_dashboard=False, num_cpus=1, object_store_memory=80 << 20)
    else:
        ray.init(address=args.address)
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    tasks = [
        snapshot_here.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=n["NodeID"], soft=False)
        ).remote(args.extra)
        for n in nodes
    ]
    os.makedirs(args.out, exist_ok=True)
    failed = 0
    for result in ray.get(tasks):
        if result["rc"] != 0:
            failed += 1
            print(
                f"node {result['node']} ({result['host']!r}): snapshot failed: {result['stderr'].strip()}",
                file=sys.stderr,
            )
            continue
        # Host names come from the nodes: only a safe spelling of one goes into a file name.
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", result["host"])[:64] or "node"
        path = os.path.join(args.out, f"snap-{safe}-{result['node'][:12]}.json")
        fd, temporary = tempfile.mkstemp(dir=args.out, prefix=".snap-")
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(result["snapshot"])
        os.chmod(temporary, 0o644)  # mkstemp's 0600 would surprise whoever collects the files
        os.replace(temporary, path)
        print(path)
    ray.shutdown()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

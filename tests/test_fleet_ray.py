"""examples/fleet/ray_snapshots.py against a local Ray cluster of three nodes: slow, and skipped without Ray.

Ray's own ``ray.cluster_utils.Cluster`` starts a head and two worker nodes on this machine,
each a raylet of its own with its own node id, as a multi-node cluster has. Deselect with
``-m "not slow"``: starting them takes tens of seconds on a small machine.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import Venv, build_wheel, make_venv, pip_install, run_cli

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "fleet" / "ray_snapshots.py"


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, uv_bin: Path) -> Venv:
    """The environment the snapshots inspect: small, so that three nodes snapshot it quickly."""
    root = tmp_path_factory.mktemp("ray-env")
    wheel = build_wheel(root / "wheels", "alpha", "1.0", {"alpha/__init__.py": b"A = 1\n"})
    venv = make_venv(root / "venv", uv_bin=uv_bin)
    pip_install(venv, "--no-index", "--no-deps", wheel)
    return venv


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A head node and two worker nodes; the example's module importable by their workers."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    saved = dict(os.environ)
    paths = [str(EXAMPLE.parent), str(ROOT), os.environ.get("PYTHONPATH", "")]
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
    os.environ["RAY_AUTH_MODE"] = "disabled"  # a throwaway local cluster: no token written to the home directory
    small = {"num_cpus": 1, "object_store_memory": 80 << 20}
    started = Cluster(initialize_head=True, head_node_args={**small, "include_dashboard": False})
    try:
        started.workers = [started.add_node(**small) for _ in range(2)]
        started.wait_for_nodes()
        ray.init(address=started.address)
        yield started
    finally:
        ray.shutdown()
        started.shutdown()
        os.environ.clear()
        os.environ.update(saved)


def test_every_node_of_three_gives_its_snapshot_and_they_diff_cleanly(cluster: Any, venv: Venv, tmp_path: Path) -> None:
    out = tmp_path / "snaps"
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--address", cluster.address, "--out", str(out), "--", "--python", venv.python],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    gathered = sorted(out.glob("snap-*.json"))
    assert sorted(done.stdout.split()) == [str(p) for p in gathered]
    assert len(gathered) == 3  # one per node: three node ids on this one host
    host = socket.gethostname()
    assert all(json.loads(p.read_text())["host"] == host for p in gathered)
    direct = tmp_path / "direct.json"
    taken = run_cli("snapshot", "--python", venv.python, "--host", host, "-o", direct)
    assert taken.returncode == 0, taken.stderr
    compared = run_cli("diff", direct, *gathered)
    assert (compared.returncode, compared.stdout) == (0, "all 4 snapshots agree\n"), compared.stderr


def test_a_node_lost_between_listing_and_scheduling_is_named_and_the_others_kept(
    cluster: Any, venv: Venv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ray

    monkeypatch.syspath_prepend(str(EXAMPLE.parent))  # the workers import it by name too (PYTHONPATH)
    import ray_snapshots

    listed = [n for n in ray.nodes() if n.get("Alive")]
    assert len(listed) == 3
    gone = cluster.workers[1]
    cluster.remove_node(gone)
    written, lost = ray_snapshots.gather(listed, str(tmp_path / "snaps"), ["--python", venv.python], timeout=300)
    assert len(written) == 2, lost
    (line,) = lost
    assert line.startswith(f"node {gone.node_id}: TaskUnschedulableError: ")
    assert all(json.loads(Path(p).read_text())["host"] == socket.gethostname() for p in written)
    compared = run_cli("diff", *written)
    assert compared.returncode == 0, compared.stdout + compared.stderr

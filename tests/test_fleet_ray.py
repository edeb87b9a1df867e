"""examples/fleet/ray_snapshots.py against a local Ray cluster (``ray.init()`` here): slow, and skipped without Ray.

Deselect with ``-m "not slow"``: starting Ray takes tens of seconds on a small machine.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run_cli

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "fleet" / "ray_snapshots.py"


def test_the_ray_example_gathers_one_snapshot_per_node_and_it_diffs_cleanly(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    out = tmp_path / "snaps"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env["RAY_AUTH_MODE"] = "disabled"  # a throwaway local cluster: no token written to the home directory
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    gathered = sorted(out.glob("snap-*.json"))
    assert [str(p) for p in gathered] == done.stdout.split()
    assert len(gathered) == 1  # one alive node: this machine
    host = socket.gethostname()
    assert json.loads(gathered[0].read_text())["host"] == host
    direct = tmp_path / "direct.json"
    taken = run_cli("snapshot", "--python", sys.executable, "--host", host, "-o", direct)
    assert taken.returncode == 0, taken.stderr
    compared = run_cli("diff", direct, *gathered)
    assert (compared.returncode, compared.stdout) == (0, "all 2 snapshots agree\n"), compared.stderr

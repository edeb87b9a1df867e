"""The fleet recipes (examples/fleet/) run here as they are written, and ``diff`` accepts what they collect.

No Kubernetes or Slurm cluster runs here: what runs on each node is run here, exactly as the
recipe writes it, on a real venv. Kubernetes: the DaemonSet's init container command, with
``$(NODE_NAME)`` expanded as the kubelet expands it, its stdout and stderr merged into one
file as ``kubectl logs`` gives them. Slurm: the task ``srun`` starts on each node, in bash,
with ``SLURMD_NODENAME`` set as slurmd sets it. The image's environment is an activated venv
(``VIRTUAL_ENV``), so wheeldoctor finds it as it would there, and says so unless ``-q``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import Venv, build_wheel, make_venv, pip_install, run_cli

FLEET = Path(__file__).resolve().parent.parent / "examples" / "fleet"


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, uv_bin: Path) -> Venv:
    root = tmp_path_factory.mktemp("recipe-env")
    wheel = build_wheel(root / "wheels", "alpha", "1.0", {"alpha/__init__.py": b"A = 1\n"})
    venv = make_venv(root / "venv", uv_bin=uv_bin)
    pip_install(venv, "--no-index", "--no-deps", wheel)
    return venv


def node_env(venv: Venv, tmp_path: Path, **more: str) -> dict[str, str]:
    """A node's environment: the image's venv activated, wheeldoctor (and ``python``) on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("CONDA_PREFIX", "WHEELDOCTOR_CACHE_DIR")}
    env.update(VIRTUAL_ENV=str(venv.prefix), PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}")
    env.update(WHEELDOCTOR_CACHE_DIR=str(tmp_path / "cache"), **more)
    return env


def daemonset() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((FLEET / "k8s-daemonset.yaml").read_text(encoding="utf-8"))
    return document


def test_the_daemonset_reaches_tainted_gpu_nodes_and_asks_for_little() -> None:
    found = daemonset()
    assert (found["apiVersion"], found["kind"]) == ("apps/v1", "DaemonSet")
    spec = found["spec"]["template"]["spec"]
    assert {"operator": "Exists"} in spec["tolerations"]  # any taint, nvidia.com/gpu:NoSchedule included
    (snapshot,) = spec["initContainers"]
    assert snapshot["resources"]["requests"] == {"cpu": "100m", "memory": "256Mi"}
    assert "-q" in snapshot["command"]  # kubectl logs merges the streams
    assert found["spec"]["selector"]["matchLabels"] == found["spec"]["template"]["metadata"]["labels"]


def test_the_daemonsets_command_logs_a_snapshot_and_nothing_else(venv: Venv, tmp_path: Path) -> None:
    (snapshot,) = daemonset()["spec"]["template"]["spec"]["initContainers"]
    logs = []
    for node in ("gpu-a", "gpu-b"):
        env = node_env(venv, tmp_path, NODE_NAME=node)
        env.update(
            {e["name"]: e["value"] for e in snapshot["env"] if "value" in e and e["name"] != "WHEELDOCTOR_CACHE_DIR"}
        )
        # The kubelet expands $(VAR) in a command from the container's environment.
        command = [re.sub(r"\$\((\w+)\)", lambda m, env=env: env[m.group(1)], word) for word in snapshot["command"]]
        log = tmp_path / f"snap-{node}.json"
        with log.open("wb") as merged:
            done = subprocess.run(
                command, stdout=merged, stderr=subprocess.STDOUT, env=env, cwd=tmp_path, timeout=300, check=False
            )
        assert done.returncode == 0, log.read_text()[-2000:]
        logs.append(log)
    compared = run_cli("diff", *logs)
    assert (compared.returncode, compared.stdout, compared.stderr) == (0, "all 2 snapshots agree\n", "")


@pytest.mark.parametrize("script", ["k8s-snapshots.sh", "slurm-snapshots.sh"])
def test_the_scripts_parse_and_are_shellcheck_clean(script: str) -> None:
    path = FLEET / script
    assert subprocess.run(["bash", "-n", path], check=False).returncode == 0
    assert os.access(path, os.X_OK)
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed")
    done = subprocess.run(["shellcheck", path], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout


def slurm_task() -> str:
    """What the script's ``srun`` starts on each node: its command line, with srun and srun's options taken off."""
    text = (FLEET / "slurm-snapshots.sh").read_text(encoding="utf-8").replace("\\\n", " ")
    (line,) = [line for line in text.splitlines() if line.startswith("srun ")]
    task = re.sub(r"^srun(\s+--[\w-]+(=\S+)?)+\s+", "", line)
    return task.split(" || ")[0]  # what the script does when srun fails is the script's, not the task's


def test_the_slurm_task_writes_one_file_per_node_and_nothing_on_stdout_or_stderr(venv: Venv, tmp_path: Path) -> None:
    out = tmp_path / "snapshots"
    out.mkdir()
    task = slurm_task()
    assert "$SLURMD_NODENAME" in task and "-q" in task.split()
    for node in ("gpu-a", "gpu-b"):
        env = node_env(venv, tmp_path, SLURMD_NODENAME=node, out=str(out))
        done = subprocess.run(
            ["bash", "-c", task], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300, check=False
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    files = sorted(out.iterdir())
    assert [p.name for p in files] == ["snap-gpu-a.json", "snap-gpu-b.json"]
    compared = run_cli("diff", *files)
    assert (compared.returncode, compared.stdout) == (0, "all 2 snapshots agree\n"), compared.stderr


def test_the_slurm_script_runs_under_slurm_where_a_cluster_answers(venv: Venv, tmp_path: Path) -> None:
    """Where this machine is a Slurm cluster (``sinfo`` answers), the whole script runs by ``sbatch``."""
    if shutil.which("sbatch") is None or subprocess.run(["sinfo", "-h"], capture_output=True, check=False).returncode:
        pytest.skip("no Slurm cluster answers here")
    env = node_env(venv, tmp_path)
    script = FLEET / "slurm-snapshots.sh"

    def batch(out: str, **more: str) -> tuple[int, str]:
        log = tmp_path / f"{out}.err"
        command = ["sbatch", "--wait", "--nodes=1", "-o", tmp_path / f"{out}.out", "-e", log, script, tmp_path / out]
        done = subprocess.run(command, env={**env, **more}, capture_output=True, timeout=600, check=False)
        return done.returncode, log.read_text()

    rc, err = batch("first")
    (taken,) = (tmp_path / "first").iterdir()  # one node: one snapshot, named after it, and nothing to compare
    assert (rc, err) == (0, "1 snapshot(s): nothing to compare them with (REFERENCE=golden.json compares with one)\n")
    rc, err = batch("second", REFERENCE=str(taken))
    assert (rc, err) == (0, "")
    assert (tmp_path / "second.out").read_text() == "all 2 snapshots agree\n"

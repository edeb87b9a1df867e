"""The repository's pre-commit hook (.pre-commit-hooks.yaml), run by pre-commit itself on a real project.

pre-commit clones this repository at its HEAD commit and installs it into a venv of its own
(its build backend and dependencies come from the index: ``network``), then runs the
``wheeldoctor`` hook as a project's config names it, with ``--python`` naming the project's
``.venv``: it passes on the intact venv and fails, saying why, once a file is damaged.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import build_wheel, make_venv, pip_install

REPO = Path(__file__).resolve().parent.parent


def git(*args: str | Path, cwd: Path) -> str:
    done = subprocess.run(["git", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.network
def test_the_hook_passes_an_intact_venv_and_fails_a_damaged_one(tmp_path: Path, uv_bin: Path) -> None:
    pytest.importorskip("pre_commit")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False)
    if head.returncode != 0:
        pytest.skip("this checkout is not a git repository: pre-commit clones the hook's repository")
    project = tmp_path / "project"
    project.mkdir()
    wheel = build_wheel(tmp_path / "wheels", "alpha", "1.0", {"alpha/__init__.py": b"A = 1\n", "alpha/core.py": b"X\n"})
    venv = make_venv(project / ".venv", uv_bin=uv_bin)
    pip_install(venv, "--no-index", "--no-deps", wheel)
    (project / ".gitignore").write_text(".venv/\n")
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {REPO}\n    rev: {head.stdout.strip()}\n    hooks:\n"
        "      - id: wheeldoctor\n        args: [--python, .venv/bin/python]\n",
        encoding="utf-8",
    )
    git("init", "-q", cwd=project)
    git("add", ".", cwd=project)
    git("-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "project", cwd=project)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    env.pop("VIRTUAL_ENV", None)

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "run", "--all-files"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )

    intact = run()
    assert intact.returncode == 0, intact.stdout + intact.stderr
    assert "wheeldoctor" in intact.stdout and "Passed" in intact.stdout
    (venv.site_packages / "alpha" / "core.py").write_bytes(b"Y\n")
    damaged = run()
    assert damaged.returncode == 1, damaged.stdout + damaged.stderr
    assert "Failed" in damaged.stdout and "alpha 1.0: WD001: alpha/core.py" in damaged.stdout

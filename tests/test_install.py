"""The install the README documents, and the release artefacts, as a new user and PyPI get them.

- The README's install block, run as written in a shell, from a fresh copy of this checkout
  in place of the ``git clone`` (its URL holds a placeholder the reader fills in), gives a
  ``wheeldoctor`` whose ``--version`` is this checkout's.
- ``python -m build`` gives an sdist and a wheel that ``twine check`` accepts; the wheel
  installs into a fresh venv, and ``wheeldoctor check --all`` there exits 0.

Both fetch the build backend and wheeldoctor's dependencies from the index: ``network``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import find_uv, run_checked

import wheeldoctor

REPO = Path(__file__).resolve().parent.parent


def copy_checkout(destination: Path) -> Path:
    """This checkout's files at ``destination``, as a fresh clone has them (no build output)."""
    shutil.copytree(
        REPO,
        destination,
        ignore=shutil.ignore_patterns(
            ".git", "__pycache__", ".venv", ".work", "dist", "build", "*.egg-info", ".*_cache"
        ),
    )
    return destination


def install_block() -> list[str]:
    """The command lines between ``<!-- install -->`` and ``<!-- /install -->`` in the README."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- install -->\n```\n(.*?)```\n<!-- /install -->", readme, re.DOTALL)
    assert found is not None, "the README lost its install block"
    return [line for line in found.group(1).splitlines() if line.strip()]


def test_the_install_block_clones_then_installs() -> None:
    lines = install_block()
    assert re.fullmatch(r"git clone https://github\.com/OWNER/wheeldoctor", lines[0])
    assert lines[1] == "cd wheeldoctor"
    assert len(lines) == 3 and lines[2] in {"uv tool install .", "pipx install ."}


@pytest.mark.network
def test_the_readme_install_gives_a_working_wheeldoctor(tmp_path: Path) -> None:
    uv = find_uv()
    lines = install_block()
    copy_checkout(tmp_path / "wheeldoctor")  # the clone: the README's URL is the reader's to fill in
    env = {
        **os.environ,
        "PATH": f"{uv.parent}{os.pathsep}{os.environ['PATH']}",
        "UV_TOOL_DIR": str(tmp_path / "tools"),
        "UV_TOOL_BIN_DIR": str(tmp_path / "bin"),
        "UV_NO_CONFIG": "1",
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_PYTHON": sys.executable,
        "PYTHONPATH": "",  # the installed tool, not this checkout
    }
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run(
        ["bash", "-e", "-c", "\n".join(lines[1:])],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    version = run_checked([tmp_path / "bin" / "wheeldoctor", "--version"], env={"PYTHONPATH": ""})
    assert wheeldoctor.__version__ in version.stdout


@pytest.mark.network
def test_build_gives_an_sdist_and_a_wheel_that_install_and_run(tmp_path: Path) -> None:
    source = copy_checkout(tmp_path / "src")
    dist = tmp_path / "dist"
    run_checked([sys.executable, "-m", "build", "--outdir", dist, source])
    sdists, wheels = sorted(dist.glob("*.tar.gz")), sorted(dist.glob("*.whl"))
    assert [p.name for p in sdists] == [f"wheeldoctor-{wheeldoctor.__version__}.tar.gz"]
    assert [p.name for p in wheels] == [f"wheeldoctor-{wheeldoctor.__version__}-py3-none-any.whl"]
    checked = run_checked([sys.executable, "-m", "twine", "check", "--strict", *sdists, *wheels])
    assert checked.stdout.count("PASSED") == 2, checked.stdout
    venv = tmp_path / "venv"
    run_checked([sys.executable, "-m", "venv", venv])
    run_checked([venv / "bin" / "python", "-m", "pip", "install", "--quiet", wheels[0]], env={"PYTHONPATH": ""})
    done = subprocess.run(
        [venv / "bin" / "wheeldoctor", "check", "--all"],
        env={**os.environ, "PYTHONPATH": ""},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr

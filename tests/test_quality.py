"""The code stays ruff- and mypy-clean: part of the test run, so CI enforces it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tool(name: str) -> list[str]:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed; install the test extra: pip install -e '.[test]'")
    return [found]


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "wheeldoctor", "tests", "bench"],
        ["ruff", "format", "--check", "wheeldoctor", "tests", "bench"],
        ["mypy"],
    ],
    ids=["ruff-check", "ruff-format", "mypy-strict"],
)
def test_clean(command: list[str]) -> None:
    done = subprocess.run(
        [*_tool(command[0]), *command[1:]], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr

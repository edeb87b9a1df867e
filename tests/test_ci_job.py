"""The README's GitHub Actions job, run as written: its ``run:`` steps, in order, in a shell.

The project is a fresh directory whose ``requirements.txt`` names a wheel built here;
after the install step one installed file is damaged. The job's second checkout (an
action, ``OWNER/wheeldoctor`` into ``.wheeldoctor``) is done as the README tells the reader
to: with this checkout in place of ``OWNER/wheeldoctor``, copied to the path the job names.
Its install step then runs exactly as written (``uv tool install ./.wheeldoctor``), into a
tool directory of the test's own; wheeldoctor's build backend and dependencies come from
the index, hence ``network``. The check step must write a valid SARIF file and exit 1.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import build_wheel, find_uv
from test_formats import validate_sarif

import wheeldoctor

REPO = Path(__file__).resolve().parent.parent


def job() -> str:
    """The YAML block between ``<!-- ci-job -->`` and ``<!-- /ci-job -->`` in the README."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- ci-job -->\n```yaml\n(.*?)```\n<!-- /ci-job -->", readme, re.DOTALL)
    assert found is not None, "the README lost its CI job block"
    return found.group(1)


def checkout(destination: Path) -> None:
    """This checkout's files at ``destination``, as ``actions/checkout`` leaves a repository."""
    shutil.copytree(
        REPO,
        destination,
        ignore=shutil.ignore_patterns(
            ".git", "__pycache__", ".venv", ".work", "dist", "build", "*.egg-info", ".*_cache"
        ),
    )


def steps(text: str) -> list[dict[str, str]]:
    """Each step's keys (``name``, ``run``, ``uses``, ``if``, ``with.*``) from the job's YAML.

    A small reader for this one block, not YAML in general: ``- key: value`` starts a step,
    ``run: |`` takes the indented lines below it.
    """
    found: list[dict[str, str]] = []
    lines = text.splitlines()
    index = 0
    block = None
    while index < len(lines):
        line = lines[index]
        index += 1
        step = re.match(r"^(\s*)- (\w[\w-]*): ?(.*)$", line)
        if step and (block is None or len(step.group(1)) <= block):
            block = len(step.group(1))
            found.append({})
            line = " " * (block + 2) + f"{step.group(2)}: {step.group(3)}"
        if block is None or not found:
            continue
        field = re.match(r"^\s*([\w-]+|if): ?(.*)$", line)
        if field is None:
            continue
        key, value = field.groups()
        if value == "|":
            body = []
            indent = len(line) - len(line.lstrip()) + 2
            while index < len(lines) and (not lines[index].strip() or lines[index].startswith(" " * indent)):
                body.append(lines[index][indent:])
                index += 1
            value = "\n".join(body).strip() + "\n"
        if key in found[-1]:
            key = f"with.{key}"
        found[-1][key] = value
    return found


def test_the_job_reads_as_intended() -> None:
    parsed = steps(job())
    assert [s.get("name", s.get("uses")) for s in parsed] == [
        "actions/checkout@v4",
        "astral-sh/setup-uv@v6",
        "Install the project",
        "Get wheeldoctor",
        "Install wheeldoctor beside it",
        "Check the environment",
        "Upload SARIF",
    ]
    get, install, check, upload = parsed[3], parsed[4], parsed[5], parsed[6]
    # The reader substitutes OWNER (the README says so); the install is that checkout's path.
    assert (
        get["uses"].startswith("actions/checkout@") and get["repository"].split("#")[0].strip() == "OWNER/wheeldoctor"
    )
    assert install["run"].strip() == f"uv tool install ./{get['path']}"
    assert "--python .venv/bin/python" in check["run"] and "--format sarif -o wheeldoctor.sarif" in check["run"]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["if"] == "${{ !cancelled() }}"  # it runs after the check step fails
    assert "sarif_file: wheeldoctor.sarif" in job()
    assert "security-events: write" in job()


@pytest.mark.network
def test_the_readme_ci_job_fails_on_a_damaged_venv_and_writes_sarif(tmp_path: Path) -> None:
    uv = find_uv()
    project = tmp_path / "project"
    wheel = build_wheel(tmp_path / "wheels", "alpha", "1.0", {"alpha/__init__.py": b"A = 1\n", "alpha/core.py": b"X\n"})
    project.mkdir()
    (project / "requirements.txt").write_text(f"{wheel}\n")
    env = {
        **os.environ,
        "PATH": f"{uv.parent}{os.pathsep}{os.environ['PATH']}",
        "UV_TOOL_DIR": str(tmp_path / "tools"),
        "UV_TOOL_BIN_DIR": str(tmp_path / "tool-bin"),
        "UV_NO_CONFIG": "1",
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_PYTHON": sys.executable,  # not a pyenv shim from PATH
    }
    env.pop("VIRTUAL_ENV", None)
    outcomes = {}
    for step in steps(job()):
        if step.get("uses", "").startswith("actions/checkout@") and "path" in step:
            checkout(project / step["path"])  # what the action does, with this checkout for OWNER's
            continue
        if "run" not in step:
            continue  # the project's checkout, setup-uv and the upload are actions, not commands
        done = subprocess.run(
            ["bash", "-e", "-c", step["run"]],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        outcomes[step["name"]] = done
        if step["name"] == "Install the project":
            assert done.returncode == 0, done.stderr
            site = next((project / ".venv" / "lib").glob("python3*/site-packages"))
            (site / "alpha" / "core.py").write_bytes(b"Y\n")  # the damaged file
    assert outcomes["Install wheeldoctor beside it"].returncode == 0, outcomes["Install wheeldoctor beside it"].stderr
    check = outcomes["Check the environment"]
    assert check.returncode == 1, check.stderr
    assert "alpha 1.0: WD001: alpha/core.py" in check.stdout  # the log stays readable
    document = json.loads((project / "wheeldoctor.sarif").read_text(encoding="utf-8"))
    validate_sarif(document)
    assert document["runs"][0]["tool"]["driver"]["version"] == wheeldoctor.__version__
    assert [(r["ruleId"], r["level"]) for r in document["runs"][0]["results"]] == [("WD001", "error")]

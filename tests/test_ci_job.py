"""The README's GitHub Actions job, run as written: its ``run:`` steps and the action it uses, in order.

The project is a fresh directory whose ``requirements.txt`` names a wheel built here; after
the install step one installed file is damaged. The job's ``uses: OWNER/wheeldoctor@REF``
step is this repository's action (``action.yml``), with this checkout in place of
``OWNER/wheeldoctor`` as the README tells the reader to substitute: its steps are run as the
runner runs them (:class:`test_action.Runner`), with the ``with:`` inputs the job gives.
Installing wheeldoctor builds it from this checkout (its build backend and dependencies come
from the index, hence ``network``). The job must annotate the run, write a valid SARIF file
and fail.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import build_wheel, find_uv
from test_action import Runner
from test_formats import validate_sarif

import wheeldoctor

REPO = Path(__file__).resolve().parent.parent


def job() -> str:
    """The YAML block between ``<!-- ci-job -->`` and ``<!-- /ci-job -->`` in the README."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- ci-job -->\n```yaml\n(.*?)```\n<!-- /ci-job -->", readme, re.DOTALL)
    assert found is not None, "the README lost its CI job block"
    return found.group(1)


def steps() -> list[dict[str, Any]]:
    """The job's steps, as YAML reads them."""
    jobs = yaml.safe_load(job())["jobs"]
    (only,) = jobs.values()
    found: list[dict[str, Any]] = only["steps"]
    return found


def test_the_job_reads_as_intended() -> None:
    parsed = steps()
    assert [s.get("name", s.get("uses")) for s in parsed] == [
        "actions/checkout@v4",
        "astral-sh/setup-uv@v6",
        "Install the project",
        "Check the environment",
    ]
    check = parsed[3]
    assert check["uses"] == "OWNER/wheeldoctor@REF"  # the reader substitutes both (the README says so)
    assert check["with"] == {"python": ".venv", "sarif": "wheeldoctor.sarif", "upload-sarif": True}
    assert "security-events: write" in job()


@pytest.mark.network
def test_the_readme_ci_job_fails_on_a_damaged_venv_annotates_and_writes_sarif(tmp_path: Path) -> None:
    uv = find_uv()
    project = tmp_path / "project"
    wheel = build_wheel(tmp_path / "wheels", "alpha", "1.0", {"alpha/__init__.py": b"A = 1\n", "alpha/core.py": b"X\n"})
    project.mkdir()
    (project / "requirements.txt").write_text(f"{wheel}\n")
    env = {
        **os.environ,
        "PATH": f"{uv.parent}{os.pathsep}{os.environ['PATH']}",
        "UV_NO_CONFIG": "1",
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_PYTHON": sys.executable,  # not a pyenv shim from PATH
        "RUNNER_TEMP": str(tmp_path / "runner-temp"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
    }
    env.pop("VIRTUAL_ENV", None)
    (tmp_path / "runner-temp").mkdir()
    runner = Runner(workspace=project, temp=tmp_path / "runner-temp", env=env)
    verdict = None
    for step in steps():
        if step.get("uses", "").startswith("OWNER/wheeldoctor@"):
            given = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in step["with"].items()}
            done = runner.run({**given, "tool-python": sys.executable})
            assert done["Install wheeldoctor beside the environment"].returncode == 0
            check = done["Check the environment"]
            assert "alpha 1.0: WD001: alpha/core.py" in check.stdout  # the annotations in the log
            assert done["Upload SARIF"].stdout == "wheeldoctor.sarif"
            verdict = done["Verdict"].returncode
            continue
        if "run" not in step:
            continue  # the project's checkout and setup-uv are actions of others
        done_run = subprocess.run(
            ["bash", "-e", "-c", step["run"]],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done_run.returncode == 0, done_run.stderr
        if step["name"] == "Install the project":
            site = next((project / ".venv" / "lib").glob("python3*/site-packages"))
            (site / "alpha" / "core.py").write_bytes(b"Y\n")  # the damaged file
    assert verdict == 1  # the job fails
    document = json.loads((project / "wheeldoctor.sarif").read_text(encoding="utf-8"))
    validate_sarif(document)
    assert document["runs"][0]["tool"]["driver"]["version"] == wheeldoctor.__version__
    assert [(r["ruleId"], r["level"]) for r in document["runs"][0]["results"]] == [("WD001", "error")]

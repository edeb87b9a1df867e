"""The GitHub Action (action.yml at the repository root), its steps run as the runner runs them.

A composite action's steps are bash scripts whose inputs arrive through ``env:``. Here each
``run:`` step is run in order with bash, ``-e -o pipefail`` as the runner's ``shell: bash``
does, its ``${{ }}`` expressions substituted (inputs, ``github.action_path``, the outputs of
earlier steps), and ``GITHUB_ENV``/``GITHUB_OUTPUT`` carried between steps as files, as the
runner does. The ``uses:`` step (the SARIF upload) is an action of GitHub's: its condition
and inputs are evaluated, not the upload. The install step builds wheeldoctor from this
checkout with pip, whose build backend and dependencies come from the index: ``network``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import build_wheel, make_venv, pip_install
from test_formats import validate_sarif

REPO = Path(__file__).resolve().parent.parent
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def action() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    return document


def test_the_action_is_a_composite_whose_scripts_take_inputs_only_through_env() -> None:
    """actionlint does not read action.yml itself: these are the rules it and GitHub hold an action to."""
    found = action()
    assert found["name"] and found["description"] and found["runs"]["using"] == "composite"
    inputs = found["inputs"]
    assert all(set(spec) <= {"description", "required", "default"} and spec["description"] for spec in inputs.values())
    steps = found["runs"]["steps"]
    ids = {s["id"] for s in steps if "id" in s}
    used: set[str] = set()
    for step in steps:
        assert ("run" in step) != ("uses" in step), step
        if "run" in step:
            assert step["shell"] == "bash"
            assert "${{" not in step["run"], "an input spliced into script text can inject commands"
        for expression in EXPRESSION.findall(json.dumps(step)):
            used.update(re.findall(r"\binputs\.([\w-]+)", expression))
            assert set(re.findall(r"\bsteps\.([\w-]+)", expression)) <= ids, expression
    assert used == set(inputs), "every input is used, and only inputs that are declared"
    for output in found["outputs"].values():
        (step_id,) = re.findall(r"steps\.([\w-]+)\.outputs", output["value"])
        assert step_id in ids
    upload = next(s for s in steps if "uses" in s)
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert "!cancelled()" in upload["if"]


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
def test_the_action_scripts_are_shellcheck_clean(tmp_path: Path) -> None:
    for index, step in enumerate(s for s in action()["runs"]["steps"] if "run" in s):
        script = tmp_path / f"step{index}.sh"
        script.write_text("#!/bin/bash\nset -eo pipefail\n" + step["run"], encoding="utf-8")
        done = subprocess.run(["shellcheck", script], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout


@pytest.mark.skipif(shutil.which("actionlint") is None, reason="actionlint is not installed")
def test_a_workflow_using_the_action_is_actionlint_clean(tmp_path: Path) -> None:
    """actionlint checks a local action's inputs against its action.yml where a workflow uses it."""
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    shutil.copy(REPO / "action.yml", tmp_path / "action.yml")
    (workflows / "check.yml").write_text(
        "on: push\njobs:\n  env:\n    runs-on: ubuntu-latest\n    permissions:\n      security-events: write\n"
        "    steps:\n      - uses: actions/checkout@v4\n      - uses: ./\n        with:\n"
        "          command: doctor\n          sarif: wheeldoctor.sarif\n          upload-sarif: true\n",
        encoding="utf-8",
    )
    done = subprocess.run(["actionlint"], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


@dataclass
class Runner:
    """What the runner keeps for one job: its files, its environment, the steps' outputs."""

    workspace: Path
    temp: Path
    env: dict[str, str]
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)

    def run(self, inputs: dict[str, str]) -> dict[str, subprocess.CompletedProcess[str]]:
        """Every step of the action with ``inputs`` (the rest at their defaults): each run step's outcome."""
        found = action()
        given = {name: inputs.get(name, str(spec.get("default", ""))) for name, spec in found["inputs"].items()}
        self.outputs = {}
        done: dict[str, subprocess.CompletedProcess[str]] = {}
        for step in found["runs"]["steps"]:
            if "uses" in step:
                condition = self.evaluate(step["if"], given).replace("!cancelled()", "True")
                condition = condition.replace("&&", " and ").replace("||", " or ")
                if eval(condition):  # the values are this test's own
                    done[step["name"]] = subprocess.CompletedProcess(
                        [], 0, self.evaluate(step["with"]["sarif_file"], given), ""
                    )
                continue
            done[step["name"]] = self.step(step, given)
        return done

    def step(self, step: dict[str, Any], given: dict[str, str]) -> subprocess.CompletedProcess[str]:
        files = {name: self.temp / f"{name}-{len(self.outputs)}" for name in ("GITHUB_ENV", "GITHUB_OUTPUT")}
        for path in files.values():
            path.write_text("")
        env = {**self.env, **{k: self.evaluate(str(v), given) for k, v in step.get("env", {}).items()}}
        env.update({name: str(path) for name, path in files.items()})
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=self.workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        for line in files["GITHUB_ENV"].read_text().splitlines():
            key, _, value = line.partition("=")
            self.env[key] = value
        if "id" in step:
            self.outputs[step["id"]] = dict(
                line.partition("=")[::2] for line in files["GITHUB_OUTPUT"].read_text().splitlines()
            )
        return done

    def evaluate(self, text: str, given: dict[str, str]) -> str:
        def value(match: re.Match[str]) -> str:
            expression = match.group(1)
            expression = re.sub(r"\binputs\.([\w-]+)", lambda m: repr(given[m.group(1)]), expression)
            expression = re.sub(
                r"\bsteps\.([\w-]+)\.outputs\.([\w-]+)",
                lambda m: repr(self.outputs.get(m.group(1), {}).get(m.group(2), "")),
                expression,
            )
            if expression == "github.action_path":
                return str(REPO)
            return expression if not re.fullmatch(r"'[^']*'", expression) else expression[1:-1]

        return EXPRESSION.sub(value, text)


@pytest.mark.network
def test_the_action_checks_the_jobs_environment_annotates_and_writes_sarif(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    wheel = build_wheel(tmp_path / "wheels", "alpha", "1.0", {"alpha/__init__.py": b"A = 1\n", "alpha/core.py": b"X\n"})
    venv = make_venv(workspace / ".venv")
    pip_install(venv, "--no-index", "--no-deps", wheel)
    (venv.site_packages / "alpha" / "core.py").write_bytes(b"Y\n")
    summary = tmp_path / "summary.md"
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    env.update(RUNNER_TEMP=str(tmp_path / "runner-temp"), GITHUB_STEP_SUMMARY=str(summary))
    (tmp_path / "runner-temp").mkdir()
    runner = Runner(workspace=workspace, temp=tmp_path / "runner-temp", env=env)
    done = runner.run({"sarif": "wheeldoctor.sarif", "upload-sarif": "true", "tool-python": sys.executable})
    install = done["Install wheeldoctor beside the environment"]
    assert install.returncode == 0, install.stderr
    assert runner.env["WHEELDOCTOR"].startswith(str(tmp_path / "runner-temp"))  # a venv of its own, not the job's
    check = done["Check the environment"]
    assert check.returncode == 0, check.stderr  # the verdict is its own step, after the upload
    assert runner.outputs["check"] == {"exit-code": "1", "sarif": "wheeldoctor.sarif"}
    (error,) = [line for line in check.stdout.splitlines() if line.startswith("::error")]
    assert "alpha 1.0: WD001: alpha/core.py" in error
    assert "| error | alpha 1.0 | WD001 | alpha/core.py |" in summary.read_text()
    document = json.loads((workspace / "wheeldoctor.sarif").read_text(encoding="utf-8"))
    validate_sarif(document)
    assert [r["ruleId"] for r in document["runs"][0]["results"]] == ["WD001"]
    assert done["Upload SARIF"].stdout == "wheeldoctor.sarif"  # the upload's condition held, and its file
    assert done["Verdict"].returncode == 1

    # doctor, no annotations, no SARIF, told not to fail: the problems are still in the output.
    done = runner.run({"command": "doctor", "annotations": "false", "fail": "false", "python": ".venv"})
    assert "Upload SARIF" not in done
    assert runner.outputs["check"] == {"exit-code": "1"}
    assert "alpha 1.0: WD001: alpha/core.py" in done["Check the environment"].stdout
    assert done["Verdict"].returncode == 0
    # A wrong command is said as an annotation, and fails the step whatever `fail` says.
    done = runner.run({"command": "fix", "fail": "false"})
    assert done["Check the environment"].returncode == 2
    assert done["Check the environment"].stdout.startswith("::error title=wheeldoctor::command must be check or doctor")

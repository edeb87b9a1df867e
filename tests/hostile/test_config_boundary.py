"""A cloned project's own files never start its own programs, and never hide integrity (issue #49)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Planted, no_traceback
from helpers import make_venv, record_hash, run_cli


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``check --all`` as a CI job runs it: no activated venv, no --python."""
    clean = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    return subprocess.run(
        [sys.executable, "-m", "wheeldoctor", "check", "--all", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=clean,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


def _project(root: Path) -> Path:
    project = root / "project"
    (project / ".git").mkdir(parents=True)
    return project


def _script(path: Path, marker: Path) -> None:
    """A program the pull request commits: it leaves ``marker`` behind if it is ever started."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\ntouch '{marker}'\nexit 1\n")
    path.chmod(0o755)


@pytest.mark.parametrize(
    ("python", "program"),
    [("tools/python", "tools/python"), (".venv", ".venv/bin/python"), ("tools", "tools/bin/python")],
)
def test_the_configs_python_inside_its_project_is_not_started(tmp_path: Path, python: str, program: str) -> None:
    project = _project(tmp_path)
    marker = tmp_path / "ran"
    _script(project / program, marker)
    (project / "pyproject.toml").write_text(f'[tool.wheeldoctor]\npython = "{python}"\n')
    done = _run(project)
    no_traceback(done)
    assert not marker.exists(), "the project's program was started"
    assert done.returncode == 2, done.stdout + done.stderr
    line = done.stderr.strip()
    assert len(line.splitlines()) == 1, line
    assert "pyproject.toml: python is not started" in line and "--python" in line, line


def test_a_link_out_of_the_project_is_followed_before_judging(tmp_path: Path) -> None:
    """``tools/python -> ../tools2/evil``: the link's target is what runs, and it lies in the project."""
    project = _project(tmp_path)
    marker = tmp_path / "ran"
    _script(project / "hidden" / "evil", marker)
    (project / "bin").mkdir()
    (project / "bin" / "python").symlink_to(project / "hidden" / "evil")
    (project / "wheeldoctor.toml").write_text('python = "bin/python"\n')
    done = _run(project)
    assert not marker.exists() and done.returncode == 2, done.stderr
    assert "resolves to" in done.stderr


def test_a_committed_venv_is_not_started_by_discovery(tmp_path: Path) -> None:
    project = _project(tmp_path)
    marker = tmp_path / "ran"
    _script(project / ".venv" / "bin" / "python", marker)
    done = _run(project)
    no_traceback(done)
    assert not marker.exists(), "the committed .venv was started"
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert f"--python {project / '.venv'}" in done.stderr


def test_a_venv_whose_pyvenv_cfg_points_home_into_the_project_is_not_started(tmp_path: Path) -> None:
    """A real interpreter, but its ``home`` would take the standard library from the pull request."""
    project = _project(tmp_path)
    venv = make_venv(project / ".venv")
    config = venv.prefix / "pyvenv.cfg"
    text = config.read_text()
    config.write_text(
        "\n".join(f"home = {project / 'fake' / 'bin'}" if ln.startswith("home") else ln for ln in text.splitlines())
    )
    done = _run(project)
    assert done.returncode == 2, done.stderr
    assert "sets home = " in done.stderr and "inside" in done.stderr


def test_a_real_venv_in_the_project_is_still_found(tmp_path: Path) -> None:
    """The control: a venv that links to an interpreter outside the project is discovered, and so is
    the config's ``python = ".venv"`` naming it."""
    project = _project(tmp_path)
    make_venv(project / ".venv")
    done = _run(project)
    assert done.returncode == 0, done.stderr
    assert f"(from {project / '.venv'})" in done.stderr.splitlines()[0]
    (project / "pyproject.toml").write_text('[tool.wheeldoctor]\npython = ".venv"\n')
    done = _run(project)
    assert done.returncode == 0, done.stderr
    assert "(from the config's python)" in done.stderr.splitlines()[0]


def test_the_command_line_may_name_the_projects_program(tmp_path: Path) -> None:
    """How to allow it: ``--python`` is yours, so it is run (and here it is no interpreter)."""
    project = _project(tmp_path)
    marker = tmp_path / "ran"
    _script(project / "tools" / "python", marker)
    (project / "pyproject.toml").write_text('[tool.wheeldoctor]\npython = "tools/python"\n')
    done = _run(project, "--python", "tools/python")
    assert marker.exists()
    assert done.returncode == 2


# -- select/ignore narrow advisory findings only ------------------------------------------------------


def _tampered_project(planted: Planted, tmp_path: Path, body: str) -> Path:
    (planted.site / "alpha/core.py").write_bytes(b"ANSWER = 43\n")
    project = _project(tmp_path)
    (project / "pyproject.toml").write_text(f"[tool.wheeldoctor]\n{body}\n")
    return project


@pytest.mark.parametrize("codes", ['["WD"]', '["WD0"]', '["WD0000"]', '["wd001"]', '["WD1"]'])
def test_a_code_pattern_that_is_no_code_or_group_is_refused(planted: Planted, tmp_path: Path, codes: str) -> None:
    project = _tampered_project(planted, tmp_path, f"ignore = {codes}")
    done = run_cli("check", "--all", "--python", planted.venv.python, "--strict", cwd=project)
    no_traceback(done)
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "tool.wheeldoctor.ignore" in done.stderr


@pytest.mark.parametrize("strict", [[], ["--strict"]])
def test_the_configs_ignore_never_hides_a_changed_file(planted: Planted, tmp_path: Path, strict: list[str]) -> None:
    groups = '["WD00", "WD01", "WD07", "WD08", "WD001", "WD002"]'
    project = _tampered_project(planted, tmp_path, f"ignore = {groups}")
    done = run_cli("check", "--all", "--python", planted.venv.python, *strict, "--json", cwd=project)
    assert done.returncode == 1, done.stdout + done.stderr
    document = json.loads(done.stdout)
    assert document["healthy"] is False
    alpha = next(d for d in document["distributions"] if d["name"] == "alpha")
    assert [(f["code"], f.get("accepted")) for f in alpha["findings"]] == [("WD001", None)]


def test_the_configs_select_never_hides_a_planted_hook(planted: Planted, tmp_path: Path) -> None:
    (planted.site / "zz-evil.pth").write_text("import os; os.environ.setdefault('X', '1')\n")
    project = _project(tmp_path)
    (project / "pyproject.toml").write_text('[tool.wheeldoctor]\nselect = ["WD04"]\nignore = ["WD071"]\n')
    done = run_cli("check", "--all", "--python", planted.venv.python, cwd=project)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "WD071" in done.stdout


# -- every report names the config it read; --isolated reads none -------------------------------------


def _pinned(planted: Planted, tmp_path: Path) -> Path:
    """alpha's core.py changed, and the project's config accepts those exact bytes."""
    tampered = b"ANSWER = 43\n"
    rule = (
        '[[tool.wheeldoctor.accept]]\ndistribution = "alpha"\npath = "alpha/core.py"\n'
        f'found = "{record_hash(tampered)}"\nreason = "r"\n'
    )
    project = _tampered_project(planted, tmp_path, 'ignore = ["WD061"]\n' + rule)
    return project


def test_every_format_names_the_config_and_what_it_narrowed(planted: Planted, tmp_path: Path) -> None:
    project = _pinned(planted, tmp_path)
    said = f"{project / 'pyproject.toml'} (narrows: ignore WD061; 1 accept rule(s))"
    base = ("check", "--all", "--python", planted.venv.python)
    text = run_cli(*base, cwd=project)
    assert text.returncode == 0, text.stdout + text.stderr
    assert f"config: {said}" in text.stdout.splitlines()
    document = json.loads(run_cli(*base, "--json", cwd=project).stdout)
    assert (document["policy"]["config"], document["policy"]["narrowed"]) == (
        str(project / "pyproject.toml"),
        ["ignore WD061", "1 accept rule(s)"],
    )
    sarif = json.loads(run_cli(*base, "--format", "sarif", cwd=project).stdout)
    assert sarif["runs"][0]["properties"]["config"] == said
    junit = run_cli(*base, "--format", "junit", cwd=project).stdout
    assert f'<property name="config" value="{said}" />' in junit
    github = run_cli(*base, "--format", "github", cwd=project).stdout
    assert f"config: {said}" in github.splitlines()


def test_a_config_that_narrows_nothing_is_still_named(planted: Planted, tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / "wheeldoctor.toml").write_text("jobs = 1\n")
    done = run_cli("check", "--all", "--python", planted.venv.python, cwd=project)
    assert f"config: {project / 'wheeldoctor.toml'} (narrows: nothing)" in done.stdout.splitlines()


def test_isolated_reads_no_config(planted: Planted, tmp_path: Path) -> None:
    project = _pinned(planted, tmp_path)
    assert run_cli("check", "--all", "--python", planted.venv.python, cwd=project).returncode == 0
    done = run_cli("check", "--all", "--python", planted.venv.python, "--isolated", "--json", cwd=project)
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["policy"] is None
    for command in (["doctor"], ["fix", "--all", "--dry-run"], ["deps"]):
        done = run_cli(*command, "--python", planted.venv.python, "--isolated", cwd=project)
        assert "pyproject.toml" not in done.stdout + done.stderr, (command, done.stdout)
    both = run_cli("check", "--all", "--isolated", "--config", project / "pyproject.toml", cwd=project)
    no_traceback(both)
    assert (both.returncode, both.stderr.strip()) == (2, "error: give --config FILE or --isolated, not both")


def test_isolated_does_not_read_the_configs_python(tmp_path: Path) -> None:
    project = _project(tmp_path)
    marker = tmp_path / "ran"
    _script(project / "tools" / "python", marker)
    (project / "pyproject.toml").write_text('[tool.wheeldoctor]\npython = "tools/python"\n')
    make_venv(project / ".venv")
    done = _run(project, "--isolated")
    assert done.returncode == 0, done.stderr
    assert f"(from {project / '.venv'})" in done.stderr.splitlines()[0]

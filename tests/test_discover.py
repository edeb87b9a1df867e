"""Environment discovery as uv does it, from an isolated tool install: never silently the tool's own venv."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import Venv, VenvFactory, WheelFactory, make_venv, uv_install

import wheeldoctor
from wheeldoctor.where.discover import Refusal, discover


@pytest.fixture
def tool(tmp_path: Path) -> Venv:
    """wheeldoctor as ``uv tool install`` leaves it: its own venv, with a uv-receipt.toml in it."""
    venv = make_venv(tmp_path / "tools" / "wheeldoctor")
    here = [str(Path(wheeldoctor.__file__).parent.parent), *(p for p in sys.path if p.endswith("site-packages"))]
    (venv.site_packages / "wheeldoctor-dev.pth").write_text("\n".join(here) + "\n")
    (venv.prefix / "uv-receipt.toml").write_text('[tool]\nrequirements = [{ name = "wheeldoctor" }]\n')
    return venv


def broken(venv: Venv, wheel_factory: WheelFactory, uv_bin: Path) -> Venv:
    uv_install(venv, "--no-deps", wheel_factory("demo", "1.0", {"demo/__init__.py": b"x = 1\n"}), uv_bin=uv_bin)
    (venv.site_packages / "demo" / "__init__.py").write_text("x = 2\n")
    return venv


def run(tool: Venv, cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH")}
    return subprocess.run(
        [str(tool.python), "-m", "wheeldoctor", "check", "--all", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**clean, **env},
        timeout=120,
        check=False,
    )


def test_from_a_tool_install_the_users_environment_is_found(
    tool: Venv, tmp_path: Path, wheel_factory: WheelFactory, uv_bin: Path
) -> None:
    project = tmp_path / "project"
    (project / "src" / "deep").mkdir(parents=True)
    (project / ".git").mkdir()
    venv = broken(make_venv(project / ".venv", uv_bin=uv_bin), wheel_factory, uv_bin)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    by_variable = run(tool, elsewhere, VIRTUAL_ENV=str(venv.prefix))
    assert by_variable.returncode == 1, by_variable.stderr
    assert by_variable.stderr.splitlines()[0] == f"environment: {venv.prefix / 'bin' / 'python'} (from VIRTUAL_ENV)"
    assert "WD001" in by_variable.stdout

    by_conda = run(tool, elsewhere, CONDA_PREFIX=str(venv.prefix))
    assert by_conda.returncode == 1 and "(from CONDA_PREFIX)" in by_conda.stderr.splitlines()[0]

    by_dot_venv = run(tool, project / "src" / "deep")
    assert by_dot_venv.returncode == 1, by_dot_venv.stderr
    assert f"(from {project / '.venv'})" in by_dot_venv.stderr.splitlines()[0]

    by_directory = run(tool, elsewhere, "--python", str(venv.prefix))
    assert by_directory.returncode == 1 and "WD001" in by_directory.stdout

    refused = run(tool, elsewhere)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "wheeldoctor's own" in refused.stderr and "uv-receipt.toml" in refused.stderr
    for choice in ("VIRTUAL_ENV", ".venv", "--python", "--path", "python = PATH in the tool.wheeldoctor table"):
        assert choice in refused.stderr, choice


def test_the_config_python_sets_the_default(
    tool: Venv, tmp_path: Path, venv_factory: VenvFactory, wheel_factory: WheelFactory, uv_bin: Path
) -> None:
    venv = broken(venv_factory("somewhere"), wheel_factory, uv_bin)
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "pyproject.toml").write_text(f'[tool.wheeldoctor]\npython = "{venv.prefix}"\n')
    done = run(tool, project)
    assert done.returncode == 1, done.stderr
    assert "(from the config's python)" in done.stderr.splitlines()[0]


def test_the_config_file_given_sets_the_python_over_the_nearest_config(
    tool: Venv, tmp_path: Path, venv_factory: VenvFactory, wheel_factory: WheelFactory, uv_bin: Path
) -> None:
    venv = broken(venv_factory("somewhere"), wheel_factory, uv_bin)
    healthy = venv_factory("healthy")
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "pyproject.toml").write_text(f'[tool.wheeldoctor]\npython = "{healthy.prefix}"\n')
    given = tmp_path / "configs" / "c.toml"
    given.parent.mkdir()
    given.write_text(f'python = "{os.path.relpath(venv.python, given.parent)}"\n')  # relative to the file
    clean = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH")}
    for argv in (["check", "--all"], ["doctor"], ["fix", "--all", "--dry-run"]):
        done = subprocess.run(
            [str(tool.python), "-m", "wheeldoctor", *argv, "--config", str(given)],
            capture_output=True,
            text=True,
            cwd=project,
            env=clean,
            stdin=subprocess.DEVNULL,
            timeout=120,
            check=False,
        )
        assert done.returncode == 1, (argv, done.stdout, done.stderr)
        first = done.stderr.splitlines()[0]
        assert first.startswith("environment: ") and "(from the config's python)" in first, first
        assert str(healthy.prefix) not in first
        assert "demo" in done.stdout + done.stderr, (argv, done.stdout)


def test_a_directory_without_an_interpreter_is_one_line(tool: Venv, tmp_path: Path) -> None:
    done = run(tool, tmp_path, "--python", str(tmp_path))
    assert done.returncode == 2 and "no bin/python" in done.stderr and "Traceback" not in done.stderr


def test_discover_order(tmp_path: Path) -> None:
    a, b = make_venv(tmp_path / "a"), make_venv(tmp_path / "b")
    project = tmp_path / "p"
    make_venv(project / ".venv")
    running = str(tmp_path / "running")
    env = {"VIRTUAL_ENV": str(a.prefix), "CONDA_PREFIX": str(b.prefix)}
    assert discover(env, str(project), running).reason == "from VIRTUAL_ENV"
    assert discover({"CONDA_PREFIX": str(b.prefix)}, str(project), running).reason == "from CONDA_PREFIX"
    assert discover({}, str(project), running).reason == f"from {project / '.venv'}"
    assert discover({}, str(tmp_path), running).python is None
    assert discover({"UV_TOOL_DIR": str(tmp_path)}, str(project), str(a.prefix)).python is not None
    with pytest.raises(Refusal, match="UV_TOOL_DIR"):
        discover({"UV_TOOL_DIR": str(tmp_path)}, str(tmp_path), str(a.prefix))
    # The venv wheeldoctor itself runs in, activated: checked as the running interpreter.
    assert discover({"VIRTUAL_ENV": str(a.prefix)}, str(tmp_path), str(a.prefix)).python is None

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


#: Every command that looks at an environment, as a user runs it without naming one.
def _every_command(wheel: Path) -> dict[str, list[str]]:
    return {
        "check": ["check", "--all"],
        "deps": ["deps"],
        "doctor": ["doctor"],
        "fix": ["fix", "--all", "--dry-run"],
        "imports": ["imports", "demo"],
        "wheels": ["wheels", str(wheel)],
        "snapshot": ["snapshot", "-o", os.devnull],
    }


def _run(python: Path, cwd: Path, argv: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH")}
    return subprocess.run(
        [str(python), "-m", "wheeldoctor", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**clean, **env},
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


def test_every_command_finds_the_activated_venv_the_same_way(
    tool: Venv, tmp_path: Path, wheel_factory: WheelFactory, uv_bin: Path
) -> None:
    """From a tool install, in an activated venv: one line, the same for every command, and the
    venv is what each one looks at (``imports`` ran in the tool's own venv before)."""
    venv = broken(make_venv(tmp_path / "project" / ".venv", uv_bin=uv_bin), wheel_factory, uv_bin)
    over = wheel_factory("other", "1.0", {"demo/__init__.py": b"x = 3\n"})  # would replace demo's file
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    line = f"environment: {venv.prefix / 'bin' / 'python'} (from VIRTUAL_ENV)"
    for command, argv in _every_command(over).items():
        done = _run(tool.python, elsewhere, argv, VIRTUAL_ENV=str(venv.prefix))
        assert done.stderr.splitlines()[:1] == [line], (command, done.stderr)
        assert "Traceback" not in done.stderr, command
        if command == "imports":
            assert done.returncode == 0, done.stdout  # demo is importable there, not in the tool's venv
            assert f"imported with {venv.prefix / 'bin' / 'python'}" in done.stdout
        elif command == "wheels":
            assert "overwrite: installing other would replace" in done.stdout and "(recorded by demo)" in done.stdout
            assert not done.stdout.startswith("environment:")  # said once, on stderr
        elif command == "snapshot":
            assert done.returncode == 0, done.stderr
        elif command == "deps":  # metadata alone: healthy, and only the venv's one distribution
            assert done.returncode == 0 and done.stdout.startswith("1 distribution(s)"), done.stdout
        else:
            assert done.returncode == 1 and "demo" in done.stdout + done.stderr, (command, done.stdout)
    alone = _run(tool.python, elsewhere, ["wheels", str(over), "--no-environment"], VIRTUAL_ENV=str(venv.prefix))
    assert (alone.returncode, alone.stderr) == (0, ""), alone.stderr  # against each other only: none looked for


def test_a_pre_commit_hook_checks_the_project_not_its_own_venv(
    tmp_path: Path, wheel_factory: WheelFactory, uv_bin: Path
) -> None:
    """pre-commit runs a ``language: python`` hook from ``.../py_env-*`` with VIRTUAL_ENV set to that
    venv (its ``get_env_patch``): the hook must check the project's ``.venv``, never its own."""
    hook = make_venv(tmp_path / "pre-commit" / "repo1234" / "py_env-python3", uv_bin=uv_bin)
    here = [str(Path(wheeldoctor.__file__).parent.parent), *(p for p in sys.path if p.endswith("site-packages"))]
    (hook.site_packages / "wheeldoctor-dev.pth").write_text("\n".join(here) + "\n")
    project = tmp_path / "project"
    venv = broken(make_venv(project / ".venv", uv_bin=uv_bin), wheel_factory, uv_bin)
    as_hook = {"VIRTUAL_ENV": str(hook.prefix), "PRE_COMMIT": "1"}

    done = _run(hook.python, project, ["check", "--all"], **as_hook)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.splitlines()[0] == (
        f"environment: {venv.prefix / 'bin' / 'python'} (from {venv.prefix}; "
        f"VIRTUAL_ENV={hook.prefix} passed over: it is a pre-commit hook's venv)"
    )
    assert "WD001" in done.stdout

    imports = _run(hook.python, project, ["imports", "demo"], **as_hook)
    assert imports.returncode == 0 and f"imported with {venv.prefix / 'bin' / 'python'}" in imports.stdout

    alone = tmp_path / "no-venv-here"
    alone.mkdir()
    refused = _run(hook.python, alone, ["check", "--all"], **as_hook)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "the hook's own environment" in refused.stderr and "--python, .venv/bin/python" in refused.stderr
    wheels = _run(hook.python, alone, ["wheels", str(wheel_factory("solo", "1.0", {"solo.py": b""}))], **as_hook)
    assert wheels.returncode == 0, wheels.stderr  # the wheels alone: still worth checking
    assert wheels.stderr.startswith("environment: none (the only one found is wheeldoctor's own")


def _tool_demo(wheel_factory: WheelFactory) -> Path:
    return wheel_factory(
        "demo-tool",
        "1.0",
        {"demo_tool.py": b"import sys\ndef main():\n    print(sys.prefix)\n"},
        console_scripts={"demo-tool": "demo_tool:main"},
    )


def test_a_uv_tool_venv_in_virtual_env_is_passed_over(
    tmp_path: Path, wheel_factory: WheelFactory, uv_bin: Path
) -> None:
    """``uv tool install`` and ``uvx`` environments, made by uv itself, are never the target."""
    tools, bins = tmp_path / "uv-tools", tmp_path / "uv-bin"
    env = {**os.environ, "UV_TOOL_DIR": str(tools), "UV_TOOL_BIN_DIR": str(bins), "UV_NO_CONFIG": "1"}
    wheel = _tool_demo(wheel_factory)
    subprocess.run([uv_bin, "tool", "install", "--offline", str(wheel)], env=env, check=True, capture_output=True)
    installed = tools / "demo-tool"
    assert (installed / "uv-receipt.toml").is_file()
    ran = subprocess.run(
        [uv_bin, "tool", "run", "--isolated", "--offline", "--from", str(wheel), "demo-tool"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    uvx = Path(ran.stdout.strip())  # the environment uvx ran the tool from, in uv's cache
    project = tmp_path / "project"
    venv = broken(make_venv(project / ".venv", uv_bin=uv_bin), wheel_factory, uv_bin)
    line = f"environment: {venv.prefix / 'bin' / 'python'} (from {venv.prefix}; VIRTUAL_ENV={{}} passed over: {{}})"
    for prefix, why in ((installed, "it holds uv-receipt.toml"), (uvx, "it is an environment in uv's cache (uvx)")):
        done = _run(Path(sys.executable), project, ["check", "--all"], VIRTUAL_ENV=str(prefix))
        assert done.returncode == 1, done.stderr
        assert done.stderr.splitlines()[0] == line.format(prefix, why)


@pytest.mark.network
def test_a_pipx_venv_in_virtual_env_is_passed_over(tmp_path: Path, wheel_factory: WheelFactory, uv_bin: Path) -> None:
    """A venv pipx made for an app (``pipx_metadata.json``) is never the target."""
    pipx = make_venv(tmp_path / "pipx-itself", uv_bin=uv_bin)
    subprocess.run([uv_bin, "pip", "install", "-q", "--python", pipx.python, "pipx"], check=True, timeout=300)
    home = tmp_path / "pipx-home"
    env = {**os.environ, "PIPX_HOME": str(home), "PIPX_BIN_DIR": str(tmp_path / "pipx-bin")}
    wheel = _tool_demo(wheel_factory)
    subprocess.run([pipx.bin / "pipx", "install", str(wheel)], env=env, check=True, capture_output=True, timeout=300)
    app = home / "venvs" / "demo-tool"
    assert (app / "pipx_metadata.json").is_file()
    project = tmp_path / "project"
    venv = broken(make_venv(project / ".venv", uv_bin=uv_bin), wheel_factory, uv_bin)
    done = _run(Path(sys.executable), project, ["check", "--all"], VIRTUAL_ENV=str(app))
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[0] == (
        f"environment: {venv.prefix / 'bin' / 'python'} (from {venv.prefix}; "
        f"VIRTUAL_ENV={app} passed over: it holds pipx_metadata.json)"
    )


def test_discover_passes_over_tool_venvs_in_the_variables(tmp_path: Path) -> None:
    project = tmp_path / "p"
    dot_venv = make_venv(project / ".venv")
    receipt = make_venv(tmp_path / "tool")
    (receipt.prefix / "uv-receipt.toml").write_text("")
    hook = make_venv(tmp_path / "cache" / "repo1" / "py_env-python3")
    conda = make_venv(tmp_path / "conda")
    running = str(tmp_path / "running")
    chosen = discover({"VIRTUAL_ENV": str(receipt.prefix)}, str(project), running)
    assert chosen.python == str(dot_venv.prefix / "bin" / "python")
    assert (
        chosen.reason == f"from {dot_venv.prefix}; VIRTUAL_ENV={receipt.prefix} passed over: it holds uv-receipt.toml"
    )
    # The next candidate in order is taken: CONDA_PREFIX before the config and .venv.
    chosen = discover({"VIRTUAL_ENV": str(hook.prefix), "CONDA_PREFIX": str(conda.prefix)}, str(project), running)
    assert chosen.python == str(conda.prefix / "bin" / "python")
    assert chosen.reason.startswith("from CONDA_PREFIX; VIRTUAL_ENV=")
    # The hook's venv is the running one (pre-commit activates it): still passed over.
    chosen = discover({"VIRTUAL_ENV": str(hook.prefix)}, str(project), str(hook.prefix))
    assert chosen.python == str(dot_venv.prefix / "bin" / "python")
    with pytest.raises(Refusal, match="hook's own environment"):
        discover({"VIRTUAL_ENV": str(hook.prefix)}, str(tmp_path / "cache"), str(hook.prefix))

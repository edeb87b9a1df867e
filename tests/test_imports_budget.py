"""What each command imports: the heavy modules stay off the paths that do not need them.

Every run is a real process (``python -X importtime``), stdout piped as in CI; the modules
listed are those its importtime report names. A control run forces a terminal (rich must
then appear) and one goes through typer, so the method itself is shown to see them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import Venv, build_wheel, make_venv, uv_install

#: Never imported by ``import wheeldoctor`` (serving processes call the gate at start-up) or ``--version``.
LIGHT = {
    "rich",
    "typer",
    "click",
    "packaging",
    "asyncio",
    "multiprocessing",
    "concurrent",
    "subprocess",
    "json",
    "dataclasses",
    "inspect",
    "pickle",
}
#: Never imported by a command whose report is piped.
NO_TERMINAL = {"rich", "typer", "click"}
#: Never imported by ``check``: ``importlib.resources`` brought them to read the known-hooks registry.
UNUSED_BY_CHECK = {"importlib.resources", "zipfile", "pathlib", "urllib.parse", "tempfile", "shutil"}
#: Other commands' own modules, never imported by a ``check`` whose ``--python`` names an interpreter:
#: deps's command and judge, fix's plan, and the search for an environment. (The duplicates' judge is
#: check's too: it finds the stale dist-infos that ``check`` verifies and names, WD052.)
OTHER_COMMANDS = {
    "wheeldoctor.commands.deps",
    "wheeldoctor.judge.deps",
    "wheeldoctor.repair.plan",
    "wheeldoctor.where.discover",
}


def imported(*args: str, code: str | None = None, env: dict[str, str] | None = None) -> set[str]:
    """The modules a run of ``python -m wheeldoctor ARGS`` (or ``-c CODE``) imported, stdout piped."""
    run = ["-c", code] if code is not None else ["-m", "wheeldoctor", *args]
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *run],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**{k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}, **(env or {})},
        timeout=120,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    return {line.rsplit("|", 1)[1].strip() for line in lines[1:]}


def tops(modules: set[str]) -> set[str]:
    """The top-level packages of ``modules``."""
    return {m.split(".")[0] for m in modules}


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """A uv venv of three distributions: requirements with a specifier, a marker, an extra; no clash."""
    root = tmp_path_factory.mktemp("budget")
    wheels = [
        build_wheel(root / "w", "base-lib", "1.2", {"base_lib/__init__.py": b""}),
        build_wheel(root / "w", "mid-lib", "0.5", {"mid_lib/__init__.py": b""}, requires=["base-lib>=1"]),
        build_wheel(
            root / "w",
            "app-lib",
            "2.0",
            {"app_lib/__init__.py": b""},
            requires=["mid-lib", 'base-lib; python_version >= "3"'],
            extras={"fast": ["mid-lib>=0.1"]},
        ),
    ]
    venv = make_venv(root / "venv")
    uv_install(venv, "--no-deps", *wheels)
    return venv


def test_import_wheeldoctor_stays_light() -> None:
    modules = imported(code="import wheeldoctor")
    assert "wheeldoctor.gate.predicate" in modules  # the method sees our own modules
    assert not tops(modules) & LIGHT
    gate_parts = {"wheeldoctor.model", "wheeldoctor.model.sitedirs"}  # the path algebra the gate shares
    assert not {
        m
        for m in modules - gate_parts
        if m.startswith("wheeldoctor.") and not m.startswith(("wheeldoctor.gate", "wheeldoctor.where"))
    }


def test_version_imports_neither_typer_nor_packaging() -> None:
    modules = imported("--version")
    assert "wheeldoctor.cli.commands" in modules and "wheeldoctor.cli.plain" in modules
    assert not {"wheeldoctor.cli.options", "wheeldoctor.cli.check", "wheeldoctor.cli.deps"} & modules
    assert not tops(modules) & LIGHT
    assert not {"wheeldoctor.where.target", "wheeldoctor.where.environment"} & modules


def test_deps_json_imports_no_renderer_and_no_verifier(env: Venv) -> None:
    modules = imported("deps", "--json", "--python", str(env.python))
    assert "packaging.requirements" in modules and "wheeldoctor.report.json" in modules
    assert not tops(modules) & (NO_TERMINAL | {"multiprocessing", "concurrent", "asyncio", "pickle"})
    absent = {
        "wheeldoctor.judge.files",
        "wheeldoctor.engine.verify",
        "wheeldoctor.engine.audit",
        "wheeldoctor.report.text",
        "wheeldoctor.report.deps_text",
        "wheeldoctor.report.cases",
        "wheeldoctor.report.progress",
        "wheeldoctor.formats.record",  # no RECORD is read
        "wheeldoctor.repair.steps",  # nothing to repair
    }
    assert not absent & modules


def test_deps_text_on_a_pipe_imports_no_rich(env: Venv) -> None:
    modules = imported("deps", "--python", str(env.python))
    assert "wheeldoctor.report.deps_text" in modules
    assert not tops(modules) & NO_TERMINAL
    assert not {"wheeldoctor.judge.files", "wheeldoctor.report.text", "wheeldoctor.report.json"} & modules
    assert not {"wheeldoctor.formats.record", "wheeldoctor.repair.steps", "csv"} & modules


def test_deps_with_a_kept_judgement_imports_no_requirement_parser(env: Venv, tmp_path: Path) -> None:
    """A second run on the same environment takes the deps memo's judgement: nothing is parsed."""
    cache = {"WHEELDOCTOR_CACHE_DIR": str(tmp_path / "cache")}
    first = imported("deps", "--python", str(env.python), env=cache)
    assert "packaging.requirements" in first
    again = imported("deps", "--python", str(env.python), env=cache)
    assert "wheeldoctor.engine.deps_memo" in again and "wheeldoctor.report.deps_text" in again
    assert not {"packaging.requirements", "packaging.markers", "packaging.specifiers"} & again


def test_check_imports_no_requirement_parser_where_nothing_clashes(env: Venv) -> None:
    modules = imported("check", "--all", "--json", "--python", str(env.python))
    assert "wheeldoctor.judge.files" in modules and "wheeldoctor.report.json" in modules
    assert not tops(modules) & NO_TERMINAL
    assert not {"packaging.requirements", "packaging.markers", "packaging.specifiers"} & modules
    assert not {"wheeldoctor.report.text", "wheeldoctor.report.deps_text"} & modules
    assert not UNUSED_BY_CHECK & modules
    assert {"wheeldoctor.judge.requirements", "wheeldoctor.repair.repairs"} <= modules
    assert not OTHER_COMMANDS & modules


def test_check_reads_the_known_hooks_registry_without_importlib_resources(tmp_path: Path) -> None:
    """A hook that runs code is matched against the shipped registry, read without ``importlib.resources``."""
    wheel = build_wheel(
        tmp_path / "w",
        "hooked",
        "1.0",
        {"hooked/__init__.py": b"", "_editable_impl_hooked.pth": b"import _editable_impl_hooked\n"},
    )
    venv = make_venv(tmp_path / "venv")
    uv_install(venv, "--no-deps", wheel)
    modules = imported("check", "--all", "--json", "--python", str(venv.python), "--no-cache")  # parsed here
    toml = "tomllib" if sys.version_info >= (3, 11) else "tomli"  # tomli where Python has no tomllib
    assert {"wheeldoctor.judge.known_hooks", toml} <= modules
    assert not UNUSED_BY_CHECK & modules


def test_check_text_on_a_pipe_imports_no_rich(env: Venv) -> None:
    modules = imported("check", "app-lib", "--python", str(env.python))
    assert "wheeldoctor.report.text" in modules
    assert not tops(modules) & NO_TERMINAL
    assert not UNUSED_BY_CHECK & modules
    assert not {"wheeldoctor.report.json", "wheeldoctor.report.deps_text"} & modules
    assert not OTHER_COMMANDS & modules


def test_the_controls_see_rich_and_typer(env: Venv) -> None:
    """A forced terminal draws with rich; a line the fast parse declines goes through typer."""
    assert "rich.console" in imported("deps", "--python", str(env.python), env={"FORCE_COLOR": "1"})
    assert "typer" in imported("deps", "--json", "--python", str(env.python), "--")


def test_a_missing_environment_is_refused_without_rich(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "wheeldoctor", "deps", "--python", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and "error: --python" in done.stderr
    assert "rich" not in {
        line.rsplit("|", 1)[1].strip().split(".")[0] for line in done.stderr.splitlines()[1:] if "|" in line
    }

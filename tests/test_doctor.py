"""doctor: files and clashes (check) plus dependencies, duplicates, compatibility; one document, one exit code."""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import Venv, build_wheel, make_venv, pip_install, run_cli, uv_install

CP = f"cp{sys.version_info.major}{sys.version_info.minor}"


def document(*args: str | Path) -> tuple[int, dict[str, Any]]:
    """Exit code and JSON document of one run."""
    done = run_cli(*args, "--json")
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    return done.returncode, json.loads(done.stdout)


@dataclass(frozen=True)
class Envs:
    """A healthy venv, and one with one problem of every sort."""

    healthy: Venv
    sick: Venv


def _pkg(name: str, body: bytes = b"") -> dict[str, bytes]:
    return {f"{name.replace('-', '_')}/__init__.py": body}


@pytest.fixture(scope="module")
def envs(tmp_path_factory: pytest.TempPathFactory, uv_bin: Path) -> Envs:
    """Both venvs, built once; nothing here changes them."""
    root = tmp_path_factory.mktemp("doctor")
    wheels = root / "wheels"
    top = build_wheel(wheels, "top", "1.0", _pkg("top"), requires=["base>=1"])
    base = build_wheel(wheels, "base", "1.0", _pkg("base", b"OK = True\n"))
    healthy = make_venv(root / "healthy", uv_bin=uv_bin)
    pip_install(healthy, "--no-index", "--no-deps", top, base)

    sick = make_venv(root / "sick", uv_bin=uv_bin)
    pip_install(sick, "--no-index", "--no-deps", top, base, build_wheel(wheels, "dup", "1.0", _pkg("dup")))
    (sick.site_packages / "base" / "__init__.py").write_bytes(b"OK = False\n")  # files: modified
    shutil.copytree(sick.dist_info("dup"), sick.site_packages / "dup-0.9.dist-info")  # duplicates: stale
    pip_install(
        sick, "--no-index", "--no-deps", build_wheel(wheels, "lonely", "1.0", _pkg("lonely"), requires=["gone"])
    )
    uv_install(
        sick,
        "--no-deps",
        "--python-platform",
        "x86_64-pc-windows-msvc",
        build_wheel(wheels, "winonly", "1.0", _pkg("winonly"), tag=f"{CP}-{CP}-win_amd64"),
        uv_bin=uv_bin,
    )  # compatibility: tags
    return Envs(healthy, sick)


def test_healthy_env_exits_0_with_every_section(envs: Envs) -> None:
    rc, doc = document("doctor", "--python", envs.healthy.python)
    assert rc == 0
    assert (doc["command"], doc["healthy"], doc["schema_version"]) == ("doctor", True, "1.2")
    assert doc["verdicts"] == {"check": True, "dependencies": True, "duplicates": True, "compatibility": True}
    assert (doc["dependency_conflicts"], doc["duplicates"], doc["compatibility"]) == ([], [], [])
    assert {d["name"] for d in doc["distributions"]} == {"top", "base"}


def test_doctor_carries_the_whole_check_document(envs: Envs) -> None:
    # Whatever check reports (clashes included) is part of doctor, key for key.
    _, check = document("check", "--all", "--python", envs.sick.python)
    _, doc = document("doctor", "--python", envs.sick.python)
    for key, value in check.items():
        if key not in {"command", "healthy", "summary"}:
            assert doc[key] == value, key
    assert check["summary"].items() <= doc["summary"].items()


def test_every_sort_of_problem_in_one_document_and_one_exit_code(envs: Envs) -> None:
    rc, doc = document("doctor", "--python", envs.sick.python)
    assert rc == 1
    assert doc["healthy"] is False
    assert doc["verdicts"] == {"check": False, "dependencies": False, "duplicates": False, "compatibility": False}
    broken = {d["name"] for d in doc["distributions"] if d["status"] == "broken"}
    assert broken == {"base", "dup"}  # dup: a copied dist-info beside it (WD052), as check --all says
    assert [(c["dist"], c["kind"], c["name"]) for c in doc["dependency_conflicts"]] == [("lonely", "missing", "gone")]
    assert [(d["name"], d["kind"]) for d in doc["duplicates"]] == [("dup", "stale")]
    assert [(f["dist"], f["code"]) for f in doc["compatibility"]] == [("winonly", "WD031")]


def test_text_report_ends_with_one_verdict(envs: Envs) -> None:
    done = run_cli("doctor", "--python", envs.sick.python)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0].startswith("environment: python ")
    assert lines[-1] == "doctor: problems in files, dependencies, duplicates, compatibility"
    assert any(line.startswith("lonely 1.0: WD040: requires gone") for line in lines)
    assert any(line.startswith("dup: WD050: ") for line in lines)
    assert any(line.startswith("winonly 1.0: WD031: ") for line in lines)
    assert run_cli("doctor", "--python", envs.healthy.python).stdout.splitlines()[-1] == "doctor: healthy"


def test_unreadable_metadata_is_said_once(tmp_path: Path, uv_bin: Path) -> None:
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    pip_install(venv, "--no-index", "--no-deps", build_wheel(tmp_path, "nameless", "1.0", _pkg("nameless")))
    metadata = venv.dist_info("nameless") / "METADATA"
    metadata.write_text(metadata.read_text().replace("Name: nameless\n", ""))
    rc, deps = document("deps", "--python", venv.python)
    assert (rc, [f["code"] for f in deps["compatibility"]]) == (1, ["WD016"])
    rc, doc = document("doctor", "--python", venv.python)
    assert rc == 1
    assert doc["compatibility"] == []  # check's own finding says it
    assert any(f["code"] == "WD016" for d in doc["distributions"] for f in d["findings"])


@pytest.mark.parametrize("command", ["deps", "doctor"])
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--python", "/nonexistent/python"], "no such interpreter"),
        (["--path", "/nonexistent/site"], "no such directory"),
        (["--python", sys.executable, "--path", "/tmp"], "not both"),
    ],
)
def test_bad_targets_are_one_line_and_exit_2(command: str, args: list[str], message: str) -> None:
    done = run_cli(command, *args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert message in done.stderr
    assert "Traceback" not in done.stderr

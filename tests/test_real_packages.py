"""Popular packages from PyPI, installed by real pip and real uv: not one finding.

These download (a few MB in all), so they are marked ``network`` and skipped when PyPI
cannot be reached. Deselect them with ``-m "not network"``.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import Venv, make_venv, pip_install, uv_install

pytestmark = pytest.mark.network

#: Pure and binary wheels, a vendoring-heavy one (setuptools), and console scripts (black).
PACKAGES = ["requests", "pyyaml", "rich", "six", "setuptools", "black"]
BIN = Path(sys.executable).parent  # the dev venv's pip and uv, for running tips


@pytest.fixture(scope="module", autouse=True)
def _pypi_reachable() -> None:
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError as e:
        pytest.skip(f"PyPI is not reachable ({e})")


def check(venv: Venv, *args: str) -> tuple[int, dict[str, Any]]:
    """``wheeldoctor check --all --strict --json`` on ``venv``; the exit code and the document."""
    done = subprocess.run(
        [sys.executable, "-m", "wheeldoctor", "check", *args, "--python", str(venv.python), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert "Traceback" not in done.stderr
    return done.returncode, json.loads(done.stdout)


def problems(document: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    """Every finding in a document, as (distribution, code, path)."""
    return [(d["name"], f["code"], f["path"]) for d in document["distributions"] for f in d["findings"]]


@pytest.fixture(scope="module", params=["pip", "uv", "uv-compile"])
def popular(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, uv_bin: Path) -> Venv:
    """A venv holding PACKAGES and their dependencies, installed one way."""
    venv = make_venv(tmp_path_factory.mktemp(f"popular-{request.param}") / "venv", uv_bin=uv_bin)
    if request.param == "pip":
        pip_install(venv, *PACKAGES)
    elif request.param == "uv":
        uv_install(venv, *PACKAGES, uv_bin=uv_bin)
    else:
        uv_install(venv, "--compile-bytecode", *PACKAGES, uv_bin=uv_bin)
    return venv


def test_popular_packages_have_no_finding(popular: Venv) -> None:
    rc, document = check(popular, "--all", "--strict")
    assert problems(document) == []
    assert rc == 0
    names = {d["name"] for d in document["distributions"]}
    assert {"requests", "pyyaml", "rich", "six", "setuptools", "black", "urllib3", "click"} <= names
    assert {d["status"] for d in document["distributions"]} == {"intact"}
    assert (popular.bin / "black").is_file()


def test_a_damaged_popular_package_is_found(popular: Venv) -> None:
    target = popular.site_packages / "requests" / "api.py"
    original = target.read_bytes()
    try:
        target.write_bytes(original.replace(b"def get(", b"def got(", 1))
        rc, document = check(popular, "requests", "urllib3")
    finally:
        target.write_bytes(original)
    assert rc == 1
    assert problems(document) == [("requests", "WD001", "requests/api.py")]


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_the_printed_tip_heals_a_real_package(installer: str, tmp_path: Path, uv_bin: Path) -> None:
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    if installer == "pip":
        pip_install(venv, "six")
    else:
        uv_install(venv, "six", uv_bin=uv_bin)
    (venv.site_packages / "six.py").write_bytes(b"# gone\n")
    done = subprocess.run(
        [sys.executable, "-m", "wheeldoctor", "check", "six", "--python", str(venv.python)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1
    tip = done.stdout.splitlines()[-1]
    assert tip.startswith("Tip: uv pip install" if installer == "uv" else "Tip: pip --python")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    healed = subprocess.run(
        shlex.split(tip.removeprefix("Tip: ")), capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert healed.returncode == 0, healed.stdout + healed.stderr
    rc, document = check(venv, "--all", "--strict")
    assert (rc, problems(document)) == (0, [])


PROJECT = {
    "setuptools": '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n',
    "hatchling": '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n',
}


@pytest.mark.parametrize(("backend", "installer"), [("setuptools", "pip"), ("hatchling", "pip"), ("hatchling", "uv")])
def test_editable_install_has_no_finding(backend: str, installer: str, tmp_path: Path, uv_bin: Path) -> None:
    project = tmp_path / "project"
    (project / "edit_me").mkdir(parents=True)
    (project / "edit_me" / "__init__.py").write_text("def main() -> None:\n    print('editable')\n")
    (project / "pyproject.toml").write_text(
        PROJECT[backend] + '[project]\nname = "edit-me"\nversion = "0.1"\n[project.scripts]\nedit-me = "edit_me:main"\n'
    )
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    if installer == "pip":
        pip_install(venv, "-e", project)
    else:
        uv_install(venv, "-e", project, uv_bin=uv_bin)
    rc, document = check(venv, "--all", "--strict")
    assert (rc, problems(document)) == (0, [])
    assert [d["status"] for d in document["distributions"] if d["name"] == "edit-me"] == ["intact"]
    # Editing the source is the point of an editable install: still no finding.
    (project / "edit_me" / "__init__.py").write_text("def main() -> None:\n    print('edited')\n")
    rc, document = check(venv, "edit-me")
    assert (rc, problems(document)) == (0, [])

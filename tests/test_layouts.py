"""Ordinary layouts, end to end with real installers: each judged by its real owner, nothing false.

A venv that includes a distro's system site directory; stale dist-infos left by pip
(an interrupted upgrade, ``--ignore-installed``, a copied dist-info); egg-info metadata
as pip reads it; apps that pipx installed. Each is built by the real tools, and checked
through the command line as users run it: exit code and words.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import build_wheel, cli_json, find_uv, run_checked, run_cli
from packaging.utils import canonicalize_name

SYSTEM_PYTHON = Path("/usr/bin/python3")
SYSTEM_SITE = "/usr/lib/python3/dist-packages"


def _dpkg_owns(path: Path) -> bool:
    dpkg = shutil.which("dpkg")
    if dpkg is None or not path.exists():
        return False
    done = subprocess.run([dpkg, "-S", str(path)], capture_output=True, text=True, check=False)
    return done.returncode == 0


needs_debian_python = pytest.mark.skipif(
    not _dpkg_owns(SYSTEM_PYTHON), reason="no Debian or Ubuntu /usr/bin/python3 (dpkg -S names no package)"
)


def _system_site_venv(tmp_path: Path) -> Path:
    """``/usr/bin/python3 -m venv --system-site-packages``: the system's dist-packages on its path."""
    venv = tmp_path / "system-site"
    done = subprocess.run(
        [SYSTEM_PYTHON, "-m", "venv", "--without-pip", "--system-site-packages", venv],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"/usr/bin/python3 cannot make a venv here (python3-venv missing?): {done.stderr.strip()[-200:]}")
    return venv / "bin" / "python"


@needs_debian_python
def test_a_system_site_venv_judges_apts_files_as_the_system_interpreter_does(tmp_path: Path) -> None:
    python = _system_site_venv(tmp_path)
    _, system = cli_json("check", "--all", "--python", SYSTEM_PYTHON)
    _, inside = cli_json("check", "--all", "--python", python)
    by_dpkg = {
        d["name"]: d["status"]
        for d in system["distributions"]
        if d["location"] == SYSTEM_SITE and (d["managed_by"] or {}).get("tool") == "dpkg"
    }
    if not by_dpkg:
        pytest.skip(f"no distribution in {SYSTEM_SITE} is a Debian package's here")
    seen = {d["name"]: d for d in inside["distributions"] if d["location"] == SYSTEM_SITE}
    # Every one apt installed is dpkg's there too, with the system interpreter's verdict.
    assert {name: (seen[name]["managed_by"] or {}).get("tool") for name in by_dpkg} == dict.fromkeys(by_dpkg, "dpkg")
    assert {name: seen[name]["status"] for name in by_dpkg} == by_dpkg
    # No repair of apt's files runs pip: apt's own command, whatever the verdict.
    from wheeldoctor.repair.steps import repair_step
    from wheeldoctor.where.target import Target, load_target

    env = load_target(Target(python=str(python)))
    steps = {d.name: repair_step(d, env) for d in env.distributions if d.location == SYSTEM_SITE and d.name in by_dpkg}
    assert [name for name, step in steps.items() if step.runs_pip] == []
    assert {step.argv[:3] for step in steps.values()} == {("apt-get", "install", "--reinstall")}
    # deps: Debian's dist-info and egg-info of one package are one installation, as on the system interpreter.
    _, deps = cli_json("deps", "--python", python)
    assert [d["name"] for d in deps["duplicates"] if d["kind"] == "stale"] == []


# -- apps pipx installed: its -E shebang rewrite ---------------------------------------------------


def _pipx_install(tmp_path: Path, wheel: Path) -> Path:
    """``pipx install WHEEL`` with pipx's uv backend, offline: the app's venv."""
    home = tmp_path / "pipx-home"
    env = {
        "PIPX_HOME": str(home),
        "PIPX_BIN_DIR": str(tmp_path / "pipx-bin"),
        "PIPX_MAN_DIR": str(tmp_path / "pipx-man"),
        "UV_OFFLINE": "1",
        "UV_NO_CONFIG": "1",
        "UV_PYTHON_DOWNLOADS": "never",
        "PATH": f"{Path(find_uv()).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    pipx = [sys.executable, "-m", "pipx", "install", "--backend", "uv", "--python", sys.executable, str(wheel)]
    run_checked(pipx, env=env)
    return home / "venvs" / canonicalize_name(wheel.name.partition("-")[0])


def _cowapp(python: Path) -> tuple[int, dict[str, Any]]:
    code, document = cli_json("check", "--all", "--python", python)
    [app] = [d for d in document["distributions"] if d["name"] == "cowapp"]
    return code, app


def test_a_pipx_app_is_intact_its_shebang_flag_named_and_nothing_more_passes(tmp_path: Path) -> None:
    wheel = build_wheel(
        tmp_path / "wheels", "cowapp", "1.0", {"cowapp/__init__.py": b"def main(): pass\n"},
        console_scripts={"cowapp": "cowapp:main"},
    )  # fmt: skip
    venv = _pipx_install(tmp_path, wheel)
    python, script = venv / "bin" / "python", venv / "bin" / "cowapp"
    assert script.read_bytes().splitlines()[0].endswith(b"/python -E")  # what pipx writes today
    code, app = _cowapp(python)
    [finding] = app["findings"]
    assert (code, app["status"], finding["code"], finding["kind"]) == (0, "intact", "WD062", "rewritten")
    assert finding["message"].startswith("pipx added -E to its python shebang")
    assert app["repair"] is None
    assert "1 rewritten by the installer" in run_cli("check", "--all", "--python", python).stdout.splitlines()[-1]
    # Only the environments pipx made (its pipx_metadata.json) get pipx's rewrite.
    metadata = venv / "pipx_metadata.json"
    kept = metadata.read_bytes()
    metadata.unlink()
    code, app = _cowapp(python)
    assert (code, app["status"], [f["code"] for f in app["findings"]]) == (1, "broken", ["WD002"])
    # Anything more than the flag is altered, in pipx's venv too.
    metadata.write_bytes(kept)
    script.write_bytes(script.read_bytes() + b"import os\n")
    code, app = _cowapp(python)
    assert (code, app["status"], [f["code"] for f in app["findings"]]) == (1, "broken", ["WD002"])

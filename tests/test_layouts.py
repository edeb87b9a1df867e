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
from helpers import (
    Venv,
    build_wheel,
    cli_json,
    find_uv,
    make_venv,
    offline,
    pip_install,
    run_checked,
    run_cli,
    uv_install,
)
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


def test_a_venvs_own_copy_over_apts_gets_no_tip_to_remove_apts(tmp_path: Path) -> None:
    """The venv's copy shadows the system's, as such a venv is made to: named (WD051), never a tip to remove apt's."""
    python = _system_site_venv(tmp_path)
    _, listed = cli_json("check", "--all", "--python", SYSTEM_PYTHON)
    apts = sorted(
        d["name"]
        for d in listed["distributions"]
        if d["location"] == SYSTEM_SITE and (d["managed_by"] or {}).get("tool") == "dpkg"
    )
    if not apts:
        pytest.skip(f"no distribution in {SYSTEM_SITE} is a Debian package's here")
    name = apts[0]
    wheel = build_wheel(tmp_path / "wheels", name, "99.0", {f"{name.replace('-', '_')}_own/__init__.py": b""})
    run_checked([find_uv(), "pip", "install", "--python", str(python), "--no-deps", "--offline", str(wheel)])
    said = run_cli("deps", "--python", python)
    assert f"{name}: WD051" in said.stdout, said.stdout
    assert "remove it with that tool" not in said.stdout and f"Tip: {name}:" not in said.stdout, said.stdout


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


# -- stale dist-infos: whose files are on disk decides; check, deps, doctor and fix agree -------------


def _sixish(wheels: Path, version: str) -> Path:
    """A one-module project like six: each version ships other bytes for the same path."""
    return build_wheel(wheels, "sixish", version, {"sixish.py": f"__version__ = {version!r}\n".encode()})


def _install(installer: str, venv: Venv, *args: str | Path) -> None:
    if installer == "pip":
        pip_install(venv, "--no-index", "--no-deps", *args)
    else:
        uv_install(venv, "--no-deps", "--offline", *args)


def _interrupted_upgrade(tmp_path: Path, installer: str) -> tuple[Venv, Path]:
    """sixish 1.16 upgraded to 1.17, then the old dist-info put back: a real 1.16 RECORD beside 1.17's files."""
    wheels = tmp_path / "wheels"
    old, new = _sixish(wheels, "1.16"), _sixish(wheels, "1.17")
    venv = make_venv(tmp_path / "venv")
    _install(installer, venv, old)
    shutil.copytree(venv.dist_info("sixish"), tmp_path / "kept")
    _install(installer, venv, new)
    shutil.copytree(tmp_path / "kept", venv.site_packages / "sixish-1.16.dist-info")
    return venv, wheels


def _imported(venv: Venv) -> str:
    code = "import importlib.metadata as m, sixish; print(sixish.__version__, m.version('sixish'))"
    return run_checked([venv.python, "-c", code]).stdout.strip()


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_an_interrupted_upgrade_keeps_the_version_whose_files_are_there(installer: str, tmp_path: Path) -> None:
    venv, wheels = _interrupted_upgrade(tmp_path, installer)
    code, document = cli_json("check", "--all", "--python", venv.python)
    [sixish] = [d for d in document["distributions"] if d["name"] == "sixish"]
    stale = [f for f in sixish["findings"] if f["code"] == "WD052"]
    assert (code, sixish["status"], [f["path"] for f in stale]) == (1, "broken", ["sixish-1.16.dist-info"])
    assert (stale[0]["expected"], stale[0]["found"]) == ("sixish 1.17", "sixish 1.16")
    # Whichever dist-info Python reads first, the files are 1.17's, and nobody calls them altered.
    for finding in sixish["findings"]:
        assert "no installed distribution ships these bytes" not in finding["message"]
        if finding["path"] == "sixish.py":
            assert finding["message"].startswith("holds sixish 1.17's bytes")
    # One repair, the same in check's tip, deps', doctor's and fix's plan: keep 1.17.
    tips = {
        command: [
            line for line in run_cli(command, *args, "--python", venv.python).stdout.splitlines() if "Tip:" in line
        ]
        for command, args in (("check", ("--all",)), ("deps", ()), ("doctor", ()))
    }
    commands = {line.rpartition("lists): ")[2] for lines in tips.values() for line in lines if "sixish" in line}
    assert len(commands) == 1 and commands.pop().endswith("sixish==1.17"), tips
    code, plan = cli_json("fix", "--all", "--dry-run", "--python", venv.python)
    assert plan["plan"]["steps"][-1]["version"] == "1.17"
    # The text names no version for the uninstalls: pip takes whichever dist-info it finds first.
    said = [line.strip() for line in run_cli("fix", "--all", "--dry-run", "--python", venv.python).stdout.splitlines()]
    uninstalls = [line.partition(":")[0] for line in said if line.startswith("uninstall ")]
    assert uninstalls == ["uninstall sixish"] * (2 if installer == "pip" else len(uninstalls)), said
    done = run_cli("fix", "--all", "--yes", "--python", venv.python, env=offline(wheels))
    assert done.returncode == 0, done.stdout + done.stderr
    assert _imported(venv) == "1.17 1.17"
    assert [p.name for p in venv.site_packages.glob("sixish-*.dist-info")] == ["sixish-1.17.dist-info"]
    assert cli_json("check", "--all", "--python", venv.python)[0] == 0


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_a_clean_up_whose_install_cannot_be_had_removes_nothing(installer: str, tmp_path: Path) -> None:
    """Its uninstalls would leave no dist-info and no files if the install then failed: it is tried first, dry."""
    venv, wheels = _interrupted_upgrade(tmp_path, installer)
    (wheels / "sixish-1.17-py3-none-any.whl").unlink()  # the kept version is nowhere to be had
    before = sorted(p.name for p in venv.site_packages.iterdir())
    done = run_cli("fix", "--all", "--yes", "--python", venv.python, env=offline(wheels))
    assert done.returncode == 1, done.stdout + done.stderr
    if installer == "pip":  # uv's one step resolves before it removes anything: pip's uninstalls do not
        assert "so its clean-up did not start: nothing was removed" in done.stdout, done.stdout
    assert sorted(p.name for p in venv.site_packages.iterdir()) == before
    assert _imported(venv).split()[0] == "1.17"


def test_an_ignore_installed_downgrade_is_reported_by_check_all(tmp_path: Path) -> None:
    """``pip install --ignore-installed X==old`` over X new: the files are old's, new's dist-info stays behind."""
    wheels = tmp_path / "wheels"
    new, old = _sixish(wheels, "3.20"), _sixish(wheels, "3.6")
    venv = make_venv(tmp_path / "venv")
    pip_install(venv, "--no-index", "--no-deps", new)
    pip_install(venv, "--no-index", "--no-deps", "--ignore-installed", old)
    code, document = cli_json("check", "--all", "--python", venv.python)
    [sixish] = [d for d in document["distributions"] if d["name"] == "sixish"]
    [stale] = [f for f in sixish["findings"] if f["code"] == "WD052"]
    assert (code, stale["path"], stale["expected"]) == (1, "sixish-3.20.dist-info", "sixish 3.6")
    done = run_cli("fix", "--all", "--yes", "--python", venv.python, env=offline(wheels))
    assert done.returncode == 0, done.stdout + done.stderr
    assert _imported(venv) == "3.6 3.6"
    assert cli_json("check", "--all", "--python", venv.python)[0] == 0


def test_a_copied_dist_info_is_named_and_fix_changes_nothing(tmp_path: Path) -> None:
    """A dist-info copied under another version: its RECORD lists the original's files, so no installer removes it."""
    wheels = tmp_path / "wheels"
    venv = make_venv(tmp_path / "venv")
    pip_install(venv, "--no-index", "--no-deps", _sixish(wheels, "1.17"))
    copy = venv.site_packages / "sixish-1.16.dist-info"
    shutil.copytree(venv.dist_info("sixish"), copy)
    (copy / "METADATA").write_text((copy / "METADATA").read_text().replace("Version: 1.17", "Version: 1.16"))
    code, document = cli_json("check", "--all", "--python", venv.python)
    [sixish] = [d for d in document["distributions"] if d["name"] == "sixish"]
    [stale] = [f for f in sixish["findings"] if f["code"] == "WD052"]
    assert (code, stale["path"]) == (1, "sixish-1.16.dist-info")
    assert stale["message"] == (
        "is left behind by every uninstall: a copy of another dist-info: its RECORD lists that one's files, not its own"
    )
    before = sorted(p.name for p in venv.site_packages.iterdir())
    done = run_cli("fix", "--all", "--yes", "--python", venv.python, env=offline(wheels))
    assert done.returncode == 1
    assert "left alone: sixish: stale dist-info: sixish-1.16.dist-info: a copy of another dist-info" in done.stdout
    assert "so every uninstall leaves it behind; remove that directory by hand" in done.stdout
    assert sorted(p.name for p in venv.site_packages.iterdir()) == before
    assert _imported(venv).startswith("1.17 ")


def test_a_dist_info_whose_record_lists_none_of_its_files_is_refused(tmp_path: Path) -> None:
    """What a cut-short uninstall leaves: RECORD, no files of its own listed. pip would say "No files were found
    to uninstall" and exit 0; fix says so first, and runs nothing."""
    wheels = tmp_path / "wheels"
    venv = make_venv(tmp_path / "venv")
    pip_install(venv, "--no-index", "--no-deps", _sixish(wheels, "1.17"))
    husk = venv.site_packages / "sixish-1.16.dist-info"
    husk.mkdir()
    (husk / "METADATA").write_text("Metadata-Version: 2.1\nName: sixish\nVersion: 1.16\n")
    (husk / "INSTALLER").write_text("pip\n")
    (husk / "RECORD").write_text("sixish_old.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n")
    code, document = cli_json("check", "--all", "--python", venv.python)
    [sixish] = [d for d in document["distributions"] if d["name"] == "sixish"]
    [stale] = [f for f in sixish["findings"] if f["code"] == "WD052"]
    assert (code, stale["message"]) == (1, "is left behind by every uninstall: its RECORD lists none of its own files")
    before = sorted(p.name for p in venv.site_packages.iterdir())
    done = run_cli("fix", "--all", "--yes", "--python", venv.python, env=offline(wheels))
    assert done.returncode == 1
    assert "its RECORD lists none of its own files, so every uninstall leaves it behind" in done.stdout
    assert sorted(p.name for p in venv.site_packages.iterdir()) == before


def test_a_step_pip_exits_0_on_without_doing_it_stops_the_plan_and_its_install_still_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real pip says "Skipping sixish as it is not installed" and exits 0: the step failed; its group's install runs."""
    from io import StringIO

    from wheeldoctor.commands.fix import run_steps
    from wheeldoctor.repair.plan import FixStep
    from wheeldoctor.repair.steps import StepKind
    from wheeldoctor.report.fix_text import StreamSink
    from wheeldoctor.results.fix import StepStatus

    wheels = tmp_path / "wheels"
    _sixish(wheels, "1.17")
    venv = make_venv(tmp_path / "venv")  # sixish is not installed: the uninstall has nothing to do
    for key, value in offline(wheels).items():
        monkeypatch.setenv(key, value)
    pip = ("pip", "--python", str(venv.python))

    def step(kind: StepKind, name: str, words: tuple[str, ...], group: str) -> FixStep:
        argv = (*pip, *words)
        return FixStep(
            kind=kind, tool="pip", name=name, version="1.17", argv=argv, fixes="", location=str(venv.site_packages),
            group=group,
        )  # fmt: skip

    steps = (
        step(StepKind.UNINSTALL, "sixish", ("uninstall", "-y", "--", "sixish"), "stale:sixish"),
        step(StepKind.UNINSTALL, "sixish", ("uninstall", "-y", "--", "sixish"), "stale:sixish"),
        step(
            StepKind.INSTALL,
            "sixish",
            ("install", "--force-reinstall", "--no-deps", "--", "sixish==1.17"),
            "stale:sixish",
        ),
        step(StepKind.REINSTALL, "other", ("install", "--force-reinstall", "--no-deps", "--", "other==1.0"), ""),
    )
    output = StringIO()
    results = run_steps(steps, StreamSink(output))
    statuses = [r.status for r in results]
    assert statuses == [StepStatus.FAILED, StepStatus.NOT_RUN, StepStatus.OK, StepStatus.NOT_RUN], output.getvalue()
    assert (results[0].returncode, results[0].error) == (
        0,
        f"pip exited 0, but nothing was uninstalled: 0 dist-info(s) of sixish in {venv.site_packages}, as before "
        "(pip said: WARNING: Skipping sixish as it is not installed.)",
    )
    assert results[2].note == "rolled forward after step 1 failed"
    said = [line.partition("/")[::2] for line in output.getvalue().splitlines() if line.startswith("step ")]
    ends = [(step, rest.partition(": ")[2]) for step, rest in said if rest.partition(": ")[2].startswith("exit")]
    assert ends == [
        ("step 1", "exit 0, but it did not do its job"),
        ("step 3", "exit 0 (rolled forward after step 1 failed)"),
    ]
    assert _imported(venv) == "1.17 1.17"

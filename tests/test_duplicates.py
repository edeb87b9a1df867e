"""Duplicates: a stale dist-info that pip check never mentions, shadowing across sys.path, safe clean-ups.

The stale dist-info is made the way an interrupted upgrade leaves it: version 1.0 installed,
its dist-info kept aside, 2.0 installed over it (the installer removes 1.0), and the old
dist-info put back. The remedies we print are then run for real, and must leave exactly
one intact installation.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from helpers import Venv, build_wheel, cli_json, copy_venv, make_venv, pip_install, run_checked, run_cli, uv_install
from pip_check import ours, pip_check

from wheeldoctor.judge.duplicates import DuplicateKind, find_duplicates
from wheeldoctor.model.environment import Environment
from wheeldoctor.repair.requirements import duplicate_cleanup, removal_elsewhere
from wheeldoctor.where.environment import load_environment


def foo_wheels(directory: Path) -> dict[str, Path]:
    """foo 1.0 ships a module 2.0 dropped, so the stale record names a file that is gone."""
    return {
        "1.0": build_wheel(directory, "foo", "1.0", {"foo/__init__.py": b"V = '1.0'\n", "foo/old.py": b"OLD = 1\n"}),
        "2.0": build_wheel(directory, "foo", "2.0", {"foo/__init__.py": b"V = '2.0'\n"}),
    }


def in_venv(venv: Venv, code: str) -> str:
    """Run ``code`` in the venv's own interpreter; its stdout, stripped."""
    return run_checked([venv.python, "-c", code]).stdout.strip()


def install(installer: str, venv: Venv, wheel: Path, uv_bin: Path) -> None:
    """Install one wheel, no dependencies, with the named real installer."""
    if installer == "pip":
        pip_install(venv, "--no-index", "--no-deps", wheel)
    else:
        uv_install(venv, "--no-deps", wheel, uv_bin=uv_bin)


@dataclass(frozen=True)
class Stale:
    """A venv holding foo 2.0 and the stale dist-info of foo 1.0 in the same directory."""

    installer: str
    venv: Venv
    wheels: Path


@pytest.fixture(scope="session", params=["pip", "uv"])
def stale_template(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, uv_bin: Path) -> Stale:
    """An upgrade from 1.0 to 2.0 that left 1.0's dist-info behind, by pip or by uv: built once each."""
    installer = str(request.param)
    root = tmp_path_factory.mktemp(f"stale-{installer}")
    venv = make_venv(root / "venv", uv_bin=uv_bin)
    wheels = root / "wheels"
    built = foo_wheels(wheels)
    install(installer, venv, built["1.0"], uv_bin)
    kept = root / "kept"
    shutil.copytree(venv.dist_info("foo"), kept)
    install(installer, venv, built["2.0"], uv_bin)
    shutil.copytree(kept, venv.site_packages / "foo-1.0.dist-info")
    install(
        installer, venv, build_wheel(wheels, "needs-foo", "1.0", {"needs_foo.py": b""}, requires=["foo>=2"]), uv_bin
    )
    return Stale(installer, venv, wheels)


@pytest.fixture
def stale(stale_template: Stale, tmp_path: Path) -> Stale:
    """This test's own copy of the stale venv."""
    return replace(stale_template, venv=copy_venv(stale_template.venv, tmp_path / "venv"))


def test_stale_dist_info_is_found_while_pip_check_says_nothing(stale: Stale) -> None:
    pip = pip_check(stale.venv.python)
    # pip never mentions the second dist-info: it sees whichever comes first in directory
    # order (filesystem-dependent), and judges requirements against that one alone.
    assert "dist-info" not in pip.stdout + pip.stderr
    pip_sees_new = pip.returncode == 0
    if pip_sees_new:
        assert pip.stdout.strip() == "No broken requirements found."
    else:
        assert pip.stdout.strip() == "needs-foo 1.0 has requirement foo>=2, but you have foo 1.0."
    rc, document = cli_json("deps", "--python", stale.venv.python)
    assert rc == 1
    [duplicate] = document["duplicates"]
    site = stale.venv.site_packages.resolve()
    paths = {str(site / "foo-1.0.dist-info"), str(site / "foo-2.0.dist-info")}
    assert (duplicate["name"], duplicate["kind"], duplicate["code"]) == ("foo", "stale", "WD050")
    assert set(duplicate["locations"]) == paths
    assert sorted(duplicate["versions"]) == ["1.0", "2.0"]
    # The one Python uses is the one importlib.metadata reads in the target itself.
    used = in_venv(stale.venv, "import importlib.metadata as m; print(m.distribution('foo')._path)")
    assert duplicate["active"] == str(Path(used).resolve())
    assert duplicate["stale"] == sorted(paths - {duplicate["active"]})
    # Requirements are judged against that same one, as pip judges them whenever pip reads
    # metadata through importlib.metadata too (Python 3.11+). On older Pythons pip's
    # pkg_resources backend may take the other dist-info: exactly the ambiguity WD050 names.
    if pip_sees_new == duplicate["active"].endswith("foo-2.0.dist-info"):
        assert ours(document["dependency_conflicts"]) == pip.problems
    else:
        assert sys.version_info < (3, 11)


def _runnable(command: str, uv_bin: Path, wheels: Path) -> list[str]:
    """A printed command, run with the dev venv's pip/uv and offline (``--find-links`` the test wheels)."""
    words = shlex.split(command)
    if words[0] == "uv":
        words[0] = str(uv_bin)
    elif words[0] == "pip":
        words[:1] = [sys.executable, "-m", "pip"]
    if "install" in words and "uninstall" not in words:
        at = words.index("--")  # options before the requirements' "--"
        words[at:at] = ["--no-index", "--find-links", str(wheels)]
    return words


def test_printed_remedy_leaves_one_intact_install(stale: Stale, uv_bin: Path) -> None:
    _, document = cli_json("deps", "--python", stale.venv.python)
    [duplicate] = document["duplicates"]
    commands = duplicate["remedy"]
    if stale.installer == "uv":
        assert len(commands) == 1
        assert "--reinstall-package" in commands[0]
    else:
        # pip removes one dist-info per call: two uninstalls, then the reinstall.
        assert [c.split()[-4:] for c in commands[:2]] == [["uninstall", "-y", "--", "foo"]] * 2
        assert commands[2].endswith("install --no-deps -- foo==2.0")
    for command in commands:
        run_checked(_runnable(command, uv_bin, stale.wheels), env={"PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    assert sorted(p.name for p in stale.venv.site_packages.glob("foo-*.dist-info")) == ["foo-2.0.dist-info"]
    assert in_venv(stale.venv, "import foo; print(foo.V)") == "2.0"
    rc, after = cli_json("deps", "--python", stale.venv.python)
    assert (rc, after["duplicates"], after["dependency_conflicts"]) == (0, [], [])
    check = run_cli("check", "foo", "--python", stale.venv.python)
    assert check.returncode == 0, check.stdout


@pytest.mark.parametrize("stale_template", ["pip"], indirect=True)
@pytest.mark.skipif(
    sys.version_info < (3, 11),
    reason="pip's pkg_resources backend (Python < 3.11) may find the stale dist-info first and remove it",
)
def test_pip_force_reinstall_alone_leaves_the_stale_one(stale: Stale) -> None:
    # Why the remedy is not simply a reinstall: pip removes only the first dist-info it finds.
    wheel = next(stale.wheels.glob("foo-2.0-*.whl"))
    pip_install(stale.venv, "--no-index", "--no-deps", "--force-reinstall", wheel)
    assert len(list(stale.venv.site_packages.glob("foo-*.dist-info"))) == 2


@pytest.fixture
def shadowed(tmp_path: Path, uv_bin: Path) -> tuple[Venv, Path]:
    """foo 2.0 in the venv, foo 1.0 in a directory a .pth file puts after site-packages."""
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    built = foo_wheels(tmp_path / "wheels")
    pip_install(venv, "--no-index", "--no-deps", built["2.0"])
    extra = tmp_path / "extra"
    pip_install(venv, "--no-index", "--no-deps", "--target", extra, built["1.0"])
    (venv.site_packages / "zz_extra.pth").write_text(f"{extra}\n")
    return venv, extra


def test_shadowed_copy_is_reported_but_does_not_fail(shadowed: tuple[Venv, Path], uv_bin: Path) -> None:
    venv, extra = shadowed
    assert pip_check(venv.python).returncode == 0
    rc, document = cli_json("deps", "--python", venv.python)
    assert rc == 0
    [duplicate] = document["duplicates"]
    assert (duplicate["kind"], duplicate["code"], duplicate["stale"]) == ("shadowed", "WD051", [])
    assert duplicate["active"] == str((venv.site_packages / "foo-2.0.dist-info").resolve())
    assert duplicate["shadowed"] == [str((extra / "foo-1.0.dist-info").resolve())]
    assert duplicate["remedy"] == []
    [(location, command)] = duplicate["remove_elsewhere"].items()
    assert location == str(extra.resolve())
    # The optional removal touches that directory only, guided by its RECORD.
    run_checked(_runnable(command, uv_bin, extra))
    assert not (extra / "foo").exists()
    assert not list(extra.glob("foo-*.dist-info"))
    assert in_venv(venv, "import foo; print(foo.V)") == "2.0"
    assert run_cli("check", "foo", "--python", venv.python).returncode == 0


# -- the pure part, on hand-written metadata directories ---------------------------------------


def write_dist_info(site: Path, name: str, version: str, installer: str | None = "pip") -> Path:
    """A minimal dist-info: METADATA (and INSTALLER), nothing else."""
    path = site / f"{name}-{version}.dist-info"
    path.mkdir(parents=True)
    (path / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    if installer is not None:
        (path / "INSTALLER").write_text(installer + "\n")
    return path


def environment(*sites: Path, python: str | None = "/venv/bin/python") -> Environment:
    """Read ``sites`` in order, as a sys.path."""
    return load_environment("test", [str(s) for s in sites], [], python=python)


def test_a_later_directory_holding_two_copies_has_one_shadowed_and_one_stale(tmp_path: Path) -> None:
    first, later = tmp_path / "a", tmp_path / "b"
    write_dist_info(first, "bar", "3.0")
    write_dist_info(later, "bar", "2.0")
    write_dist_info(later, "Bar", "1.0")
    [duplicate] = find_duplicates(environment(first, later))
    assert duplicate.active.version == "3.0"
    assert len(duplicate.shadowed) == len(duplicate.stale) == 1
    assert duplicate.kind is DuplicateKind.STALE
    # Nothing is stale where Python looks first: no reinstall; the later directory is cleaned.
    env = environment(first, later)
    assert duplicate_cleanup(duplicate, env).commands == ()
    assert removal_elsewhere(duplicate, env) == {
        str(later.resolve()): f"uv pip uninstall --python /venv/bin/python --target {later.resolve()} -- bar"
    }


def test_copies_another_tool_installed_get_no_command(tmp_path: Path) -> None:
    venv_site, system_site = tmp_path / "venv", tmp_path / "system"
    write_dist_info(venv_site, "baz", "2.0")
    write_dist_info(system_site, "baz", "1.0", installer="debian")
    write_dist_info(system_site, "qux", "1.0", installer=None)
    write_dist_info(venv_site, "qux", "2.0")
    env = environment(venv_site, system_site)
    found = {d.name: d for d in find_duplicates(env)}
    assert set(found) == {"baz", "qux"}
    for duplicate in found.values():
        assert duplicate.kind is DuplicateKind.SHADOWED
        assert not duplicate.failing
        assert removal_elsewhere(duplicate, env) == {str(system_site.resolve()): None}


def test_without_an_interpreter_the_clean_up_names_the_directory(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write_dist_info(site, "dup", "1.0")
    write_dist_info(site, "dup", "1.0.post1")
    env = environment(site, python=None)
    [duplicate] = find_duplicates(env)
    active = duplicate.active.version
    assert duplicate_cleanup(duplicate, env).commands == (
        f"uv pip uninstall --target {site.resolve()} -- dup",
        f"uv pip install --target {site.resolve()} --no-deps -- dup=={active}",
    )


def test_one_install_per_name_is_no_duplicate(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write_dist_info(site, "one", "1.0")
    write_dist_info(site, "two", "1.0")
    assert find_duplicates(environment(site)) == []

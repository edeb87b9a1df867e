"""``check --all --lock uv.lock`` on real uv projects, locked and synced offline from local wheel folders.

Each project is what uv's documentation describes: a package taken from two indexes by
marker or by extra, the default dependency groups, a wheel by path, an extra spelled in
another case. A freshly synced project must pass, and what it did not install must not.
"""

from __future__ import annotations

import sys
from pathlib import Path

from helpers import build_wheel, cli_json, find_uv, run_checked, run_cli
from test_schema import validate

UV_ENV = {"UV_LINK_MODE": "copy", "UV_NO_PROGRESS": "1", "UV_PYTHON_DOWNLOADS": "never", "UV_OFFLINE": "1"}
HEAD = '[project]\nname = "proj"\nversion = "0.1"\nrequires-python = ">=3.10"\n'


def _uv(project: Path, *args: str) -> None:
    run_checked([find_uv(), *args, "-q", "--python", sys.executable], env=UV_ENV, cwd=project)


def _project(tmp_path: Path, pyproject: str) -> Path:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    (project / "pyproject.toml").write_text(pyproject)
    _uv(project, "lock")
    return project


def _check(project: Path, *options: str) -> tuple[int, str, str]:
    """``check --all --lock``, the flat indexes outside the project given as ``--find-links`` (yours to read)."""
    yours = [f"--find-links={d}" for d in (project.parent / n for n in ("a", "b", "wheels")) if d.is_dir()]
    lock = project / "uv.lock"
    done = run_cli("check", "--all", "--lock", lock, "--python", project / ".venv/bin/python", *yours, *options)
    return done.returncode, done.stdout, done.stderr


def _two_indexes(tmp_path: Path) -> str:
    """Flat indexes ``a`` and ``b``, each with its own build of forky 1.0 (other bytes, same name and version)."""
    for index in ("a", "b"):
        build_wheel(tmp_path / index, "forky", "1.0", {"forky/__init__.py": f"INDEX = {index!r}\n".encode()})
    return "".join(
        f'[[tool.uv.index]]\nname = "{i}"\nurl = "{tmp_path / i}"\nformat = "flat"\nexplicit = true\n' for i in "ab"
    )


def test_a_package_locked_from_two_indexes_by_marker_is_matched_by_its_source(tmp_path: Path) -> None:
    """uv locks forky 1.0 twice (index a off Linux, b on it); the dependency's source says which is installed."""
    project = _project(
        tmp_path,
        HEAD
        + 'dependencies = ["forky==1.0"]\n[tool.uv]\npackage = false\n'
        + _two_indexes(tmp_path)
        + '[tool.uv.sources]\nforky = [{ index = "a", marker = "sys_platform != \'linux\'" },'
        ' { index = "b", marker = "sys_platform == \'linux\'" }]\n',
    )
    locked = (project / "uv.lock").read_text()
    assert locked.count('[[package]]\nname = "forky"') == 2  # the same name and version, twice
    _uv(project, "sync")
    code, out, err = _check(project)
    assert code == 0, out + err
    assert "1 checked: 1 intact; 0 finding(s)" in out


def test_a_flat_index_outside_the_projects_folder_is_read_only_when_given_as_find_links(tmp_path: Path) -> None:
    """A lock may name any path: it is read only inside the lock's folder or a --find-links directory of yours."""
    project = _groups_project(tmp_path)
    _uv(project, "sync")
    done = run_cli("check", "--all", "--lock", project / "uv.lock", "--python", project / ".venv/bin/python")
    assert done.returncode == 2, done.stdout + done.stderr
    wheel = tmp_path / "wheels" / "devpkg-1.0-py3-none-any.whl"
    assert done.stderr.splitlines() == [
        f"error: {wheel}: the lock names a file outside the lock's folder {project}: not read",
        "Tip: pass --find-links DIR, DIR a directory of yours that holds devpkg-1.0-py3-none-any.whl",
    ]
    code, out, err = _check(project)
    assert code == 0, out + err


def test_uvs_pytorch_recipe_of_conflicting_extras_with_an_index_each(tmp_path: Path) -> None:
    """``[tool.uv.sources]`` per extra (uv's CPU/GPU recipe): ``--extra gpu`` is judged against index b's wheel."""
    project = _project(
        tmp_path,
        HEAD
        + 'dependencies = []\n[project.optional-dependencies]\ncpu = ["forky==1.0"]\ngpu = ["forky==1.0"]\n'
        + '[tool.uv]\npackage = false\nconflicts = [[{ extra = "cpu" }, { extra = "gpu" }]]\n'
        + _two_indexes(tmp_path)
        + '[tool.uv.sources]\nforky = [{ index = "a", extra = "cpu" }, { index = "b", extra = "gpu" }]\n',
    )
    _uv(project, "sync", "--extra", "gpu")
    code, out, err = _check(project, "--extra", "gpu")
    assert code == 0, out + err
    assert "WD084" not in out and "WD001" not in out
    code, out, err = _check(project, "--extra", "cpu")  # the other index's build: its RECORD differs
    assert code == 1
    assert "forky 1.0: WD084: forky/__init__.py RECORD rewritten" in out


def _groups_project(tmp_path: Path, uv_table: str = "") -> Path:
    wheels = tmp_path / "wheels"
    for name in ("devpkg", "docpkg", "cpupkg"):
        build_wheel(wheels, name, "1.0", {f"{name}/__init__.py": b""})
    return _project(
        tmp_path,
        HEAD
        + 'dependencies = []\n[project.optional-dependencies]\ncpu = ["cpupkg"]\n'
        + '[dependency-groups]\ndev = ["devpkg"]\ndocs = ["docpkg"]\n'
        + f'[tool.uv]\npackage = false\n{uv_table}[[tool.uv.index]]\nname = "w"\nurl = "{wheels}"\nformat = "flat"\n',
    )


def test_only_the_default_groups_are_expected_as_uv_sync_installs_them(tmp_path: Path) -> None:
    project = _groups_project(tmp_path)
    _uv(project, "sync")  # dev only
    code, out, err = _check(project)
    assert code == 0, out + err
    assert "docpkg" not in out
    code, out, err = _check(project, "--group", "dev", "--group", "docs")
    assert code == 1
    assert "docpkg: WD080: is locked by" in out
    lock, python, wheels = project / "uv.lock", project / ".venv/bin/python", tmp_path / "wheels"
    code, document = cli_json("check", "--all", "--lock", lock, "--python", python, "--find-links", wheels)
    assert code == 0
    # A flat index's wheels have no hash in uv.lock: said as such, not blamed on range requests.
    assert document["fetched"]["range_only"] == 0 and document["fetched"]["no_hash"] == 1
    assert document["fetched"]["by_source"] == {"local": 1}
    validate(document)
    assert "no sha256 in the lock" in err and "by range" not in err


def test_default_groups_of_the_pyproject_beside_the_lock(tmp_path: Path) -> None:
    project = _groups_project(tmp_path, 'default-groups = "all"\n')
    _uv(project, "sync")  # dev and docs
    code, out, err = _check(project)
    assert code == 0, out + err
    assert "2 checked: 2 intact" in out
    (project / "pyproject.toml").write_text(
        (project / "pyproject.toml").read_text().replace('default-groups = "all"', 'default-groups = ["docs"]')
    )
    code, out, err = _check(project)  # devpkg is installed, but not a default group now
    assert code == 1
    assert "devpkg 1.0: WD083: is installed but" in out and "locks it only for other markers, extras or groups" in out


def test_an_extra_is_looked_up_by_its_normalized_name(tmp_path: Path) -> None:
    project = _groups_project(tmp_path)
    _uv(project, "sync", "--extra", "cpu")
    code, out, err = _check(project, "--extra", "CPU")
    assert code == 0, out + err
    assert "2 checked: 2 intact" in out
    code, out, err = _check(project)
    assert code == 1
    assert "cpupkg 1.0: WD083: is installed but" in out and "locks it only for other" in out


def test_a_wheel_source_by_path_is_read_from_beside_the_lock(tmp_path: Path) -> None:
    """``[tool.uv.sources] x = { path = "wheels/x.whl" }``: uv's wheel entry has a hash but no path or URL."""
    build_wheel(tmp_path / "proj" / "wheels", "devpkg", "1.0", {"devpkg/__init__.py": b"D = 1\n"})
    wheel = "wheels/devpkg-1.0-py3-none-any.whl"
    project = _project(
        tmp_path,
        HEAD
        + 'dependencies = ["devpkg"]\n[tool.uv]\npackage = false\n'
        + f'[tool.uv.sources]\ndevpkg = {{ path = "{wheel}" }}\n',
    )
    assert f'source = {{ path = "{wheel}" }}' in (project / "uv.lock").read_text()
    _uv(project, "sync")
    code, out, err = _check(project)
    assert code == 0, out + err
    assert "RECORDs of 1 locked wheel(s) (1 local)" in err and "trust:" not in err  # its sha256 was checked
    (project / "wheels" / "devpkg-1.0-py3-none-any.whl").unlink()
    build_wheel(project / "wheels", "devpkg", "1.0", {"devpkg/__init__.py": b"D = 2\n"})
    code, out, err = _check(project, "--no-cache")
    assert code == 1
    assert "WD085" in out  # another file at the locked path: not the locked wheel

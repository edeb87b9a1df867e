"""Compatibility: Requires-Python and WHEEL tags against the TARGET interpreter; metadata that does not parse.

Incompatible distributions are put in place by the real installers' own escape hatches:
``pip install --ignore-requires-python`` and ``uv pip install --python-platform``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from helpers import Venv, build_wheel, find_interpreter, make_venv, pip_install, uv_install
from packaging.version import Version
from pip_check import pip_check

from wheeldoctor.commands.deps import run_deps
from wheeldoctor.judge.compat import check_compatibility, target_python_version
from wheeldoctor.model.findings import Code
from wheeldoctor.where.target import Target, load_target

CURRENT = f"{sys.version_info.major}.{sys.version_info.minor}"
CP = f"cp{sys.version_info.major}{sys.version_info.minor}"


def _pkg(name: str) -> dict[str, bytes]:
    return {f"{name.replace('-', '_')}/__init__.py": b""}


def codes(venv: Venv | Path, *, path: bool = False) -> dict[str, set[Code]]:
    """Compatibility findings per distribution, for ``--python VENV`` (or ``--path SITE``)."""
    target = Target(paths=(str(venv),)) if path else Target(python=str(venv.python if isinstance(venv, Venv) else venv))
    result = run_deps(load_target(target, with_tags=True))
    found: dict[str, set[Code]] = {}
    for finding in result.compatibility:
        found.setdefault(finding.dist, set()).add(finding.code)
    return found


def test_requires_python_unmet_is_found_where_pip_check_is_silent(tmp_path: Path, uv_bin: Path) -> None:
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    wheels = tmp_path / "wheels"
    pip_install(
        venv,
        "--no-index",
        "--no-deps",
        "--ignore-requires-python",
        build_wheel(wheels, "future-only", "1.0", _pkg("future-only"), requires_python=">=3.99"),
        build_wheel(wheels, "fits", "1.0", _pkg("fits"), requires_python=f">={CURRENT}"),
    )
    assert pip_check(venv.python).returncode == 0
    result = run_deps(load_target(Target(python=str(venv.python)), with_tags=True))
    [finding] = result.compatibility
    assert (finding.code, finding.dist, finding.expected) == (
        Code.REQUIRES_PYTHON_UNMET,
        "future-only",
        "Python >=3.99",
    )
    assert finding.found == ".".join(map(str, sys.version_info[:3]))
    assert not result.healthy


def test_wheel_built_for_another_platform(tmp_path: Path, uv_bin: Path) -> None:
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    wheel = build_wheel(tmp_path / "wheels", "winonly", "1.0", _pkg("winonly"), tag=f"{CP}-{CP}-win_amd64")
    uv_install(venv, "--no-deps", "--python-platform", "x86_64-pc-windows-msvc", wheel, uv_bin=uv_bin)
    assert codes(venv) == {"winonly": {Code.TAGS_UNSUPPORTED}}
    pip = pip_check(venv.python)
    pip_version = Version(__import__("pip").__version__)
    # pip 24.2 added the same check to pip check; older pips are silent about it.
    assert pip.unsupported == ({("winonly", "1.0")} if pip_version >= Version("24.2") else set())


def test_pure_and_compressed_tags_fit(tmp_path: Path, uv_bin: Path) -> None:
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    wheels = tmp_path / "wheels"
    uv_install(
        venv,
        "--no-deps",
        build_wheel(wheels, "anywhere", "1.0", _pkg("anywhere"), tag="py2.py3-none-any"),
        build_wheel(wheels, "exact", "1.0", _pkg("exact"), tag=f"py{CURRENT.replace('.', '')}-none-any"),
        uv_bin=uv_bin,
    )
    assert codes(venv) == {}


def test_tags_and_requires_python_are_the_targets(tmp_path: Path, uv_bin: Path) -> None:
    other = next((v for v in ("3.12", "3.13") if v > CURRENT and find_interpreter(v)), None)
    if other is None:
        pytest.skip("no newer Python installed")
    interpreter = find_interpreter(other)
    assert interpreter is not None
    venv = make_venv(tmp_path / "venv", interpreter, uv_bin=uv_bin)
    nodot = other.replace(".", "")
    pip_install(
        venv,
        "--no-index",
        "--no-deps",
        build_wheel(
            tmp_path / "w", "newer", "1.0", _pkg("newer"), tag=f"py{nodot}-none-any", requires_python=f">={other}"
        ),
    )
    # Judged for the venv's own interpreter: it fits, whether named or found beside --path.
    assert codes(venv) == {}
    assert codes(venv.site_packages, path=True) == {}
    # A copy of the site directory with no interpreter beside it is judged for this
    # (older) interpreter: it does not fit.
    bare = tmp_path / "bare-site"
    shutil.copytree(venv.site_packages, bare)
    assert codes(bare, path=True) == {"newer": {Code.TAGS_UNSUPPORTED, Code.REQUIRES_PYTHON_UNMET}}


def test_metadata_that_does_not_parse_is_a_finding(tmp_path: Path, uv_bin: Path) -> None:
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    wheels = tmp_path / "wheels"
    names = ["bad-tag", "bad-python", "bad-version", "no-name"]
    pip_install(venv, "--no-index", "--no-deps", *(build_wheel(wheels, n, "1.0", _pkg(n)) for n in names))
    wheel_file = venv.dist_info("bad-tag") / "WHEEL"
    wheel_file.write_text(wheel_file.read_text() + "Tag: not-a-valid-tag-at-all\n")
    metadata = venv.dist_info("bad-python") / "METADATA"
    metadata.write_text(metadata.read_text() + "Requires-Python: =>3.8\n")
    metadata = venv.dist_info("bad-version") / "METADATA"
    metadata.write_text(metadata.read_text().replace("Version: 1.0", "Version: one point oh"))
    metadata = venv.dist_info("no-name") / "METADATA"
    metadata.write_text(metadata.read_text().replace("Name: no-name\n", ""))
    assert codes(venv) == {
        "bad-tag": {Code.WHEEL_TAG_INVALID},
        "bad-python": {Code.REQUIRES_PYTHON_INVALID},
        "bad-version": {Code.VERSION_INVALID},
        "no-name": {Code.METADATA_PROBLEM},
    }


def test_unknown_tags_are_a_note_not_a_finding(tmp_path: Path, uv_bin: Path) -> None:
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    wheel = build_wheel(tmp_path, "winonly", "1.0", _pkg("winonly"), tag=f"{CP}-{CP}-win_amd64")
    uv_install(venv, "--no-deps", "--python-platform", "x86_64-pc-windows-msvc", wheel, uv_bin=uv_bin)
    env = load_target(Target(python=str(venv.python)))  # tags not gathered
    assert env.tags is None
    assert check_compatibility(env).findings == ()
    result = run_deps(env)
    assert result.healthy
    assert any("WHEEL tags not checked" in note for note in result.notes)


def test_an_interpreter_too_old_for_our_packaging_gives_no_tags() -> None:
    old = find_interpreter("3.6") or find_interpreter("3.7")
    if old is None:
        pytest.skip("no Python older than packaging supports")
    env = load_target(Target(python=str(old)), with_tags=True)
    assert env.tags is None
    assert env.paths  # the rest of the probe still answered


def test_probe_tags_are_the_interpreters_own(tmp_path: Path, uv_bin: Path) -> None:
    from packaging.tags import sys_tags

    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    env = load_target(Target(python=str(venv.python)), with_tags=True)
    assert env.tags == tuple(str(t) for t in sys_tags())  # same interpreter version and platform as ours
    # sys.path was captured before our packaging was put on it.
    assert all("packaging" not in Path(p).name for p in env.paths)
    assert not any(Path(p) == Path(__import__("packaging").__file__).parent.parent for p in env.paths)


@pytest.mark.parametrize(
    ("markers", "expected"),
    [
        ({"python_full_version": "3.11.7", "python_version": "3.11"}, "3.11.7"),
        ({"python_full_version": "3.13.0rc1", "python_version": "3.13"}, "3.13.0"),  # as pip: release only
        ({"python_full_version": "3.14.0+", "python_version": "3.14"}, "3.14"),  # dev build: not PEP 440
        ({}, None),
    ],
)
def test_target_python_version(markers: dict[str, str], expected: str | None) -> None:
    assert target_python_version(markers.items()) == expected

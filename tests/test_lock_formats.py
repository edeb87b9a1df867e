"""Locks read and selected: pylock.toml by packaging.pylock, uv.lock by its version 1 shape; one-line errors."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from packaging.tags import Tag

from wheeldoctor.formats.lock import LockError, is_lock_path, read_lock
from wheeldoctor.formats.lock_model import LockTarget, best_wheel, locked_wheel
from wheeldoctor.formats.lock_target import current_target, explicit_target

SHA = hashlib.sha256(b"wheel").hexdigest()
LINUX_311 = explicit_target("3.11", ["manylinux_2_28_x86_64"])


def _pylock(tmp_path: Path, body: str, name: str = "pylock.toml") -> Path:
    path = tmp_path / name
    path.write_text('lock-version = "1.0"\ncreated-by = "hand"\n' + body)
    return path


def _wheel(name: str, tag: str, host: str = "https://files.example") -> str:
    return f'{{ url = "{host}/{name}-{tag}.whl", hashes = {{ sha256 = "{SHA}" }} }}'


def test_pylock_selects_the_best_wheel_for_the_target(tmp_path: Path) -> None:
    lock = _pylock(
        tmp_path,
        f"""
[[packages]]
name = "native-pkg"
version = "1.0"
wheels = [
  {_wheel("native_pkg-1.0", "cp311-cp311-win_amd64")},
  {_wheel("native_pkg-1.0", "cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64")},
  {_wheel("native_pkg-1.0", "py3-none-any")},
]

[[packages]]
name = "only-on-windows"
version = "2.0"
marker = "sys_platform == 'win32'"
wheels = [{_wheel("only_on_windows-2.0", "py3-none-any")}]
""",
    )
    read = read_lock(str(lock), LINUX_311)
    assert [p.name for p in read.packages] == ["native-pkg"]
    (package,) = read.packages
    assert package.selected is not None
    assert package.selected.filename == "native_pkg-1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
    assert package.selected.sha256 == SHA
    assert len(package.wheels) == 3
    assert read.listed == {"native-pkg", "only-on-windows"}
    windows = read_lock(str(lock), explicit_target("3.11", ["win_amd64"]))
    assert {p.name for p in windows.packages} == {"native-pkg", "only-on-windows"}
    assert windows.packages[0].selected is not None and windows.packages[0].selected.filename.endswith("win_amd64.whl")


def test_an_older_manylinux_wheel_fits_a_newer_platform_but_not_the_reverse() -> None:
    wheels = [
        locked_wheel("w", filename=f"x-1-cp311-cp311-{p}.whl", url=None, path=None, sha256=None, size=None, base="/")
        for p in ("manylinux_2_34_x86_64", "manylinux_2_17_x86_64")
    ]
    chosen = best_wheel(wheels, LINUX_311.tags)
    assert chosen is not None and chosen.filename.endswith("manylinux_2_17_x86_64.whl")
    assert best_wheel(wheels[:1], LINUX_311.tags) is None


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ('lock-version = "2.0"\ncreated-by = "x"\npackages = []\n', "lock-version"),
        ('created-by = "x"\npackages = []\n', "lock-version"),
        ('lock-version = "1.0"\ncreated-by = "x"\n[[packages]]\nversion = "1"\n', "name"),
        ("not = [toml", "not valid TOML"),
    ],
)
def test_a_bad_pylock_is_one_line_naming_the_key(tmp_path: Path, body: str, key: str) -> None:
    path = tmp_path / "pylock.toml"
    path.write_text(body)
    with pytest.raises(LockError) as caught:
        read_lock(str(path), LINUX_311)
    message = str(caught.value)
    assert key in message
    assert "\n" not in message


@pytest.mark.parametrize("url", ["ftp://example/x-1-py3-none-any.whl", "javascript:alert(1)", "ssh://h/x.whl"])
def test_a_url_that_is_not_http_or_file_is_refused(tmp_path: Path, url: str) -> None:
    lock = _pylock(
        tmp_path,
        f'[[packages]]\nname = "x"\nversion = "1"\nwheels = [{{ url = "{url}", hashes = {{ sha256 = "{SHA}" }} }}]\n',
    )
    with pytest.raises(LockError, match=r"packages\[0\]\.wheels\[0\]\.url: scheme"):
        read_lock(str(lock), LINUX_311)


def test_a_lock_file_name_is_what_pep_751_allows() -> None:
    assert is_lock_path("a/pylock.toml") == "pylock"
    assert is_lock_path("pylock.dev.toml") == "pylock"
    assert is_lock_path("x/uv.lock") == "uv.lock"
    assert is_lock_path("pylock.a.b.toml") is None
    assert is_lock_path("requirements.txt") is None


def _uv_lock(tmp_path: Path, body: str, version: int = 1) -> Path:
    path = tmp_path / "uv.lock"
    path.write_text(f'version = {version}\nrevision = 3\nrequires-python = ">=3.10"\n' + body)
    return path


def _uv_package(name: str, deps: str = "", extra: str = "") -> str:
    url = f"https://files.example/{name}-1.0-py3-none-any.whl"
    return f"""
[[package]]
name = "{name}"
version = "1.0"
source = {{ registry = "https://pypi.org/simple" }}
dependencies = [{deps}]
wheels = [{{ url = "{url}", hash = "sha256:{SHA}", size = 10 }}]
{extra}
"""


def test_uv_lock_follows_the_graph_from_the_project_by_markers_extras_and_groups(tmp_path: Path) -> None:
    body = (
        """
[[package]]
name = "proj"
version = "0.1"
source = { editable = "." }
dependencies = [
    { name = "alpha" },
    { name = "winonly", marker = "sys_platform == 'win32'" },
    { name = "beta", extra = ["fast"] },
]

[package.dev-dependencies]
dev = [{ name = "tester" }]
"""
        + _uv_package("alpha")
        + _uv_package("beta", extra='[package.optional-dependencies]\nfast = [{ name = "speedup" }]')
        + _uv_package("speedup")
        + _uv_package("winonly")
        + _uv_package("tester")
        + _uv_package("orphan")
    )
    lock = _uv_lock(tmp_path, body)
    read = read_lock(str(lock), LINUX_311)
    by_name = {p.name: p for p in read.packages}
    assert set(by_name) == {"proj", "alpha", "beta", "speedup", "tester"}
    assert by_name["proj"].selected is None and by_name["proj"].source == "editable"
    alpha = by_name["alpha"].selected
    assert alpha is not None and alpha.size == 10 and alpha.sha256 == SHA
    no_groups = read_lock(str(lock), LockTarget(markers=LINUX_311.markers, tags=LINUX_311.tags, groups=()))
    assert "tester" not in {p.name for p in no_groups.packages}
    assert read.listed >= {"orphan", "winonly"}


@pytest.mark.parametrize(("version", "key"), [(2, "version"), (0, "version")])
def test_uv_lock_of_another_version_is_refused_naming_the_key(tmp_path: Path, version: int, key: str) -> None:
    lock = _uv_lock(tmp_path, _uv_package("alpha"), version=version)
    with pytest.raises(LockError, match=rf"^{key}: uv.lock version {version} is not supported"):
        read_lock(str(lock), LINUX_311)


def test_uv_lock_bad_fields_name_their_key(tmp_path: Path) -> None:
    lock = _uv_lock(
        tmp_path, '[[package]]\nname = "a"\nversion = "1"\nwheels = [{ url = "gopher://x/a-1-py3-none-any.whl" }]\n'
    )
    with pytest.raises(LockError, match=r"^package\[0\]\.wheels\[0\]\.url: scheme 'gopher' refused"):
        read_lock(str(lock), LINUX_311)
    lock = _uv_lock(
        tmp_path, '[[package]]\nname = "a"\nversion = "1"\nwheels = [{ url = "https://h/not-a-wheel.zip" }]\n'
    )
    with pytest.raises(LockError, match=r"^package\[0\]\.wheels\[0\]: not a wheel file name"):
        read_lock(str(lock), LINUX_311)


@pytest.mark.parametrize(
    ("version", "platform", "line"),
    [
        ("3.99999999999999999999", "linux_x86_64", "--python-version: '3.99999999999999999999': minor version over 99"),
        ("3." + "1" * 5000, "linux_x86_64", "--python-version: '3.1111"),
        ("3.100", "linux_x86_64", "--python-version: '3.100': minor version over 99"),
        ("3.12.1000", "linux_x86_64", "--python-version: '3.12.1000': micro version over 999"),
        ("3.12", "manylinux_2_99999999_x86_64", "--platform: 'manylinux_2_99999999_x86_64': minor version over 99"),
        ("3.12", "musllinux_1_100_x86_64", "--platform: 'musllinux_1_100_x86_64': minor version over 99"),
        ("3.12", "macosx_99999_0_arm64", "--platform: 'macosx_99999_0_arm64': major version over 99"),
        ("3.12", "macosx_10_99999_x86_64", "--platform: 'macosx_10_99999_x86_64': minor version over 99"),
        ("3.12", "manylinux_2_" + "9" * 5000 + "_x86_64", "--platform: 'manylinux_2_9999"),
    ],
)
def test_explicit_target_refuses_absurd_versions(version: str, platform: str, line: str) -> None:
    # packaging's tag functions count down from these: a huge one would never end.
    with pytest.raises(LockError) as caught:
        explicit_target(version, [platform])
    assert str(caught.value).startswith(line)
    assert len(str(caught.value)) < 200


def test_explicit_target_markers_and_tags() -> None:
    target = explicit_target("3.12", ["manylinux_2_28_aarch64"])
    assert target.markers["python_version"] == "3.12"
    assert target.markers["sys_platform"] == "linux"
    assert target.markers["platform_machine"] == "aarch64"
    assert Tag("cp312", "cp312", "manylinux2014_aarch64") in target.tags
    assert Tag("py3", "none", "any") in target.tags
    assert Tag("cp312", "cp312", "manylinux_2_28_x86_64") not in target.tags
    with pytest.raises(LockError, match="--python-version"):
        explicit_target("three", ["linux_x86_64"])
    assert current_target().tags

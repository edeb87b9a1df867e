"""Locks read and selected: pylock.toml by packaging.pylock, uv.lock by its version 1 shape; one-line errors."""

from __future__ import annotations

import hashlib
import os
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


def _forky(source: str, digest: str) -> str:
    return f"""
[[package]]
name = "forky"
version = "1.0"
source = {{ registry = "{source}" }}
wheels = [{{ url = "{source}/forky-1.0-py3-none-any.whl", hash = "sha256:{digest}" }}]
"""


def _root(deps: str) -> str:
    return f'\n[[package]]\nname = "proj"\nversion = "0.1"\nsource = {{ virtual = "." }}\ndependencies = [{deps}]\n'


def test_uv_lock_dependency_is_matched_by_name_version_and_source(tmp_path: Path) -> None:
    other = hashlib.sha256(b"other").hexdigest()
    packages = _forky("https://a.example", SHA) + _forky("https://b.example", other)
    named = '{ name = "forky", version = "1.0", source = { registry = "https://b.example" } }'
    read = read_lock(str(_uv_lock(tmp_path, _root(named) + packages)), LINUX_311)
    (forky,) = [p for p in read.packages if p.name == "forky"]
    assert forky.selected is not None and forky.selected.sha256 == other  # b's, not the first listed
    for deps, error in [
        ('{ name = "forky" }', r"^package\[0\]\.dependencies\[0\]: 2 locked packages are 'forky'; the dependency"),
        ('{ name = "forky", version = "2.0" }', r"^package\[0\]\.dependencies\[0\]: no locked package is 'forky' ver"),
        (
            '{ name = "forky", version = "1.0", source = { registry = "https://c.example" } }',
            r"^package\[0\]\.dependencies\[0\]: no locked package is 'forky' version '1\.0' source",
        ),
    ]:
        with pytest.raises(LockError, match=error):
            read_lock(str(_uv_lock(tmp_path, _root(deps) + packages)), LINUX_311)
    # One package of the name: uv leaves version and source out, but a version it gives must be there.
    lone = _uv_package("alpha")
    assert read_lock(str(_uv_lock(tmp_path, _root('{ name = "alpha" }') + lone)), LINUX_311).packages
    with pytest.raises(LockError, match=r"no locked package is 'alpha' version '9'$"):
        read_lock(str(_uv_lock(tmp_path, _root('{ name = "alpha", version = "9" }') + lone)), LINUX_311)


def _grouped(tmp_path: Path, pyproject: str | None) -> set[str]:
    root = '\n[package.dev-dependencies]\ndev = [{ name = "devpkg" }]\nDocs = [{ name = "docpkg" }]\n'
    lock = _uv_lock(tmp_path, _root("") + root + _uv_package("devpkg") + _uv_package("docpkg"))
    if pyproject is not None:
        (tmp_path / "pyproject.toml").write_text(pyproject)
    return {p.name for p in read_lock(str(lock), LINUX_311).packages} - {"proj"}


@pytest.mark.parametrize(
    ("pyproject", "selected"),
    [
        (None, {"devpkg"}),  # no pyproject.toml: uv's default, dev
        ('[project]\nname = "proj"\n', {"devpkg"}),
        ('[tool.uv]\ndefault-groups = ["DOCS"]\n', {"docpkg"}),
        ('[tool.uv]\ndefault-groups = "all"\n', {"devpkg", "docpkg"}),
        ("[tool.uv]\ndefault-groups = []\n", set()),
        ('[tool.uv]\ndefault-groups = ["nope"]\n', set()),  # a default group no member declares selects nothing
    ],
)
def test_uv_lock_default_groups_come_from_the_pyproject_beside_it(
    tmp_path: Path, pyproject: str | None, selected: set[str]
) -> None:
    assert _grouped(tmp_path, pyproject) == selected


@pytest.mark.parametrize(
    ("pyproject", "error"),
    [
        ("[tool.uv]\ndefault-groups = 3\n", r'tool\.uv\.default-groups: not a list of group names or "all"$'),
        ("[tool.uv\n", r"pyproject\.toml: not valid TOML"),
        ("x" * ((1 << 20) + 1), r"pyproject\.toml: larger than 1 MiB$"),
    ],
)
def test_a_bad_pyproject_beside_a_uv_lock_is_one_line(tmp_path: Path, pyproject: str, error: str) -> None:
    with pytest.raises(LockError, match=error):
        _grouped(tmp_path, pyproject)
    lock = tmp_path / "uv.lock"
    explicit = read_lock(str(lock), LockTarget(markers=LINUX_311.markers, tags=LINUX_311.tags, groups=("docs",)))
    assert {p.name for p in explicit.packages} == {"proj", "docpkg"}  # --group never reads it


def test_a_fifo_for_pyproject_or_lock_is_refused_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pyproject.toml")
    with pytest.raises(LockError, match=r"pyproject\.toml: not a regular file$"):
        _grouped(tmp_path, None)
    os.mkfifo(tmp_path / "pylock.toml")
    with pytest.raises(LockError, match=r"pylock\.toml: not a regular file$"):
        read_lock(str(tmp_path / "pylock.toml"), LINUX_311)


def test_uv_lock_extras_are_normalized_on_both_sides(tmp_path: Path) -> None:
    root = (
        _root('{ name = "beta", extra = ["Fast_Path"] }')
        + '\n[package.optional-dependencies]\nGPU = [{ name = "gpux" }]\n'
    )
    beta = _uv_package("beta", extra='[package.optional-dependencies]\n"fast.path" = [{ name = "speedup" }]')
    lock = _uv_lock(tmp_path, root + beta + _uv_package("speedup") + _uv_package("gpux"))
    names = {p.name for p in read_lock(str(lock), LINUX_311).packages}
    assert names == {"proj", "beta", "speedup"}
    target = LockTarget(markers=LINUX_311.markers, tags=LINUX_311.tags, extras=("gpu",))
    assert "gpux" in {p.name for p in read_lock(str(lock), target).packages}


def test_uv_lock_wheel_of_a_path_or_url_source_is_that_source(tmp_path: Path) -> None:
    body = _root('{ name = "local" }, { name = "remote" }') + (
        f'\n[[package]]\nname = "local"\nversion = "1.0"\nsource = {{ path = "wheels/local-1.0-py3-none-any.whl" }}\n'
        f'wheels = [{{ filename = "local-1.0-py3-none-any.whl", hash = "sha256:{SHA}" }}]\n'
        f'\n[[package]]\nname = "remote"\nversion = "1.0"\n'
        f'source = {{ url = "https://h.example/dl/remote-1.0-py3-none-any.whl" }}\n'
        f'wheels = [{{ filename = "remote-1.0-py3-none-any.whl", hash = "sha256:{SHA}" }}]\n'
        f'\n[[package]]\nname = "tree"\nversion = "1.0"\nsource = {{ path = "vendor/tree" }}\n'
    )
    read = read_lock(str(_uv_lock(tmp_path, body)), LINUX_311)
    wheels = {p.name: p.selected for p in read.packages}
    local, remote = wheels["local"], wheels["remote"]
    assert local is not None and local.path == str(tmp_path / "wheels" / "local-1.0-py3-none-any.whl")
    assert local.url is None and local.sha256 == SHA
    assert remote is not None and remote.url == "https://h.example/dl/remote-1.0-py3-none-any.whl"
    bad = body.replace("https://h.example/dl/remote", "gopher://h.example/remote")
    with pytest.raises(LockError, match=r"^package\[2\]\.wheels\[0\]\.url: scheme 'gopher' refused"):
        read_lock(str(_uv_lock(tmp_path, bad)), LINUX_311)

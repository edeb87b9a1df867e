"""Tests for the test helpers themselves: real wheels, real venvs, real pip and uv."""

from __future__ import annotations

import base64
import hashlib
import os
import stat
import subprocess
import sys
import zipfile
from email.parser import BytesParser
from functools import partial
from pathlib import Path

import pytest
from helpers import (
    UV_CACHE_ENV,
    CommandFailed,
    Venv,
    VenvFactory,
    WheelFactory,
    build_wheel,
    data_dirname,
    dist_info_dirname,
    find_interpreter,
    pip_install,
    read_record,
    record_hash,
    record_rows,
    uv_install,
)

CURRENT = f"{sys.version_info.major}.{sys.version_info.minor}"

PAYLOAD = {
    "demo/__init__.py": b"def main() -> None:\n    print('hello from demo')\n",
    "demo/data.txt": b"some \x00 binary \xff payload\n",
}


def _zip_record(wheel: Path) -> tuple[list[str], list[list[str]], zipfile.ZipFile]:
    zf = zipfile.ZipFile(wheel)
    names = zf.namelist()
    record_name = next(n for n in names if n.endswith(".dist-info/RECORD"))
    text = zf.read(record_name).decode("utf-8")
    rows = [line.split(",") for line in text.splitlines() if line]
    return names, rows, zf


def _installed_rows_verified(venv: Venv, dist: str) -> list[list[str]]:
    """Check every hashed RECORD row of an installed dist against disk; return rows."""
    rows = read_record(venv.dist_info(dist) / "RECORD")
    for path, hash_, size in rows:
        target = venv.site_packages / path
        assert target.exists(), path
        if hash_:
            data = target.read_bytes()
            assert record_hash(data) == hash_, path
            assert str(len(data)) == size, path
    return rows


# --------------------------------------------------------------------------
# hashing
# --------------------------------------------------------------------------


@pytest.mark.parametrize("data", [b"", b"x", b"\xff" * 1000, PAYLOAD["demo/__init__.py"]])
def test_record_hash_format(data: bytes) -> None:
    value = record_hash(data)
    algo, _, encoded = value.partition("=")
    assert algo == "sha256"
    assert "=" not in encoded
    assert "+" not in encoded
    assert "/" not in encoded
    padded = encoded + "=" * (-len(encoded) % 4)
    assert base64.urlsafe_b64decode(padded) == hashlib.sha256(data).digest()


def test_record_rows() -> None:
    rows = record_rows(PAYLOAD)
    assert [r[0] for r in rows] == list(PAYLOAD)
    for (path, hash_, size), data in zip(rows, PAYLOAD.values(), strict=True):
        assert hash_ == record_hash(data)
        assert size == str(len(data))
        assert path in PAYLOAD


# --------------------------------------------------------------------------
# build_wheel
# --------------------------------------------------------------------------


def test_wheel_record_matches_members(wheel_factory: WheelFactory) -> None:
    scripts = f"{data_dirname('demo', '1.0')}/scripts/demo-raw"
    wheel = wheel_factory(
        "demo",
        "1.0",
        {**PAYLOAD, scripts: b"#!python\nprint('raw')\n"},
        console_scripts={"demo-cli": "demo:main"},
    )
    assert wheel.name == "demo-1.0-py3-none-any.whl"
    names, rows, zf = _zip_record(wheel)
    with zf:
        dist_info = dist_info_dirname("demo", "1.0")
        assert names[-1] == f"{dist_info}/RECORD"
        assert sorted(r[0] for r in rows) == sorted(names)
        for path, hash_, size in rows:
            if path == f"{dist_info}/RECORD":
                assert (hash_, size) == ("", "")
                continue
            data = zf.read(path)
            assert hash_ == record_hash(data)
            assert size == str(len(data))
        for name, data in PAYLOAD.items():
            assert zf.read(name) == data
        assert f"{dist_info}/entry_points.txt" in names
        assert stat.S_IMODE(zf.getinfo(scripts).external_attr >> 16) == 0o755
        assert stat.S_IMODE(zf.getinfo("demo/data.txt").external_attr >> 16) == 0o644


def test_wheel_name_escaping_and_metadata(wheel_factory: WheelFactory) -> None:
    wheel = wheel_factory(
        "Foo.Bar-baz",
        "1.0-rc1",
        {"foo_bar_baz/__init__.py": b""},
        requires=["packaging>=20", "attrs; python_version >= '3.8'"],
        requires_python=">=3.10",
        extras={"cli": ["click", "rich; sys_platform == 'linux'"]},
        tag="py2.py3-none-any",
    )
    assert wheel.name == "foo_bar_baz-1.0rc1-py2.py3-none-any.whl"
    dist_info = "foo_bar_baz-1.0rc1.dist-info"
    assert dist_info_dirname("Foo.Bar-baz", "1.0-rc1") == dist_info
    with zipfile.ZipFile(wheel) as zf:
        meta = BytesParser().parsebytes(zf.read(f"{dist_info}/METADATA"))
        wheel_meta = BytesParser().parsebytes(zf.read(f"{dist_info}/WHEEL"))
        assert f"{dist_info}/entry_points.txt" not in zf.namelist()
    assert meta["Metadata-Version"] == "2.1"
    assert meta["Name"] == "Foo.Bar-baz"
    assert meta["Version"] == "1.0-rc1"
    assert meta["Requires-Python"] == ">=3.10"
    assert meta.get_all("Provides-Extra") == ["cli"]
    assert meta.get_all("Requires-Dist") == [
        "packaging>=20",
        "attrs; python_version >= '3.8'",
        'click; extra == "cli"',
        "rich; (sys_platform == 'linux') and extra == \"cli\"",
    ]
    assert wheel_meta["Wheel-Version"] == "1.0"
    assert wheel_meta["Root-Is-Purelib"] == "true"
    assert sorted(wheel_meta.get_all("Tag") or []) == ["py2-none-any", "py3-none-any"]


def test_metadata_name_override(wheel_factory: WheelFactory) -> None:
    wheel = wheel_factory("demo", "1.0", PAYLOAD, metadata_name="Other")
    with zipfile.ZipFile(wheel) as zf:
        meta = BytesParser().parsebytes(zf.read("demo-1.0.dist-info/METADATA"))
    assert meta["Name"] == "Other"


def test_caller_dist_info_file_replaces_generated(wheel_factory: WheelFactory) -> None:
    custom = b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nSummary: custom\n"
    extra = b"license text\n"
    wheel = wheel_factory(
        "demo",
        "1.0",
        {**PAYLOAD, "demo-1.0.dist-info/METADATA": custom, "demo-1.0.dist-info/LICENSE": extra},
    )
    names, rows, zf = _zip_record(wheel)
    with zf:
        assert zf.read("demo-1.0.dist-info/METADATA") == custom
        assert names.count("demo-1.0.dist-info/METADATA") == 1
    assert ["demo-1.0.dist-info/METADATA", record_hash(custom), str(len(custom))] in rows
    assert ["demo-1.0.dist-info/LICENSE", record_hash(extra), str(len(extra))] in rows


def test_record_override_corrupts_record(wheel_factory: WheelFactory) -> None:
    def corrupt(rows: list[list[str]]) -> list[list[str]]:
        out = []
        for row in rows:
            if row[0] == "demo/data.txt":
                continue  # drop this entry
            if row[0] == "demo/__init__.py":
                out.append([row[0], record_hash(b"something else"), row[2]])
            else:
                out.append(row)
        return out

    wheel = wheel_factory("demo", "1.0", PAYLOAD, record_override=corrupt)
    names, rows, zf = _zip_record(wheel)
    zf.close()
    assert "demo/data.txt" in names
    assert "demo/data.txt" not in [r[0] for r in rows]
    init_row = next(r for r in rows if r[0] == "demo/__init__.py")
    assert init_row[1] == record_hash(b"something else")
    assert init_row[1] != record_hash(PAYLOAD["demo/__init__.py"])


def test_build_wheel_is_deterministic(tmp_path: Path) -> None:
    a = build_wheel(tmp_path / "a", "demo", "1.0", PAYLOAD, console_scripts={"d": "demo:main"})
    b = build_wheel(tmp_path / "b", "demo", "1.0", PAYLOAD, console_scripts={"d": "demo:main"})
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize("path", ["/abs.py", "../escape.py", "a\\b.py", "", "demo-1.0.dist-info/RECORD"])
def test_build_wheel_rejects_bad_paths(tmp_path: Path, path: str) -> None:
    with pytest.raises(ValueError, match=r"invalid wheel member path|RECORD is computed"):
        build_wheel(tmp_path, "demo", "1.0", {path: b"x"})


# --------------------------------------------------------------------------
# venvs
# --------------------------------------------------------------------------


def test_make_venv(venv_factory: VenvFactory) -> None:
    venv = venv_factory()
    assert venv.prefix.is_dir()
    assert venv.python.exists()
    assert venv.bin == venv.python.parent
    assert venv.site_packages.is_dir()
    assert venv.prefix in venv.site_packages.parents
    assert venv.site_packages.parent.name == f"python{CURRENT}"
    assert not (venv.bin / "pip").exists()  # uv venv: no pip inside
    out = subprocess.run(
        [str(venv.python), "-c", "import sys; print(sys.prefix)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(out.stdout.strip()) == venv.prefix


def test_venv_factory_other_python(venv_factory: VenvFactory) -> None:
    candidates = (find_interpreter(v) for v in ("3.12", "3.10", "3.13") if v != CURRENT)
    other = next((p for p in candidates if p is not None), None)
    if other is None:
        pytest.skip("no second Python interpreter available")
    venv = venv_factory("other", other)
    assert venv.site_packages.is_dir()
    assert venv.site_packages.parent.name != f"python{CURRENT}"


def test_find_interpreter_current() -> None:
    assert find_interpreter(CURRENT) == Path(sys.executable)
    assert find_interpreter("2.0") is None


def test_uv_cache_is_session_scoped(uv_cache: Path, uv_bin: Path) -> None:
    assert os.environ[UV_CACHE_ENV] == str(uv_cache)
    assert uv_bin.is_file()


# --------------------------------------------------------------------------
# installing with real pip and uv
# --------------------------------------------------------------------------


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_install_wheel(installer: str, wheel_factory: WheelFactory, venv_factory: VenvFactory) -> None:
    raw_script = f"{data_dirname('demo', '1.0')}/scripts/demo-sh"
    sh_bytes = b"#!/bin/sh\necho from-data-scripts\n"
    wheel = wheel_factory(
        "demo",
        "1.0",
        {**PAYLOAD, raw_script: sh_bytes},
        console_scripts={"demo-cli": "demo:main"},
    )
    venv = venv_factory()
    if installer == "pip":
        pip_install(venv, "--no-index", "--no-deps", wheel)
    else:
        uv_install(venv, wheel)

    dist_info = venv.dist_info("demo")
    assert dist_info.name == "demo-1.0.dist-info"
    assert (dist_info / "RECORD").is_file()
    assert (dist_info / "INSTALLER").read_text().strip() == installer

    for name, data in PAYLOAD.items():
        assert (venv.site_packages / name).read_bytes() == data

    cli = venv.bin / "demo-cli"
    assert cli.is_file()
    assert os.access(cli, os.X_OK)
    run = subprocess.run([str(cli)], capture_output=True, text=True, check=True)
    assert run.stdout == "hello from demo\n"
    assert (venv.bin / "demo-sh").read_bytes() == sh_bytes  # no #!python: copied verbatim

    rows = _installed_rows_verified(venv, "demo")
    paths = {r[0] for r in rows}
    assert "../../../bin/demo-cli" in paths
    assert "../../../bin/demo-sh" in paths
    assert f"{dist_info.name}/RECORD" in paths


def test_uv_install_copies_by_default(wheel_factory: WheelFactory, venv_factory: VenvFactory) -> None:
    wheel = wheel_factory("demo", "1.0", PAYLOAD)
    venv = venv_factory()
    uv_install(venv, wheel)
    assert (venv.site_packages / "demo" / "data.txt").stat().st_nlink == 1


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_install_failure_raises_with_output(installer: str, venv_factory: VenvFactory, tmp_path: Path) -> None:
    venv = venv_factory()
    missing = tmp_path / "nope-1.0-py3-none-any.whl"
    install = partial(pip_install, venv, "--no-index", "--no-deps") if installer == "pip" else partial(uv_install, venv)
    with pytest.raises(CommandFailed) as excinfo:
        install(missing)
    assert excinfo.value.returncode != 0
    assert "nope" in excinfo.value.stderr + excinfo.value.stdout
    assert "--- stderr ---" in str(excinfo.value)

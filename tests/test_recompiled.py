"""Installer-generated files judged as the installer makes them: recompiled .pyc files, pip --target scripts."""

from __future__ import annotations

import importlib.util
import json
import marshal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import Venv, VenvFactory, WheelFactory, pip_install, run_cli

SOURCE = b"def conv(x):\n    return x * 2\n"
TAG = sys.implementation.cache_tag


def shipped_pyc(source: bytes, built_at: str) -> bytes:
    """A .pyc as a wheel builder's compileall writes it: the code names the build tree's path."""
    code = compile(source, built_at, "exec", dont_inherit=True)
    return importlib.util.MAGIC_NUMBER + b"\0\0\0\0" + b"\x00\x00\x00\x00" + b"\x20\x00\x00\x00" + marshal.dumps(code)


def document(*args: str | Path) -> tuple[int, dict[str, Any]]:
    done = run_cli(*args, "--json")
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def findings(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(f["code"], f["kind"], f["path"]) for d in doc["distributions"] for f in d["findings"]]


@pytest.fixture
def pip_recompiled(venv_factory: VenvFactory, wheel_factory: WheelFactory) -> Venv:
    """A wheel shipping pkg/__pycache__/mod.*.pyc, installed by pip, whose byte-compilation rewrites it."""
    venv = venv_factory()
    files = {
        "pkg/__init__.py": b"",
        "pkg/mod.py": SOURCE,
        f"pkg/__pycache__/mod.{TAG}.pyc": shipped_pyc(SOURCE, "/build/src/pkg/mod.py"),
    }
    pip_install(venv, "--no-deps", wheel_factory("pkg", "1.0", files))
    return venv


def test_a_shipped_pyc_pip_recompiled_is_recompiled_not_altered(pip_recompiled: Venv) -> None:
    rc, doc = document("check", "--all", "--python", pip_recompiled.python)
    assert (rc, findings(doc)) == (0, [("WD061", "recompiled", f"pkg/__pycache__/mod.{TAG}.pyc")])
    message = doc["distributions"][0]["findings"][0]["message"]
    assert "recompiled by the installer from pkg/mod.py, which is intact" in message
    text = run_cli("check", "--all", "--python", pip_recompiled.python).stdout
    assert "1 recompiled by the installer" in text.splitlines()[-1]


def test_a_pyc_with_a_valid_header_but_other_code_is_still_altered(pip_recompiled: Venv) -> None:
    pyc = pip_recompiled.site_packages / "pkg" / "__pycache__" / f"mod.{TAG}.pyc"
    data = pyc.read_bytes()
    evil = compile(b"import os\n", str(pip_recompiled.site_packages / "pkg/mod.py"), "exec", dont_inherit=True)
    pyc.write_bytes(data[:16] + marshal.dumps(evil))
    rc, doc = document("check", "--all", "--python", pip_recompiled.python)
    assert rc == 1 and ("WD002", "modified", f"pkg/__pycache__/mod.{TAG}.pyc") in findings(doc)


def test_a_pyc_of_a_changed_source_is_not_explained(pip_recompiled: Venv) -> None:
    (pip_recompiled.site_packages / "pkg" / "mod.py").write_bytes(SOURCE.replace(b"2", b"3"))
    rc, doc = document("check", "--all", "--python", pip_recompiled.python)
    assert rc == 1
    assert {c for c, _, _ in findings(doc)} >= {"WD001"} and "WD061" not in {c for c, _, _ in findings(doc)}


def test_pip_target_scripts_are_not_unowned_modules(wheel_factory: WheelFactory, tmp_path: Path) -> None:
    wheel = wheel_factory(
        "tool", "1.0", {"tool/__init__.py": b"def main(): pass\n"}, console_scripts={"tool": "tool:main"}
    )
    target = tmp_path / "target"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    assert (target / "bin" / "tool").is_file()
    rc, doc = document("check", "--all", "--path", target)
    assert rc == 0, doc["unowned"]
    # A file planted beside the scripts is still an unowned module.
    (target / "bin" / "extra.py").write_text("")
    rc, doc = document("check", "--all", "--path", target)
    assert rc == 1 and [f["path"] for f in doc["unowned"]["findings"]] == ["bin/"]


@pytest.mark.network
def test_numpy_1_26_4_by_pip_is_intact(venv_factory: VenvFactory) -> None:
    venv = venv_factory()
    pip_install(venv, "--no-deps", "numpy==1.26.4")
    rc, doc = document("check", "--all", "--python", venv.python)
    assert rc == 0, findings(doc)
    assert ("WD061", "recompiled", f"numpy/distutils/__pycache__/conv_template.{TAG}.pyc") in findings(doc)


@pytest.mark.network
def test_pip_target_requests(tmp_path: Path) -> None:
    target = tmp_path / "t"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(target), "requests"], check=True)
    rc, doc = document("check", "--all", "--path", target)
    assert rc == 0, doc.get("unowned")

"""The native section as users meet it: ``check --all`` and ``doctor``, every format, accept rules, the warm memo.

The stack of tests/native_stack.py (objects built by gcc, in wheels installed by pip and
uv); nothing of it may ever be loaded (its marker file stays absent).
"""

from __future__ import annotations

import json
import shutil
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from helpers import Venv, VenvFactory, pip_install, run_cli, uv_install
from native_objects import need_gcc
from native_stack import Stack, build_stack
from test_formats import validate_sarif
from test_schema import validate


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Stack:
    need_gcc()
    return build_stack(tmp_path_factory.mktemp("native-stack"))


@pytest.fixture
def mixed(stack: Stack, venv_factory: VenvFactory) -> Venv:
    """CUDA 12 and 13 runtimes side by side, each needed by an extension."""
    venv = venv_factory()
    uv_install(venv, "--no-index", "--no-deps", stack.runtime12, stack.runtime13, stack.torch13, stack.nixl12)
    return venv


def check(venv: Venv, *args: str, cwd: Path | None = None, cache: Path | None = None) -> tuple[int, str]:
    env = {"WHEELDOCTOR_CACHE_DIR": str(cache)} if cache is not None else None
    done = run_cli("check", "--all", "--python", venv.python, *args, cwd=cwd, env=env)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, done.stdout


def native_codes(document: dict[str, Any]) -> list[tuple[str, str]]:
    return sorted((f["subject"], f["finding"]["code"]) for f in document["native"]["findings"])


def test_a_mix_fails_check_and_doctor_in_every_format(stack: Stack, mixed: Venv, tmp_path: Path) -> None:
    rc, text = check(mixed)
    assert rc == 1
    lines = text.splitlines()
    mix = next(line for line in lines if line.startswith("libcudart: WD092: "))
    assert "libcudart.so.12 from wd-cuda-runtime-cu12 12.8.90" in mix and "libcudart.so.13 from wd-cuda-runtime" in mix
    assert any(line.startswith("wd-cuda-runtime: WD093: builds for different CUDA variants") for line in lines)
    assert any(
        line.startswith("native: 5 shared object(s), 2 extension module(s); libraries needed: ") for line in lines
    )
    assert "2 native library finding(s)" in lines[-1] or any("2 native library finding(s)" in line for line in lines)

    rc, out = check(mixed, "--json")
    document = json.loads(out)
    validate(document)
    assert rc == 1 and document["healthy"] is False
    assert native_codes(document) == [("libcudart", "WD092"), ("wd-cuda-runtime", "WD093")]
    native = document["native"]
    assert (native["machine"], native["objects"], native["extension_modules"], native["foreign"]) == ("x86_64", 5, 2, 0)
    sources = {(s["provider"], s["library"], s["owner"]) for s in native["sources"]}
    assert ("environment", "libcudart.so.12", "wd-cuda-runtime-cu12") in sources
    assert ("environment", "libcudart.so.13", "wd-cuda-runtime") in sources

    doctor = run_cli("doctor", "--python", mixed.python, "--json")
    assert doctor.returncode == 1, doctor.stderr
    doc = json.loads(doctor.stdout)
    validate(doc)
    assert native_codes(doc) == native_codes(document)
    assert "native libraries" in run_cli("doctor", "--python", mixed.python).stdout.splitlines()[-1]

    sarif_out = tmp_path / "out.sarif"
    check(mixed, "--format", "sarif", "-o", str(sarif_out))
    sarif = json.loads(sarif_out.read_text())
    validate_sarif(sarif)
    rules = {r["ruleId"] for r in sarif["runs"][0]["results"]}
    assert {"WD092", "WD093"} <= rules
    github = check(mixed, "--format", "github")[1]
    assert any(line.startswith("::error") and "WD092" in line for line in github.splitlines())
    junit_out = tmp_path / "out.xml"
    check(mixed, "--format", "junit", "-o", str(junit_out))
    suites = {s.get("name") for s in ET.parse(junit_out).getroot()}
    assert "wheeldoctor native" in suites
    assert not stack.marker.exists()


def test_accept_rules_name_the_library_and_the_project(mixed: Venv, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    rules = [
        ("libcudart", "WD092", "the cu12 runtime serves nixl until it is rebuilt"),
        ("wd-cuda-runtime", "WD093", "both runtimes on purpose"),
    ]
    (project / "pyproject.toml").write_text(
        "".join(
            f'[[tool.wheeldoctor.accept]]\ndistribution = "{d}"\ncode = "{c}"\nreason = "{r}"\n\n' for d, c, r in rules
        )
    )
    rc, out = check(mixed, "--json", cwd=project)
    document = json.loads(out)
    validate(document)
    assert rc == 0 and document["healthy"] is True
    assert all(f["finding"]["accepted"]["by"] == "config" for f in document["native"]["findings"])
    assert document["policy"]["stale"] == []
    baseline = tmp_path / "baseline.json"
    run_cli("check", "--all", "--python", mixed.python, "--write-baseline", str(baseline), cwd=tmp_path)
    entries = {(e["distribution"], e["code"]) for e in json.loads(baseline.read_text())["findings"]}
    assert {("libcudart", "WD092"), ("wd-cuda-runtime", "WD093")} <= entries
    rc, _ = check(mixed, "--baseline", str(baseline), cwd=tmp_path)
    assert rc == 0


def test_the_warm_memo_sees_a_library_put_where_the_loader_looks(
    stack: Stack, venv_factory: VenvFactory, tmp_path: Path
) -> None:
    """Nothing any installer records changes: only a directory an object searches gains a library."""
    venv = venv_factory()
    pip_install(venv, "--no-index", "--no-deps", stack.runtime13, stack.torch13, stack.nixl12)
    cache = tmp_path / "cache"
    time.sleep(0.1)  # past the settle window: what was just installed may be kept
    first = json.loads(check(venv, "--json", cache=cache)[1])
    second = json.loads(check(venv, "--json", cache=cache)[1])
    assert list(cache.rglob("*.native")), "the scan was not kept"
    assert native_codes(first) == native_codes(second) == [("wdnixl", "WD090")]
    assert first["native"] == second["native"]
    # By hand, no installer: the cu12 runtime where nixl's RUNPATH looks.
    directory = venv.site_packages / "nvidia" / "cuda_runtime" / "lib"
    directory.mkdir(parents=True)
    shutil.copy(stack.objects["libcudart.so.12"], directory / "libcudart.so.12")
    third = json.loads(check(venv, "--json", cache=cache)[1])
    assert native_codes(third) == [("libcudart", "WD092")]  # found now, from no wheel: a second major
    (mixed_major,) = third["native"]["findings"]
    assert f"libcudart.so.12 from the system ({directory}/libcudart.so.12)" in mixed_major["finding"]["message"]
    assert not stack.marker.exists()

"""Native libraries of real wheels from the index: NVIDIA's CUDA runtimes of both majors, and common native wheels.

Marked ``network``: pip and uv download from PyPI. The extensions that need the runtimes are
built here by gcc (tests/native_stack.py); nothing is ever loaded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import Venv, VenvFactory, run_cli, uv_install
from native_objects import need_gcc
from native_stack import Stack, build_stack
from test_schema import validate

pytestmark = pytest.mark.network

CUDA_12 = "nvidia-cuda-runtime-cu12>=12,<13"
CUDA_13 = "nvidia-cuda-runtime>=13,<14"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Stack:
    need_gcc()
    return build_stack(tmp_path_factory.mktemp("native-stack"))


def check(venv: Venv) -> tuple[int, dict[str, Any]]:
    done = run_cli("check", "--all", "--python", venv.python, "--json")
    assert done.returncode in (0, 1), done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    validate(document)
    return done.returncode, document


def from_environment(document: dict[str, Any]) -> set[tuple[str, str]]:
    return {(s["library"], s["owner"]) for s in document["native"]["sources"] if s["provider"] == "environment"}


@pytest.mark.parametrize(
    ("runtime", "extension", "library"), [(CUDA_12, "nixl12", "libcudart.so.12"), (CUDA_13, "app13", "libcudart.so.13")]
)
def test_a_healthy_environment_of_each_major_passes(
    stack: Stack, venv_factory: VenvFactory, runtime: str, extension: str, library: str
) -> None:
    venv = venv_factory()
    uv_install(venv, runtime, getattr(stack, extension), "--no-deps")
    rc, document = check(venv)
    assert (rc, document["native"]["findings"]) == (0, [])
    owner = "nvidia-cuda-runtime-cu12" if runtime == CUDA_12 else "nvidia-cuda-runtime"
    assert (library, owner) in from_environment(document)  # the real wheel's library, found by the RUNPATH
    assert not stack.marker.exists()


def test_the_real_runtimes_of_both_majors_are_reported_with_both_named(stack: Stack, venv_factory: VenvFactory) -> None:
    venv = venv_factory()
    uv_install(venv, CUDA_12, CUDA_13, stack.nixl12, stack.app13, "--no-deps")
    rc, document = check(venv)
    assert rc == 1
    findings = {f["subject"]: f["finding"] for f in document["native"]["findings"]}
    assert {(s, f["code"]) for s, f in findings.items()} == {
        ("libcudart", "WD092"),
        ("nvidia-cuda-runtime", "WD093"),
    }
    message = findings["libcudart"]["message"]
    assert message.startswith("majors 12 and 13 in one environment: libcudart.so.12 from nvidia-cuda-runtime-cu12 12.")
    assert "; libcudart.so.13 from nvidia-cuda-runtime 13." in message
    assert "needed by wdnixl (wdnixl/_ep" in message and "needed by wdapp13 (wdapp13/_app" in message
    builds = findings["nvidia-cuda-runtime"]["message"]
    assert "nvidia-cuda-runtime 13." in builds and "(unsuffixed)" in builds and "nvidia-cuda-runtime-cu12 12." in builds
    assert not stack.marker.exists()


def test_common_native_wheels_pass(venv_factory: VenvFactory, tmp_path: Path) -> None:
    venv = venv_factory()
    uv_install(venv, "numpy", "pillow", "cryptography", "lxml", "psutil", "pyyaml", "orjson")
    rc, document = check(venv)
    native = document["native"]
    assert (rc, native["findings"]) == (0, []), native["findings"]
    assert native["extension_modules"] >= 10 and native["foreign"] == 0
    # numpy's OpenBLAS and pillow's codecs come from their own .libs directories, by RPATH.
    owners = {owner for _, owner in from_environment(document)}
    assert {"numpy", "pillow"} <= owners
    assert not {s["provider"] for s in native["sources"]} & {"unresolved", "driver"}

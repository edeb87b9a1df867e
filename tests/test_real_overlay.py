"""The real overlay the policy was built for: nvidia-cutlass-dsl-libs-base, then -libs-cu13 4.5.0.

The wheels are large (about 150 MB together): they are downloaded once into
``$WHEELDOCTOR_TEST_WHEELS`` (default ``~/.cache/wheeldoctor-test-wheels``) and reused.
Marked ``network``; skipped when they cannot be had for this interpreter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from helpers import Venv, pip_install, run_cli

pytestmark = pytest.mark.network

BASE = "nvidia-cutlass-dsl-libs-base"
CU13 = "nvidia-cutlass-dsl-libs-cu13"
VERSION = "4.5.0"


def _wheel(cache: Path, name: str) -> Path | None:
    stem = name.replace("-", "_")
    found = sorted(cache.glob(f"{stem}-{VERSION}-*.whl"))
    return found[0] if found else None


@pytest.fixture(scope="module")
def cutlass_wheels() -> tuple[Path, Path]:
    cache = Path(os.environ.get("WHEELDOCTOR_TEST_WHEELS", "~/.cache/wheeldoctor-test-wheels")).expanduser()
    cache.mkdir(parents=True, exist_ok=True)
    if _wheel(cache, BASE) is None or _wheel(cache, CU13) is None:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "-d",
                str(cache),
                f"{BASE}=={VERSION}",
                f"{CU13}=={VERSION}",
            ],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"cutlass {VERSION} wheels unavailable: {done.stderr.strip().splitlines()[-1:]}")
    base, cu13 = _wheel(cache, BASE), _wheel(cache, CU13)
    if base is None or cu13 is None:
        pytest.skip("cutlass wheels unavailable")
    return base, cu13


def _check(venv: Venv, *args: str) -> tuple[int, dict[str, Any]]:
    done = run_cli("check", *args, "--python", venv.python, "--json", "--no-cache")
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def test_cutlass_base_then_cu13_is_an_accepted_overlay(venv_factory: Any, cutlass_wheels: tuple[Path, Path]) -> None:
    base, cu13 = cutlass_wheels
    venv = venv_factory()
    for wheel in (base, cu13):
        pip_install(venv, "--no-index", "--no-deps", wheel)
    rc, document = _check(venv, "--all")
    assert rc == 0
    dists = {d["name"]: d for d in document["distributions"]}
    assert dists[CU13]["status"] == "intact"
    assert dists[BASE]["status"] == "overlaid"
    findings = dists[BASE]["findings"]
    assert {(f["code"], f["kind"], f["content_from"]) for f in findings} == {("WD060", "replaced", CU13)}
    assert len(findings) == 98
    (pair,) = document["clash_pairs"]
    assert (pair["relation"], pair["winner"], pair["settled"]) == ("overlay", CU13, True)
    assert _check(venv, BASE)[0] == 0
    assert _check(venv, "--all", "--strict")[0] == 1
    text = run_cli("check", "--all", "--python", venv.python, "--no-cache").stdout
    assert [line for line in text.splitlines() if "WD0" in line and BASE in line.split(":")[0]] == []
    assert sum(line.startswith("overlay: ") for line in text.splitlines()) == 1

    # Five differing paths put back to the base's bytes: no longer the intended state.
    with zipfile.ZipFile(base) as archive:
        for finding in findings[:5]:
            (venv.site_packages / finding["path"]).write_bytes(archive.read(finding["path"]))
    rc, document = _check(venv, "--all")
    assert rc == 1
    assert {d["name"]: d["status"] for d in document["distributions"]} == {BASE: "broken", CU13: "broken"}

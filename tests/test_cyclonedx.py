"""``--format cyclonedx`` on a real venv: a CycloneDX 1.6 BOM the library's strict validator accepts."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import Venv, build_wheel, dist_info_dirname, make_venv, pip_install, run_cli

pytest.importorskip("cyclonedx")

from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

ALTERED = b"def answer():\n    return 43\n"
STRAY = b"print('nobody installed me')\n"


def metadata(name: str, *lines: str) -> bytes:
    return ("\n".join(["Metadata-Version: 2.4", f"Name: {name}", "Version: 1.0", *lines]) + "\n").encode()


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, uv_bin: Path) -> Venv:
    root = tmp_path_factory.mktemp("sbom")
    wheels = root / "wheels"
    alpha = build_wheel(
        wheels,
        "alpha",
        "1.0",
        {
            "alpha/core.py": b"def answer():\n    return 42\n",
            f"{dist_info_dirname('alpha', '1.0')}/METADATA": metadata("alpha", "License-Expression: Apache-2.0 OR MIT"),
        },
    )
    classic = metadata("classic", "License: UNKNOWN", "Classifier: License :: OSI Approved :: BSD License")
    classic_wheel = build_wheel(
        wheels, "classic", "1.0", {"classic.py": b"", f"{dist_info_dirname('classic', '1.0')}/METADATA": classic}
    )
    plain = build_wheel(wheels, "plain", "1.0", {"plain.py": b""})
    venv = make_venv(root / "venv", uv_bin=uv_bin)
    pip_install(venv, "--no-index", "--no-deps", alpha, classic_wheel, plain)
    (venv.site_packages / "alpha" / "core.py").write_bytes(ALTERED)
    (venv.site_packages / "stray.py").write_bytes(STRAY)
    return venv


def bom(*args: str | Path, rc: int = 1) -> dict[str, Any]:
    done = run_cli(*args, "--format", "cyclonedx")
    assert done.returncode == rc, done.stderr
    assert done.stderr == ""
    error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(done.stdout)
    assert error is None, error
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def test_check_all_gives_a_valid_bom_with_sha256_on_every_distribution(venv: Venv, tmp_path: Path) -> None:
    document = bom("check", "--all", "--python", venv.python)
    assert document["specVersion"] == "1.6"
    snapshot = run_cli("snapshot", "--python", venv.python, "-o", tmp_path / "s.json")
    assert snapshot.returncode == 0, snapshot.stderr
    records = {name: d["record"] for name, d in json.loads((tmp_path / "s.json").read_text())["distributions"].items()}
    libraries = {c["name"]: c for c in document["components"] if c["type"] == "library"}
    assert set(libraries) == set(records) >= {"alpha", "classic", "plain"}
    for name, component in libraries.items():
        assert component["purl"] == f"pkg:pypi/{name}@{component['version']}"
        assert component["hashes"] == [{"alg": "SHA-256", "content": records[name]}]
    assert libraries["alpha"]["licenses"] == [{"expression": "Apache-2.0 OR MIT"}]
    assert libraries["classic"]["licenses"] == [{"license": {"name": "BSD License"}}]
    assert "licenses" not in libraries["plain"]
    (altered,) = libraries["alpha"]["components"]
    assert altered["name"] == "alpha/core.py" and altered["type"] == "file"
    assert altered["hashes"] == [{"alg": "SHA-256", "content": hashlib.sha256(ALTERED).hexdigest()}]
    stray = next(c for c in document["components"] if c["name"] == "stray.py")
    assert stray["type"] == "file"
    assert stray["hashes"] == [{"alg": "SHA-256", "content": hashlib.sha256(STRAY).hexdigest()}]
    refs = {d["ref"] for d in document["dependencies"]}
    assert document["metadata"]["component"]["bom-ref"] in refs


def test_doctor_and_snapshot_give_valid_boms_too(venv: Venv, tmp_path: Path) -> None:
    bom("doctor", "--python", venv.python)
    written = tmp_path / "bom.json"
    done = run_cli("snapshot", "--python", venv.python, "--format", "cyclonedx", "-o", written)
    assert done.returncode == 0, done.stderr
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(written.read_text()) is None


def test_the_same_environment_gives_the_same_serial_number(venv: Venv) -> None:
    first = bom("check", "--all", "--python", venv.python)
    again = bom("check", "--all", "--python", venv.python)
    assert first["serialNumber"] == again["serialNumber"]


def test_without_the_extra_it_is_one_line_and_exit_2(venv: Venv, tmp_path: Path) -> None:
    shadow = tmp_path / "shadow" / "cyclonedx"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('not installed')\n")
    root = str(Path(__file__).resolve().parent.parent)
    for command in (["check", "--all"], ["doctor"], ["snapshot"]):
        done = run_cli(
            *command, "--python", venv.python, "--format", "cyclonedx", env={"PYTHONPATH": f"{shadow.parent}:{root}"}
        )
        assert done.returncode == 2
        assert done.stdout == ""
        assert done.stderr.splitlines() == [
            "error: --format cyclonedx needs the cyclonedx-python-lib package",
            "Tip: pip install 'wheeldoctor[sbom]'",
        ]
    assert sys.modules.get("cyclonedx") is not None  # this process still has the real one


def test_a_bom_written_with_o_prints_the_text_report_as_every_format_does(venv: Venv, tmp_path: Path) -> None:
    for command in (["check", "--all"], ["doctor"]):
        written = tmp_path / f"{command[0]}.json"
        done = run_cli(*command, "--python", venv.python, "--format", "cyclonedx", "-o", written)
        assert done.returncode == 1, done.stderr
        assert "alpha 1.0: WD001: alpha/core.py" in done.stdout
        assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(written.read_text()) is None

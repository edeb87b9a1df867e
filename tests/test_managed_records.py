"""conda's and rpm's records, in the layouts those tools write, judged as dpkg's are.

No conda or rpm database exists on these machines, so the records are written here in
the exact layout the tools write them: a conda-meta JSON as conda links a package (the
field names and nesting of conda's ``PrefixRecord``, digests computed from the files),
and ``rpm -qf``/``rpm -V`` answers replayed by a small script standing in for rpm on PATH,
in the line format rpm prints.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from helpers import cli_json, run_cli

from wheeldoctor.formats.rpm import parse_query_owners, parse_verify

SITE = "lib/python3.11/site-packages"
YAML_INIT = b"__version__ = '6.0.1'\n"
CYAML = b"from yaml._yaml import *\n"
TEXT_WITH_PREFIX = b"#!{prefix}/bin/python\nprint('hi')\n"
METADATA = b"Metadata-Version: 2.1\nName: PyYAML\nVersion: 6.0.1\n\n"


def _entry(path: str, data: bytes, **extra: Any) -> dict[str, Any]:
    return {
        "_path": path,
        "path_type": "hardlink",
        "sha256": hashlib.sha256(data).hexdigest(),
        "size_in_bytes": len(data),
        **extra,
    }


def _conda_prefix(root: Path) -> Path:
    """A conda prefix holding pyyaml 6.0.1 as conda links it, with its conda-meta record."""
    prefix = root / "env"
    site = prefix / SITE
    files = {
        f"{SITE}/yaml/__init__.py": YAML_INIT,
        f"{SITE}/yaml/cyaml.py": CYAML,
        f"{SITE}/PyYAML-6.0.1.dist-info/METADATA": METADATA,
        f"{SITE}/PyYAML-6.0.1.dist-info/INSTALLER": b"conda\n",
    }
    for path, data in files.items():
        (prefix / path).parent.mkdir(parents=True, exist_ok=True)
        (prefix / path).write_bytes(data)
    # A script whose prefix placeholder conda replaced at link time: sha256_in_prefix vouches for it.
    script = TEXT_WITH_PREFIX.replace(b"{prefix}", str(prefix).encode())
    (prefix / "bin").mkdir()
    (prefix / "bin" / "yaml-tool").write_bytes(script)
    (site / "yaml" / "__pycache__").mkdir()
    paths = [_entry(path, data) for path, data in files.items()]
    placeholder = "/opt/anaconda1anaconda2anaconda3"
    paths.append(
        {
            **_entry("bin/yaml-tool", TEXT_WITH_PREFIX.replace(b"{prefix}", placeholder.encode())),
            "file_mode": "text",
            "prefix_placeholder": placeholder,
            "sha256_in_prefix": hashlib.sha256(script).hexdigest(),
        }
    )
    paths.append({"_path": f"{SITE}/yaml/__pycache__/__init__.cpython-311.pyc", "path_type": "pyc_file"})
    record = {
        "build": "py311h459d7ec_1",
        "build_number": 1,
        "channel": "https://conda.anaconda.org/conda-forge/linux-64",
        "constrains": [],
        "depends": ["libgcc-ng >=12", "python >=3.11,<3.12.0a0", "python_abi 3.11.* *_cp311", "yaml >=0.2.5,<0.3.0a0"],
        "extracted_package_dir": "/opt/conda/pkgs/pyyaml-6.0.1-py311h459d7ec_1",
        "files": [p["_path"] for p in paths],
        "fn": "pyyaml-6.0.1-py311h459d7ec_1.conda",
        "license": "MIT",
        "link": {"source": "/opt/conda/pkgs/pyyaml-6.0.1-py311h459d7ec_1", "type": 1},
        "md5": "52719a74ad130de8fb5d047dc91f247a",
        "name": "pyyaml",
        "package_tarball_full_path": "/opt/conda/pkgs/pyyaml-6.0.1-py311h459d7ec_1.conda",
        "paths_data": {"paths": paths, "paths_version": 1},
        "requested_spec": "pyyaml",
        "sha256": "52a4b2cd2e8d8d1fb5c41ba07c7e7b2b47a5ee8b3e5ae0a4ac1dd1e1a7d2e0a5",
        "size": 200626,
        "subdir": "linux-64",
        "timestamp": 1695373611984,
        "track_features": "",
        "url": "https://conda.anaconda.org/conda-forge/linux-64/pyyaml-6.0.1-py311h459d7ec_1.conda",
        "version": "6.0.1",
    }
    (prefix / "conda-meta").mkdir()
    (prefix / "conda-meta" / "pyyaml-6.0.1-py311h459d7ec_1.json").write_text(json.dumps(record, indent=2))
    return prefix


def test_a_conda_package_is_verified_by_its_conda_meta_record(tmp_path: Path) -> None:
    prefix = _conda_prefix(tmp_path)
    code, document = cli_json("check", "--all", "--path", prefix / SITE)
    [pyyaml] = document["distributions"]
    assert (code, pyyaml["status"], pyyaml["findings"]) == (0, "intact", [])
    assert pyyaml["managed_by"]["tool"] == "conda"
    assert (pyyaml["managed_by"]["package"], pyyaml["managed_by"]["version"]) == ("pyyaml", "6.0.1-py311h459d7ec_1")
    # No RECORD: every file is vouched for by conda's sha256, the replaced script by sha256_in_prefix.
    assert pyyaml["verified_by"] == {"sha256": 5}


def test_a_file_altered_in_a_conda_prefix_is_broken_and_repaired_by_conda(tmp_path: Path) -> None:
    prefix = _conda_prefix(tmp_path)
    (prefix / SITE / "yaml" / "cyaml.py").write_bytes(CYAML + b"# patched\n")
    code, document = cli_json("check", "--all", "--path", prefix / SITE)
    [pyyaml] = document["distributions"]
    [finding] = pyyaml["findings"]
    assert (code, pyyaml["status"], finding["code"], finding["path"]) == (1, "broken", "WD002", "yaml/cyaml.py")
    assert "pyyaml's conda-meta record (conda)" in finding["message"]
    assert pyyaml["repair"]["argv"] == [
        "conda", "install", "--prefix", str(prefix), "--force-reinstall", "--no-deps", "pyyaml=6.0.1"
    ]  # fmt: skip
    assert pyyaml["repair"]["runs_pip"] is False


# What `rpm -V python3-pyyaml` printed on a Fedora 39 system whose yaml/__init__.py had been
# edited and whose cyaml.py had been deleted ({site} stands for its site-packages).
RPM_V = """\
S.5....T.    {site}/yaml/__init__.py
missing     {site}/yaml/cyaml.py
.M.......  c /etc/python3-pyyaml.conf
.......T.  d /usr/share/doc/python3-pyyaml/README.md
"""
RPM_QF = "python3-pyyaml\t6.0.1-11.fc39\n"


def _rpm_site(root: Path) -> Path:
    site = root / "usr" / "lib64" / "python3.12" / "site-packages"
    info = site / "PyYAML-6.0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_bytes(METADATA)
    (info / "INSTALLER").write_text("rpm\n")
    (site / "yaml").mkdir()
    (site / "yaml" / "__init__.py").write_bytes(YAML_INIT)
    return site


def _replaying_rpm(root: Path, site: Path) -> Path:
    """A directory whose ``rpm`` replays the recorded answers: ``-qf`` then ``-V``."""
    bin_dir = root / "rpm-bin"
    bin_dir.mkdir()
    (root / "qf.txt").write_text(RPM_QF)
    (root / "v.txt").write_text(RPM_V.replace("{site}", str(site)))
    script = bin_dir / "rpm"
    cat = shutil.which("cat")
    script.write_text(
        f'#!/bin/sh\ncase "$1" in\n  -qf) {cat} {root / "qf.txt"} ;;\n  -V) {cat} {root / "v.txt"}; exit 1 ;;\nesac\n'
    )
    script.chmod(0o755)
    return bin_dir


def test_rpm_verify_lines_parse_as_rpm_prints_them() -> None:
    verdicts = parse_verify(RPM_V.replace("{site}", "/usr/lib64/python3.12/site-packages"))
    assert [(v.path.rsplit("/", 1)[1], v.missing, v.flags) for v in verdicts] == [
        ("__init__.py", False, "S.5....T."),
        ("cyaml.py", True, ""),
        ("python3-pyyaml.conf", False, ".M......."),
        ("README.md", False, ".......T."),
    ]
    assert parse_query_owners(RPM_QF + "file /x is not owned by any package\n") == [
        ("python3-pyyaml", "6.0.1-11.fc39"),
        None,
    ]


def test_an_rpm_package_is_judged_by_rpm_verify(tmp_path: Path) -> None:
    site = _rpm_site(tmp_path)
    rpm_bin = _replaying_rpm(tmp_path, site)
    path = f"{rpm_bin}{os.pathsep}{os.path.dirname(sys.executable)}"
    done = run_cli("check", "--all", "--json", "--path", site, env={"PATH": path})
    [pyyaml] = json.loads(done.stdout)["distributions"]
    assert (done.returncode, pyyaml["status"]) == (1, "broken")
    assert (pyyaml["managed_by"]["tool"], pyyaml["managed_by"]["package"]) == ("rpm", "python3-pyyaml")
    # The digest change and the deletion break it; mode and mtime alone do not.
    assert sorted((f["code"], f["path"].rsplit("/", 1)[1]) for f in pyyaml["findings"]) == [
        ("WD001", "__init__.py"),
        ("WD003", "cyaml.py"),
    ]
    assert pyyaml["repair"]["argv"] == ["dnf", "reinstall", "python3-pyyaml"]


def test_an_rpm_package_without_rpm_is_unverifiable_with_the_reason(tmp_path: Path) -> None:
    site = _rpm_site(tmp_path)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    assert shutil.which("rpm", path=str(empty)) is None
    done = run_cli("check", "--all", "--json", "--path", site, env={"PATH": str(empty)})
    [pyyaml] = json.loads(done.stdout)["distributions"]
    assert (done.returncode, pyyaml["status"]) == (0, "unverifiable")
    [finding] = pyyaml["findings"]
    assert (finding["code"], finding["kind"]) == ("WD018", "unverifiable")
    assert "rpm is not installed" in finding["message"]

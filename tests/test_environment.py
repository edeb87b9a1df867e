"""Finding distributions on site directories, the way importlib.metadata does."""

from __future__ import annotations

import importlib.metadata
import os
import sys
from email.parser import HeaderParser
from pathlib import Path

import pytest
from helpers import VenvFactory, WheelFactory, pip_install, uv_install
from packaging.utils import canonicalize_name

from wheeldoctor.model.environment import InstalledDistribution
from wheeldoctor.model.findings import Code, Kind
from wheeldoctor.model.sitedirs import is_within, lookup_key, root_for
from wheeldoctor.where.environment import load_distribution, load_environment, scan_location

NAMES = [
    "requests",
    "Requests",
    "REQUESTS",
    "zope.interface",
    "zope_interface",
    "zope-interface",
    "Zope.Interface",
    "ruamel.yaml.clib",
    "typing_extensions",
    "typing-extensions",
    "backports.zoneinfo",
    "jaraco.text",
    "a",
    "A-",
    "_a_",
    "a--b",
    "a-_-.b",
    "a..b",
    "A.B-C_D",
    "nvidia-cutlass-dsl-libs-cu13",
    "PyYAML",
    "Flask_SQLAlchemy",
    "0-9",
    "pip",
    "\u00c9cole",  # non-ASCII: both sides lower-case the same way
    "\u0130stanbul",  # dotted capital I lower-cases to two code points
    "-leading",
    "trailing.",
    "",
]


@pytest.mark.parametrize("name", NAMES)
def test_lookup_key_is_packagings_canonical_form_with_underscores(name: str) -> None:
    assert lookup_key(name) == canonicalize_name(name).replace("-", "_")


@pytest.mark.parametrize("name", NAMES)
def test_lookup_key_is_importlib_metadatas_rule(name: str) -> None:
    normalize = importlib.metadata.Prepared.normalize  # type: ignore[attr-defined]
    assert lookup_key(name) == normalize(name)


@pytest.mark.parametrize(
    ("path", "root", "inside"),
    [
        ("/a/b", "/a", True),
        ("/a", "/a", True),
        ("/ab", "/a", False),
        ("/a/../b", "/a", False),
        ("/etc/passwd", "/venv", False),
        ("/x", "/", True),
    ],
)
def test_is_within(path: str, root: str, inside: bool) -> None:
    assert is_within(os.path.normpath(path), root) is inside


@pytest.mark.parametrize(
    ("location", "prefixes", "root"),
    [
        ("/venv/lib/python3.11/site-packages", [], "/venv"),
        ("/venv/lib64/python3.11/site-packages", [], "/venv"),
        ("/usr/lib/python3/dist-packages", [], "/usr"),
        ("/usr/local/lib/python3.12/dist-packages", [], "/usr/local"),
        ("/home/u/.local/lib/python3.11/site-packages", ["/usr", "/home/u/.local"], "/home/u/.local"),
        ("/venv/lib/python3.11/site-packages", ["/", "/venv"], "/venv"),
        ("/opt/plugins", [], "/opt/plugins"),
        ("/opt/plugins", ["/usr"], "/opt/plugins"),
    ],
)
def test_root_for(location: str, prefixes: list[str], root: str) -> None:
    assert root_for(location, prefixes) == root


def _dist_info(site: Path, dirname: str, files: dict[str, bytes]) -> Path:
    path = site / dirname
    path.mkdir(parents=True)
    for name, data in files.items():
        (path / name).write_bytes(data)
    return path


META = b"Metadata-Version: 2.1\nName: Demo.Pkg\nVersion: 1.0\nRequires-Dist: six>=1\nRequires-Python: >=3.8\n"


def test_scan_location_finds_both_suffixes(tmp_path: Path) -> None:
    _dist_info(tmp_path, "Demo.Pkg-1.0.dist-info", {"METADATA": META})
    _dist_info(tmp_path, "legacy-2.0-py3.11.egg-info", {"PKG-INFO": META})
    (tmp_path / "single-1.0.egg-info").write_bytes(META)
    (tmp_path / "demo_pkg").mkdir()
    found = sorted((f.key, os.path.basename(f.path)) for f in scan_location(str(tmp_path)))
    assert found == [
        ("demo_pkg", "Demo.Pkg-1.0.dist-info"),
        ("legacy", "legacy-2.0-py3.11.egg-info"),
        ("single", "single-1.0.egg-info"),
    ]


@pytest.mark.parametrize("location", ["/nonexistent/site", "/etc/passwd"])
def test_scan_location_of_nothing(location: str) -> None:
    assert list(scan_location(location)) == []


def _load(site: Path, dirname: str) -> InstalledDistribution:
    found = next(f for f in scan_location(str(site)) if os.path.basename(f.path) == dirname)
    return load_distribution(found, str(site))


def test_load_distribution_reads_metadata(tmp_path: Path) -> None:
    _dist_info(tmp_path, "Demo.Pkg-1.0.dist-info", {"METADATA": META, "RECORD": b"", "INSTALLER": b"uv\n"})
    dist = _load(tmp_path, "Demo.Pkg-1.0.dist-info")
    assert (dist.name, dist.version, dist.installer) == ("demo-pkg", "1.0", "uv")
    assert dist.problems == ()
    assert dist.metadata is not None
    assert dist.metadata.requires_dist == ("six>=1",)
    assert dist.metadata.requires_python == ">=3.8"


BODY = b"Requires-Dist: from-the-description\nName: not-this\n\nProvides-Extra: nor-this\n"


@pytest.mark.parametrize(
    "metadata",
    [
        META + b"Provides-Extra: fast\n\n" + BODY,
        (META + b"Provides-Extra: fast\n\n" + BODY).replace(b"\n", b"\r\n"),
        META + b"Provides-Extra: fast\n\r\n" + BODY,
        META + b"Provides-Extra: fast\n",
        META + b"Provides-Extra: fast",
        META.replace(b"six>=1\n", b"six>=1\n ; extra == 'x'\n") + b"Provides-Extra: fast\n\n" + BODY,
        META + b"Provides-Extra: fast\nnot a header line\n" + BODY,
    ],
    ids=["body", "crlf", "mixed-blank-line", "no-body", "no-final-newline", "folded", "body-without-blank-line"],
)
def test_metadata_headers_end_where_the_description_starts(tmp_path: Path, metadata: bytes) -> None:
    """Only the header block is parsed: the same fields as the email parser finds in the whole file."""
    _dist_info(tmp_path, "demo-1.0.dist-info", {"METADATA": metadata, "RECORD": b""})
    dist = _load(tmp_path, "demo-1.0.dist-info")
    whole = HeaderParser().parsestr(metadata.decode())
    assert dist.problems == ()
    assert dist.metadata is not None
    assert (dist.metadata.name, dist.metadata.version) == ("Demo.Pkg", "1.0")
    assert dist.metadata.requires_dist == tuple(v.strip() for v in whole.get_all("Requires-Dist"))
    assert dist.metadata.requires_dist[0].startswith("six>=1")
    assert dist.metadata.requires_python == ">=3.8"
    assert dist.metadata.provides_extra == ("fast",) == tuple(whole.get_all("Provides-Extra"))


@pytest.mark.parametrize(
    ("files", "code", "path"),
    [
        ({"RECORD": b""}, Code.METADATA_PROBLEM, "METADATA"),
        ({"METADATA": b"Name: demo\n", "RECORD": b""}, Code.METADATA_PROBLEM, "METADATA"),
        ({"METADATA": b"Version: 1\n", "RECORD": b""}, Code.METADATA_PROBLEM, "METADATA"),
        ({"METADATA": b"\xff\xfe\x00garbage", "RECORD": b""}, Code.METADATA_PROBLEM, "METADATA"),
        ({"METADATA": META}, Code.NO_RECORD, "RECORD"),
    ],
    ids=["no-metadata", "no-version", "no-name", "binary-metadata", "no-record"],
)
def test_load_distribution_problems(tmp_path: Path, files: dict[str, bytes], code: Code, path: str) -> None:
    _dist_info(tmp_path, "demo-1.0.dist-info", files)
    dist = _load(tmp_path, "demo-1.0.dist-info")
    assert [(f.code, f.path) for f in dist.problems] == [(code, path)]
    # Without readable metadata the directory name still identifies it.
    assert (dist.name, dist.version) == (("demo-pkg", "1.0") if code is Code.NO_RECORD else ("demo", "1.0"))


@pytest.mark.parametrize("kind", ["fifo", "directory", "dev-zero", "binary"])
def test_hostile_record(tmp_path: Path, kind: str) -> None:
    info = _dist_info(tmp_path, "demo-1.0.dist-info", {"METADATA": META})
    record = info / "RECORD"
    if kind == "fifo":
        os.mkfifo(record)
    elif kind == "directory":
        record.mkdir()
    elif kind == "dev-zero":
        record.symlink_to("/dev/zero")
    else:
        record.write_bytes(bytes(range(256)))
    dist = _load(tmp_path, "demo-1.0.dist-info")
    assert dist.record is None or dist.record.rows == ()
    problems = [*dist.problems, *(dist.record.problems if dist.record else ())]
    assert [(f.code, f.kind, f.path) for f in problems] == [(Code.RECORD_UNDECODABLE, Kind.MALFORMED, "RECORD")]


def test_egg_info_file_has_nothing_to_verify(tmp_path: Path) -> None:
    (tmp_path / "single-1.0.egg-info").write_bytes(META)
    dist = _load(tmp_path, "single-1.0.egg-info")
    assert dist.legacy
    assert [(f.code, f.kind) for f in dist.problems] == [(Code.NO_RECORD, Kind.UNVERIFIABLE)]


def test_first_distribution_wins_and_duplicates_are_kept(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    _dist_info(first, "demo-1.0.dist-info", {"METADATA": META.replace(b"Demo.Pkg", b"demo"), "RECORD": b""})
    meta2 = META.replace(b"Demo.Pkg", b"Demo").replace(b"1.0", b"2.0")
    _dist_info(second, "Demo-2.0.dist-info", {"METADATA": meta2, "RECORD": b""})
    _dist_info(second, "other-1.0.dist-info", {"METADATA": b"Name: other\nVersion: 1.0\n", "RECORD": b""})
    env = load_environment("test", [str(first), str(second), str(first), ""], [])
    # Repeats and empty entries are dropped; order is kept.
    assert env.paths == (str(first.resolve()), str(second.resolve()))
    assert [(d.name, d.version, d.active) for d in env.distributions if d.name == "demo"] == [
        ("demo", "1.0", True),
        ("demo", "2.0", False),
    ]
    found = env.find("demo")
    assert found is not None
    assert found.version == "1.0"
    assert {d.name for d in env.active()} == {"demo", "other"}


def test_agrees_with_importlib_metadata(tmp_path: Path, venv_factory: VenvFactory, wheel_factory: WheelFactory) -> None:
    """On a real venv (pip and uv installs), the active set is importlib.metadata's."""
    venv = venv_factory()
    pip_install(venv, "--no-index", "--no-deps", wheel_factory("Zope.Demo", "1.0", {"zope/demo/__init__.py": b""}))
    uv_install(venv, wheel_factory("typing_extras", "2.0", {"typing_extras.py": b""}))
    env = load_environment("venv", [str(venv.site_packages)], [str(venv.prefix)])
    ours = {(d.name, d.version) for d in env.active()}
    theirs = {
        (str(canonicalize_name(d.metadata["Name"])), d.version)
        for d in importlib.metadata.distributions(path=[str(venv.site_packages)])
    }
    assert ours == theirs
    assert {"zope-demo", "typing-extras"} <= {name for name, _ in ours}
    assert all(d.root == str(venv.prefix.resolve()) for d in env.distributions)
    assert {d.installer for d in env.distributions if d.name in ("zope-demo", "typing-extras")} == {"pip", "uv"}


def test_current_interpreter_environment() -> None:
    env = load_environment("here", sys.path[1:], [sys.prefix])
    assert env.find("pytest") is not None
    assert env.find("no-such-distribution-here") is None

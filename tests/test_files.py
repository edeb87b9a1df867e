"""The verifier on real installs: every corruption is found, and nothing else is.

Wheels are built by tests/helpers.py (RECORD computed from the bytes), installed by
real pip and real uv into real venvs. Each module-scoped venv is corrupted one file at
a time and put back, and the exact set of (distribution, code, path) findings is
asserted over the whole environment: one finding for the damaged file, none elsewhere.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import Venv, build_wheel, data_dirname, make_venv, pip_install, record_hash, uv_install

from wheeldoctor.engine.digests import BUFFER_SIZE
from wheeldoctor.engine.verify import verify
from wheeldoctor.formats.record import decode_record
from wheeldoctor.judge.claims import Claim
from wheeldoctor.judge.files import Status
from wheeldoctor.model.files import FileState, Fingerprint
from wheeldoctor.model.findings import Code, Kind
from wheeldoctor.model.record import RecordRow
from wheeldoctor.where.environment import load_environment

Found = set[tuple[str, str, str | None]]


def blob(size: int) -> bytes:
    """Deterministic bytes of ``size``."""
    block = hashlib.sha512(b"blob").digest() * 32
    return (block * (size // len(block) + 1))[:size]


DEMO_FILES = {
    "demo/__init__.py": b"def main() -> None:\n    print('hello from demo')\n",
    "demo/core.py": b"VALUE = 42\n\n\ndef double(x: int) -> int:\n    return 2 * x\n",
    "demo/blob.bin": blob(BUFFER_SIZE + 70_000),
    "demo/empty.txt": b"",
    "demo/same_a.txt": b"AAAA",
    "demo/same_b.txt": b"BBBB",
    f"{data_dirname('demo', '1.0')}/data/share/demo/readme.txt": b"shared data\n",
    f"{data_dirname('demo', '1.0')}/scripts/demo-sh": b"#!/bin/sh\necho raw script\n",
}


@dataclass(frozen=True)
class Installed:
    """A venv holding the demo distribution, as one installer left it."""

    installer: str
    venv: Venv

    @property
    def dist_info(self) -> Path:
        """The demo distribution's .dist-info directory."""
        return self.venv.dist_info("demo")

    def rows(self) -> list[tuple[str, Path]]:
        """Every hashed RECORD row of demo: (path as written, file on disk)."""
        record = decode_record((self.dist_info / "RECORD").read_bytes())
        assert record.problems == ()
        return [(row.path, Path(os.path.normpath(self.venv.site_packages / row.path))) for row in record.rows]


def findings(venv: Venv) -> Found:
    """Verify every active distribution of ``venv``: the set of (name, code, path)."""
    env = load_environment("test", [str(venv.site_packages)], [str(venv.prefix)])
    reports = verify(env.active(), env.active(), jobs=4)
    return {(r.name, f.code.value, f.path) for r in reports for f in r.findings}


def unreadable_metadata(rel: str) -> Found:
    """The second finding a METADATA without its Name and Version rightly adds."""
    return {("demo", Code.METADATA_PROBLEM.value, "METADATA")} if rel.endswith(".dist-info/METADATA") else set()


def statuses(venv: Venv) -> dict[str, Status]:
    """The verdict on every active distribution of ``venv``."""
    env = load_environment("test", [str(venv.site_packages)], [str(venv.prefix)])
    return {r.name: r.status for r in verify(env.active(), env.active())}


@contextmanager
def restored(path: Path) -> Iterator[bytes]:
    """Yield ``path``'s bytes; afterwards put the file back exactly (content and mode)."""
    data = path.read_bytes()
    mode = path.stat().st_mode
    try:
        yield data
    finally:
        if path.is_symlink() or (path.exists() and not path.is_file()):
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            else:
                path.unlink()
        path.write_bytes(data)
        path.chmod(mode)


@pytest.fixture(scope="module", params=["pip", "uv"])
def installed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, uv_bin: Path) -> Installed:
    """A venv with demo installed by pip (which compiles .pyc) or uv."""
    root = tmp_path_factory.mktemp(f"verify-{request.param}")
    wheel = build_wheel(root / "wheels", "demo", "1.0", DEMO_FILES, console_scripts={"demo-cli": "demo:main"})
    venv = make_venv(root / "venv", uv_bin=uv_bin)
    if request.param == "pip":
        pip_install(venv, "--no-index", "--no-deps", wheel)
    else:
        uv_install(venv, wheel, uv_bin=uv_bin)
    return Installed(request.param, venv)


# --------------------------------------------------------------------------
# an intact install has no finding, whatever the installer added
# --------------------------------------------------------------------------


def test_fresh_install_has_no_finding(installed: Installed) -> None:
    assert findings(installed.venv) == set()
    assert statuses(installed.venv) == {"demo": Status.INTACT}
    paths = {path for path, _ in installed.rows()}
    # The traps are really there: scripts and data outside site-packages, installer files.
    assert {"../../../bin/demo-cli", "../../../bin/demo-sh", "../../../share/demo/readme.txt"} <= paths
    assert "demo-1.0.dist-info/INSTALLER" in paths
    if installed.installer == "pip":
        record = (installed.dist_info / "RECORD").read_text()
        assert ".pyc,," in record  # pip compiled and recorded .pyc without hashes
    else:
        assert "demo-1.0.dist-info/uv_cache.json" in paths


# --------------------------------------------------------------------------
# every corruption of every recorded file is found, and nothing else
# --------------------------------------------------------------------------


def test_flipped_byte_anywhere_in_a_file(installed: Installed) -> None:
    for rel in ("demo/core.py", "../../../bin/demo-cli"):
        path = Path(os.path.normpath(installed.venv.site_packages / rel))
        with restored(path) as data:
            for i in range(len(data)):
                path.write_bytes(data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1 :])
                assert findings(installed.venv) == {("demo", Code.HASH_MISMATCH.value, rel)}, (rel, i)
    assert findings(installed.venv) == set()


def test_flipped_byte_in_every_file(installed: Installed) -> None:
    for rel, path in installed.rows():
        with restored(path) as data:
            if not data:
                continue
            # First, last, and around the small-read and buffer boundaries of the big file.
            # METADATA's middle is its Name and Version: damage there is another finding too.
            middle = () if rel.endswith("/METADATA") else (len(data) // 2,)
            boundaries = (j for j in (65535, 65536, BUFFER_SIZE) if j < len(data))
            for i in sorted({0, *middle, len(data) - 1, *boundaries}):
                path.write_bytes(data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1 :])
                found = findings(installed.venv)
                assert found == {("demo", Code.HASH_MISMATCH.value, rel)}, (rel, i)
    assert findings(installed.venv) == set()


def test_truncated_file(installed: Installed) -> None:
    for rel, path in installed.rows():
        with restored(path) as data:
            if not data:
                continue
            path.write_bytes(data[:-1])
            assert findings(installed.venv) == {("demo", Code.SIZE_MISMATCH.value, rel)}, rel
    assert findings(installed.venv) == set()


def test_grown_file(installed: Installed) -> None:
    for rel, path in installed.rows():
        with restored(path) as data:
            path.write_bytes(data + b"\n")
            assert findings(installed.venv) == {("demo", Code.SIZE_MISMATCH.value, rel)}, rel
    assert findings(installed.venv) == set()


def test_deleted_file(installed: Installed) -> None:
    for rel, path in installed.rows():
        with restored(path):
            path.unlink()
            assert findings(installed.venv) == {("demo", Code.MISSING.value, rel)} | unreadable_metadata(rel), rel
    assert findings(installed.venv) == set()


def test_file_overwritten_with_another_files_bytes(installed: Installed) -> None:
    rows = installed.rows()
    for (rel, path), (_, other) in zip(rows, rows[1:] + rows[:1], strict=True):
        with restored(path) as data:
            replacement = other.read_bytes()
            if replacement == data:
                continue
            path.write_bytes(replacement)
            code = Code.HASH_MISMATCH if len(replacement) == len(data) else Code.SIZE_MISMATCH
            assert findings(installed.venv) == {("demo", code.value, rel)} | unreadable_metadata(rel), rel
    assert findings(installed.venv) == set()


def test_same_size_swap_is_a_hash_mismatch_with_evidence(installed: Installed) -> None:
    path = installed.venv.site_packages / "demo/same_a.txt"
    with restored(path):
        path.write_bytes(DEMO_FILES["demo/same_b.txt"])
        env = load_environment("test", [str(installed.venv.site_packages)], [str(installed.venv.prefix)])
        (report,) = verify(env.active(), env.active())
        (finding,) = report.findings
        assert (finding.code, finding.kind, finding.path) == (Code.HASH_MISMATCH, Kind.MODIFIED, "demo/same_a.txt")
        assert finding.expected == record_hash(DEMO_FILES["demo/same_a.txt"])
        assert finding.found == record_hash(DEMO_FILES["demo/same_b.txt"])
        assert report.status is Status.BROKEN


def test_pyc_rows_are_not_verified_but_their_absence_is_fine(installed: Installed) -> None:
    pycs = list(installed.venv.site_packages.glob("demo/__pycache__/*.pyc"))
    if installed.installer == "uv":
        assert pycs == []  # uv without --compile-bytecode writes none
        return
    assert pycs
    with restored(pycs[0]):
        pycs[0].write_bytes(b"stale bytecode")
        assert findings(installed.venv) == set()
        pycs[0].unlink()
        assert findings(installed.venv) == set()


# --------------------------------------------------------------------------
# hostile things where a recorded file should be
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "code"),
    [
        ("fifo", Code.NOT_REGULAR),
        ("dev-zero", Code.NOT_REGULAR),
        ("dev-urandom", Code.NOT_REGULAR),
        ("directory", Code.NOT_REGULAR),
        ("loop", Code.UNREADABLE),
        ("dangling", Code.MISSING),
    ],
)
def test_hostile_file_in_place_of_a_recorded_one(installed: Installed, kind: str, code: Code) -> None:
    rel = "demo/core.py"
    path = installed.venv.site_packages / rel
    with restored(path):
        path.unlink()
        if kind == "fifo":
            os.mkfifo(path)
        elif kind.startswith("dev-"):
            path.symlink_to("/dev/" + kind[4:])
        elif kind == "directory":
            path.mkdir()
        elif kind == "loop":
            path.symlink_to(path)
        else:
            path.symlink_to(path.with_name("nowhere"))
        assert findings(installed.venv) == {("demo", code.value, rel)}
        assert statuses(installed.venv) == {"demo": Status.BROKEN}


def test_symlink_to_identical_bytes_is_intact(installed: Installed) -> None:
    # A symlink whose target holds the recorded bytes is what Python imports: intact.
    path = installed.venv.site_packages / "demo/core.py"
    with restored(path) as data:
        copy = installed.venv.prefix / "core-copy.py"
        copy.write_bytes(data)
        path.unlink()
        path.symlink_to(copy)
        assert findings(installed.venv) == set()
        copy.unlink()


# --------------------------------------------------------------------------
# RECORD itself: rows that climb out, weak hashes, garbage
# --------------------------------------------------------------------------


@contextmanager
def record_appended(installed: Installed, *rows: str) -> Iterator[None]:
    """Append raw lines to demo's RECORD for the duration."""
    record = installed.dist_info / "RECORD"
    with restored(record) as data:
        record.write_bytes(data + "".join(row + "\n" for row in rows).encode())
        yield


def test_rows_climbing_out_are_outside_and_never_read(installed: Installed, tmp_path: Path) -> None:
    # The files exist and hold exactly the recorded bytes: were they read, they would pass.
    bait = tmp_path / "bait.txt"
    bait.write_bytes(b"bait")
    climb = os.path.relpath(bait, installed.venv.site_packages)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    rows = [
        f"{climb},{record_hash(b'bait')},4",
        f"{bait},{record_hash(b'bait')},4",
        f"../../../../../../../../../../etc/passwd,{record_hash(b'x')},1",
        f"/etc/passwd,{record_hash(b'x')},1",
        f"{os.path.relpath(fifo, installed.venv.site_packages)},{record_hash(b'x')},1",
        f"demo/../../../../../../../../../etc/shadow,{record_hash(b'x')},1",
    ]
    with record_appended(installed, *rows):
        found = findings(installed.venv)
    expected = {("demo", Code.OUTSIDE.value, row.rpartition(",")[0].rpartition(",")[0]) for row in rows}
    assert found == expected


def test_weak_and_unknown_hashes_make_it_unverifiable(installed: Installed) -> None:
    md5 = hashlib.md5(b"x").hexdigest()
    with record_appended(installed, f"demo/extra.py,md5={md5},1", "demo/other.py,blake3=abcd,1", "demo/bare.py,,1"):
        assert findings(installed.venv) == {
            ("demo", Code.WEAK_HASH.value, "demo/extra.py"),
            ("demo", Code.UNKNOWN_HASH.value, "demo/other.py"),
            ("demo", Code.NO_HASH.value, "demo/bare.py"),
        }
        assert statuses(installed.venv) == {"demo": Status.UNVERIFIABLE}


def test_malformed_and_duplicate_rows_break_it(installed: Installed) -> None:
    good = f"demo/core.py,{record_hash(DEMO_FILES['demo/core.py'])},{len(DEMO_FILES['demo/core.py'])}"
    with record_appended(installed, "just-a-path", good, "demo/x.py,sha256=short,1"):
        assert findings(installed.venv) == {
            ("demo", Code.RECORD_ROW_MALFORMED.value, "just-a-path"),
            ("demo", Code.DUPLICATE_ROW.value, "demo/core.py"),
            ("demo", Code.RECORD_ROW_MALFORMED.value, "demo/x.py"),
        }
        assert statuses(installed.venv) == {"demo": Status.BROKEN}


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        ("binary", {("demo", Code.RECORD_UNDECODABLE.value, "RECORD")}),
        ("fifo", {("demo", Code.RECORD_UNDECODABLE.value, "RECORD")}),
        ("missing", {("demo", Code.NO_RECORD.value, "RECORD")}),
        ("empty", set()),
    ],
)
def test_record_damaged(installed: Installed, damage: str, expected: Found) -> None:
    record = installed.dist_info / "RECORD"
    with restored(record):
        if damage == "binary":
            record.write_bytes(bytes(range(256)) * 4)
        else:
            record.unlink()
            if damage == "fifo":
                os.mkfifo(record)
            elif damage == "empty":
                record.write_bytes(b"")
        assert findings(installed.venv) == expected
    assert findings(installed.venv) == set()


def test_missing_metadata(installed: Installed) -> None:
    metadata = installed.dist_info / "METADATA"
    with restored(metadata):
        metadata.unlink()
        assert findings(installed.venv) == {
            ("demo", Code.METADATA_PROBLEM.value, "METADATA"),
            ("demo", Code.MISSING.value, "demo-1.0.dist-info/METADATA"),
        }


# --------------------------------------------------------------------------
# false-positive traps with several distributions
# --------------------------------------------------------------------------


NS_A = {"ns/a/__init__.py": b"A = 1\n", "ns/shared.txt": b"same bytes in both\n"}
NS_B = {"ns/b/__init__.py": b"B = 2\n", "ns/shared.txt": b"same bytes in both\n"}


@pytest.mark.parametrize("installer", ["pip", "uv", "uv-compile", "uv-hardlink"])
def test_namespace_packages_and_installer_variants(
    installer: str, tmp_path: Path, uv_bin: Path, uv_cache: Path
) -> None:
    """Two wheels sharing a pkgutil-free namespace dir (and one identical file), plus demo."""
    wheels = [
        build_wheel(tmp_path, "ns-a", "1.0", NS_A),
        build_wheel(tmp_path, "ns-b", "1.0", NS_B),
        build_wheel(tmp_path, "demo", "1.0", DEMO_FILES, console_scripts={"demo-cli": "demo:main"}),
    ]
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin, cache_dir=uv_cache)
    if installer == "pip":
        pip_install(venv, "--no-index", "--no-deps", *wheels)
    elif installer == "uv-compile":
        uv_install(venv, "--compile-bytecode", *wheels, uv_bin=uv_bin)
        assert list(venv.site_packages.glob("demo/__pycache__/*.pyc"))
    else:
        uv_install(venv, *wheels, uv_bin=uv_bin, link_mode="hardlink" if installer == "uv-hardlink" else "copy")
    assert not (venv.site_packages / "ns" / "__init__.py").exists()
    assert findings(venv) == set()
    assert statuses(venv) == {"ns-a": Status.INTACT, "ns-b": Status.INTACT, "demo": Status.INTACT}
    if installer == "uv-hardlink":
        return  # corrupting a hard link would corrupt uv's cache too
    # Damage inside the namespace touches only its owner.
    victim = venv.site_packages / "ns/a/__init__.py"
    victim.write_bytes(b"A = 3\n")
    assert findings(venv) == {("ns-a", Code.HASH_MISMATCH.value, "ns/a/__init__.py")}


ODD_NAMES = {
    "odd/with,comma.txt": b"comma\n",
    'odd/with"quote.txt': b"quote\n",
    "odd/with space.txt": b"space\n",
    "odd/caf\u00e9/\u65e5\u672c.txt": b"unicode\n",
}


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_unusual_file_names(installer: str, tmp_path: Path, uv_bin: Path, uv_cache: Path) -> None:
    """Names the csv module must quote, and names outside ASCII.

    (Names holding \\x85 or \\u2028 are left to test_record.py: uv refuses them and pip
    itself splits its RECORD at them, so no real install holds a faithful RECORD.)
    """
    wheel = build_wheel(tmp_path, "odd", "1.0", ODD_NAMES)
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin, cache_dir=uv_cache)
    if installer == "pip":
        pip_install(venv, "--no-index", "--no-deps", wheel)
    else:
        uv_install(venv, wheel, uv_bin=uv_bin)
    assert findings(venv) == set()
    for name in ODD_NAMES:
        path = venv.site_packages / name
        with restored(path):
            path.unlink()
            assert findings(venv) == {("odd", Code.MISSING.value, name)}


def test_verify_named_subset_only_reports_it(installed: Installed) -> None:
    path = installed.venv.site_packages / "demo/core.py"
    env = load_environment("test", [str(installed.venv.site_packages)], [str(installed.venv.prefix)])
    with restored(path):
        path.write_bytes(b"changed\n")
        assert verify([], env.active()) == []
        (report,) = verify(env.active(), env.active())
        assert report.status is Status.BROKEN


def test_pip_target_install_scripts_resolve_inside_the_target(tmp_path: Path) -> None:
    # pip --target stages through a --home scheme: RECORD says ../../bin/tool for DIR/bin/tool.
    wheel = build_wheel(
        tmp_path / "w",
        "targeted",
        "1.0",
        {"targeted/__init__.py": b"def main(): pass\n"},
        console_scripts={"targeted": "targeted:main"},
    )
    target = tmp_path / "target"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    record = next(target.glob("targeted-1.0.dist-info")) / "RECORD"
    assert "../../bin/targeted," in record.read_text()
    env = load_environment("t", [str(target)], [])
    [report] = verify(env.active(), env.active())
    assert (report.status, report.findings) == (Status.INTACT, ())
    script = target / "bin" / "targeted"
    data = script.read_bytes()
    script.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # and the script really is checked
    [report] = verify(env.active(), env.active())
    assert [(f.code, f.path) for f in report.findings] == [(Code.HASH_MISMATCH, "../../bin/targeted")]


def test_named_tuples_built_without_their_new_keep_their_fields() -> None:
    """record.py and verify.py build these with ``tuple.__new__`` (for speed), which checks no
    arity: a field added here must be added at those call sites too, and then here."""
    assert RecordRow._fields == ("path", "algorithm", "digest", "size", "line")
    assert Claim._fields == ("dist", "row", "path")
    assert FileState._fields == (
        "status",
        "size",
        "digests",
        "detail",
        "links",
        "fingerprint",
        "cached",
        "prefixes",
    )
    assert Fingerprint._fields == ("size", "mtime_ns", "ctime_ns", "inode", "device")

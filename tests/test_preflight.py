"""``wheeldoctor wheels``: clashes between wheel files found before anything is installed."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from helpers import build_wheel, cli_json, pip_install, record_hash, run_cli
from variants import BASE, DIFFERING, FILES, IDENTICAL, OVERLAY, Wheels

from wheeldoctor.formats.wheelfile import install_target, read_wheel, unsafe_path, wheel_from_record
from wheeldoctor.model.findings import Code


def test_finds_exactly_the_differing_shared_paths(wheels: Wheels) -> None:
    rc, document = cli_json("wheels", wheels.base, wheels.overlay)
    assert rc == 1
    clashes = {c["path"]: c for c in document["clashes"]}
    assert sorted(p for p, c in clashes.items() if not c["identical"]) == DIFFERING
    assert sorted(p for p, c in clashes.items() if c["identical"]) == IDENTICAL
    for clash in clashes.values():
        assert clash["claimants"] == [BASE, OVERLAY]
        assert clash["on_disk"] is None
    assert all(w["findings"] == [] for w in document["wheels"])


def test_the_text_groups_the_paths_of_one_pair(venv_factory: Any, wheels: Wheels) -> None:
    """One block per pair of wheels (and per wheel and owners replaced): a count, a few paths, the tip;
    ``--verbose`` lists every path, and JSON every clash."""
    venv = venv_factory()
    pip_install(venv, "--no-index", "--no-deps", wheels.base)
    done = run_cli("wheels", wheels.base, wheels.overlay, "--python", venv.python)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    head = lines.index(
        f"clash: {BASE}, {OVERLAY} ship {len(DIFFERING)} path(s) with different bytes, e.g. in demo_dsl/lib/:"
    )
    assert lines[head + 1 : head + 6] == [
        *(f"  {path.removeprefix('demo_dsl/lib/')}" for path in DIFFERING[:3]),
        f"  and {len(DIFFERING) - 3} more (--verbose lists every one)",
        f"Tip: {OVERLAY} requires {BASE} and lies on top of it ({len(DIFFERING)} differing path(s)): "
        f"install {OVERLAY} last",
    ]
    replaced = len(DIFFERING)  # the shared paths with identical bytes replace nothing
    assert any(
        line.startswith(
            f"overwrite: installing {OVERLAY} would replace {replaced} file(s) recorded by {BASE}, e.g. in "
        )
        for line in lines
    )
    assert not [line for line in lines if line.startswith("clash: demo_dsl/")]
    assert len(lines) < 16, done.stdout
    every = run_cli("wheels", wheels.base, wheels.overlay, "--python", venv.python, "-v").stdout.splitlines()
    for path in DIFFERING:
        assert f"clash: {path} is shipped by {BASE}, {OVERLAY} with different bytes" in every
        assert (
            sum(line.startswith("overwrite: ") and line.endswith(f"{path} (recorded by {BASE})") for line in every) == 1
        )


def test_identical_only_wheels_pass(tmp_path: Path) -> None:
    shared = {"nspkg/__init__.py": b"# namespace\n"}
    one = build_wheel(tmp_path, "ns-one", "1.0", {**shared, "nspkg/one.py": b"1\n"})
    two = build_wheel(tmp_path, "ns-two", "1.0", {**shared, "nspkg/two.py": b"2\n"})
    rc, document = cli_json("wheels", one, two)
    assert rc == 0
    assert [(c["path"], c["identical"]) for c in document["clashes"]] == [("nspkg/__init__.py", True)]


def test_against_an_environment_names_whose_files_would_be_replaced(venv_factory: Any, wheels: Wheels) -> None:
    venv = venv_factory()
    pip_install(venv, "--no-index", "--no-deps", wheels.base)
    rc, document = cli_json("wheels", wheels.overlay, "--python", venv.python)
    assert rc == 1
    assert document["clashes"] == []
    replaced = {o["path"]: o for o in document["overwrites"]}
    assert set(replaced) == set(DIFFERING) | set(IDENTICAL)
    for path, write in replaced.items():
        assert write["wheel"] == OVERLAY
        assert write["owners"] == [BASE]
        assert write["identical"] is (path in IDENTICAL)


def test_reinstalling_the_same_distribution_is_not_an_overwrite(venv_factory: Any, wheels: Wheels) -> None:
    venv = venv_factory()
    pip_install(venv, "--no-index", "--no-deps", wheels.base)
    rc, document = cli_json("wheels", wheels.base, "--python", venv.python)
    assert (rc, document["overwrites"]) == (0, [])


def _tamper(wheel: Path, out: Path, member: str, data: bytes) -> Path:
    """Copy a wheel with one member's bytes replaced, RECORD left as it was."""
    target = out / wheel.name
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(target, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, data if info.filename == member else src.read(info))
    return target


def test_wheel_members_are_checked_against_its_record(wheels: Wheels, tmp_path: Path) -> None:
    member = DIFFERING[1]
    bad = _tamper(wheels.base, tmp_path, member, FILES[OVERLAY][member])
    rc, document = cli_json("wheels", bad)
    assert rc == 1
    (wheel,) = document["wheels"]
    assert [(f["code"], f["path"]) for f in wheel["findings"]] == [("WD001", member)]


@pytest.mark.parametrize(
    ("member", "target"),
    [
        ("pkg/mod.py", "pkg/mod.py"),
        ("demo-1.0.data/purelib/pkg/x.py", "pkg/x.py"),
        ("demo-1.0.data/platlib/pkg/x.so", "pkg/x.so"),
        ("demo-1.0.data/scripts/tool", "<scripts>/tool"),
        ("demo-1.0.data/headers/x.h", "<headers>/x.h"),
        ("demo-1.0.data/data/share/x", "<data>/share/x"),
        ("demo-1.0.data/unknown/x", None),
        ("../escape.py", None),
        ("pkg/../../escape.py", None),
        ("/etc/passwd", None),
    ],
)
def test_install_target(member: str, target: str | None) -> None:
    assert install_target(member, "demo-1.0.dist-info") == target


def test_missing_wheel_file_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "wheeldoctor", "wheels", str(tmp_path / "nope-1.0-py3-none-any.whl")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip().startswith("error:") and "Traceback" not in done.stderr


def test_corrupt_zip_is_a_finding(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus-1.0-py3-none-any.whl"
    bogus.write_bytes(b"PK\x03\x04 this is not really a zip")
    rc, document = cli_json("wheels", bogus)
    assert rc == 1
    assert [f["code"] for f in document["wheels"][0]["findings"]] == ["WD023"]


def test_unhashed_pyc_rows_are_recorded_members(tmp_path: Path) -> None:
    files = {"pkg/__init__.py": b"\n", "pkg/__pycache__/__init__.cpython-311.pyc": b"\x00bytecode"}

    def unhash_pyc(rows: list[list[str]]) -> list[list[str]]:
        return [[p, "", ""] if p.endswith(".pyc") else [p, h, s] for p, h, s in rows]

    wheel = build_wheel(tmp_path, "pycdemo", "1.0", files, record_override=unhash_pyc)
    rc, document = cli_json("wheels", wheel)
    assert (rc, document["wheels"][0]["findings"]) == (0, [])


def test_a_row_that_climbs_out_is_one_finding_whether_the_wheel_is_read_whole_or_by_its_record(
    tmp_path: Path,
) -> None:
    files = {"pkg/__init__.py": b"\n"}

    def climb(rows: list[list[str]]) -> list[list[str]]:
        return [*rows, ["../escape.py", record_hash(b"x"), "1"]]

    wheel = build_wheel(tmp_path, "climber", "1.0", files, record_override=climb)
    whole = read_wheel(str(wheel))
    with zipfile.ZipFile(wheel) as archive:
        record = archive.read("climber-1.0.dist-info/RECORD")
    by_record = wheel_from_record(str(wheel), "climber", "1.0", record, "climber-1.0.dist-info")
    expected = unsafe_path("../escape.py")
    assert (expected.code, expected.path, expected.message) == (
        Code.WHEEL_UNSAFE_PATH,
        "../escape.py",
        "would install outside the environment",
    )
    assert [f for f in whole.findings if f.code is Code.WHEEL_UNSAFE_PATH] == [expected]
    assert [f for f in by_record.findings if f.code is Code.WHEEL_UNSAFE_PATH] == [expected]
    assert "../escape.py" not in {m.row.path for m in (*whole.members, *by_record.members)}

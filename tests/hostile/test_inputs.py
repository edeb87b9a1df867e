"""Bad input is one clear line (or a finding), never ``internal error`` (issue #49).

Each case is one a fuzzer of the lock readers and of the dist-info readers found ending in
a traceback: a structure nested past the parser's recursion, a field of another type, a
URL ``urlsplit`` refuses, a marker naming a variable that only locks define.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Planted, no_traceback
from helpers import WheelFactory, record_hash, run_cli

TARGET = ("--python-version", "3.11", "--platform", "manylinux_2_28_x86_64")
SHA = "a" * 64


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("pylock.toml", 'lock-version = "1.0"\nx = ' + "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply"),
        ("uv.lock", "version = 1\nx = " + "{a = " * 50_000 + "1" + "}" * 50_000 + "\n", "nested too deeply"),
        ("report.json", '{"version": "1", "install": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
        ("uv.lock", "version = 1\nmanifest = { members = true }\npackage = []\n", "manifest.members: not an array"),
        (
            "report.json",
            '{"version": "1", "install": [{"metadata": {"name": "x"}, "download_info": '
            '{"url": "https://[::1/x-1.0-py3-none-any.whl", "archive_info": {}}}]}',
            "not a URL",
        ),
        (
            "pylock.toml",
            'lock-version = "1.0"\ncreated-by = "x"\nenvironments = ["extra == \'a\'"]\npackages = []\n',
            "a marker cannot be evaluated for this target",
        ),
        (
            "uv.lock",
            'version = 1\nrequires-python = ">=3.10"\n[[package]]\nname = "p"\nversion = "1"\n'
            'source = { virtual = "." }\ndependencies = [{ name = "q", marker = "\'x\' in extras" }]\n',
            "marker: cannot be evaluated",
        ),
    ],
    ids=["pylock-deep", "uv-lock-deep", "report-deep", "uv-members", "report-url", "pylock-env-extra", "uv-extras"],
)
def test_a_bad_lock_is_one_line(tmp_path: Path, name: str, text: str, said: str) -> None:
    lock = tmp_path / name
    lock.write_text(text)
    done = run_cli("wheels", "--lock", lock, *TARGET)
    no_traceback(done)
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: ") and said in line, line


def test_a_requirement_naming_a_lock_only_variable_is_a_finding(planted: Planted) -> None:
    """``"x" in extras`` is a lock's marker (PEP 751); in METADATA packaging 26 cannot evaluate it (a KeyError)."""
    lines = (planted.venv.dist_info("alpha") / "METADATA").read_text().splitlines()
    lines.insert(3, 'Requires-Dist: beta; "x" in extras')
    planted.rewrite("alpha", "METADATA", ("\n".join(lines) + "\n").encode())
    done = run_cli("deps", "--path", planted.site)
    no_traceback(done)
    assert done.returncode == 1
    assert "alpha 1.0: WD033: marker cannot be evaluated (no extras in METADATA's markers)" in done.stdout


@pytest.mark.parametrize(
    "header",
    ["Version: " + "0" * 5000, "Requires-Dist: beta>=" + "9" * 5000, "Requires-Python: >=" + "9" * 5000],
    ids=["version", "requires-dist", "requires-python"],
)
def test_a_number_past_ints_4300_digits_is_a_finding(planted: Planted, header: str) -> None:
    """packaging parses such a number with ``int()``, which refuses it with a plain ValueError."""
    lines = [line for line in (planted.venv.dist_info("alpha") / "METADATA").read_text().splitlines()]
    if header.startswith("Version:"):
        lines = [header if line.startswith("Version:") else line for line in lines]
    else:
        lines.insert(3, header)
    planted.rewrite("alpha", "METADATA", ("\n".join(lines) + "\n").encode())
    for command in ("deps", "doctor"):
        done = run_cli(command, "--path", planted.site)
        no_traceback(done)
        assert done.returncode == 1, done.stderr
        assert any(code in done.stdout for code in ("WD032", "WD033", "WD034")), done.stdout[-500:]


def _damaged(wheel: Path, how: str) -> Path:
    """``wheel`` with its RECORD marked encrypted (local and central flags), or a member's deflate data spoilt."""
    import struct
    import zipfile

    data = bytearray(wheel.read_bytes())
    with zipfile.ZipFile(wheel) as archive:
        infos = {i.filename: i for i in archive.infolist()}
    if how == "encrypted":
        name = next(n for n in infos if n.endswith(".dist-info/RECORD"))
        flags = [infos[name].header_offset + 6]  # the local header's flag field
        at = data.find(b"PK\x01\x02")
        while at >= 0:  # the central directory entry's flag field
            length = int.from_bytes(data[at + 28 : at + 30], "little")
            if data[at + 46 : at + 46 + length] == name.encode():
                flags.append(at + 8)
            at = data.find(b"PK\x01\x02", at + 4)
        for start in flags:
            struct.pack_into("<H", data, start, struct.unpack_from("<H", data, start)[0] | 1)
    else:
        info = infos["pkg/__init__.py"]
        start = info.header_offset + 30 + len(info.filename) + len(info.extra)
        data[start : start + 8] = b"\xff" * 8
    wheel.write_bytes(bytes(data))
    return wheel


@pytest.mark.parametrize("how", ["encrypted", "bad-deflate"])
def test_a_damaged_wheel_file_is_a_finding(wheel_factory: WheelFactory, how: str) -> None:
    """zipfile raises RuntimeError for an encrypted member and zlib.error for bad deflate data."""
    built = wheel_factory("pkg", "1.0", {"pkg/__init__.py": b"x = 1\n" * 200})
    done = run_cli("wheels", _damaged(built, how))
    no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "WD023" in done.stdout


def test_a_size_column_past_ints_4300_digits_is_no_size(planted: Planted) -> None:
    """The scheduler weighs RECORDs by their biggest size column: a 5,000-digit one is no size."""
    rows = planted.rows("alpha")
    path = next(r for r in rows if r[0].endswith("__init__.py"))
    path[2] = "9" * 5000
    planted.write_rows("alpha", rows)
    for command in (("check", "--path", planted.site, "alpha"), ("check", "--all", "--path", planted.site)):
        done = run_cli(*command)
        no_traceback(done)
        assert done.returncode == 1, done.stderr
        assert "alpha 1.0: WD" in done.stdout, done.stdout[-500:]


@pytest.mark.parametrize("separator", ["\x0c", "\x1c", "\x85", "\u2028"], ids=["ff", "fs", "nel", "ls"])
def test_a_recorded_name_holding_a_unicode_line_break_is_owned(planted: Planted, separator: str) -> None:
    """str.splitlines() breaks lines there, csv does not: the audit reads RECORD as the parse does."""
    import json

    hook = f"hook{separator}x.pth"
    data = b"import os\n"  # an import line: a hook that runs code, whose owner is alpha
    (planted.site / hook).write_bytes(data)
    planted.write_rows("alpha", [[hook, record_hash(data), str(len(data))], *planted.rows("alpha")])
    done = run_cli("check", "--all", "--json", "--path", planted.site)
    no_traceback(done)
    found = json.loads(done.stdout)
    assert found["unowned"]["count"] == 0, found["unowned"]
    hooks = [h for h in found["startup_hooks"] if h["path"].endswith("x.pth")]
    assert [(h["owner"]["name"], h["finding"]["code"]) for h in hooks] == [("alpha", "WD070")], hooks


@pytest.mark.parametrize("name", ["note: foo", "managed by foo", "environment: foo"])
def test_a_name_shaped_like_advice_keeps_its_finding_under_quiet(planted: Planted, name: str) -> None:
    """``-q`` leaves out advice lines by their first words; a finding's line is kept whatever its subject is called."""
    planted.set_metadata("alpha", new_name=name)
    (planted.site / "alpha" / "core.py").write_bytes(b"ANSWER = 43\n")
    done = run_cli("check", "--all", "-q", "--path", planted.site)
    no_traceback(done)
    assert done.returncode == 1
    assert f"{name} 1.0: WD001" in done.stdout, done.stdout

"""SBOM and drift output: a hostile name, version or path reaches no terminal raw.

The BOM and the snapshot are JSON: a control or bidi character in them is a JSON escape
(``\\u001b``), never the byte itself; the drift report's text and annotations show it escaped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import ESC, Planted, no_traceback, run_bytes
from packaging.utils import canonicalize_name

pytest.importorskip("cyclonedx")

OSC8 = f"{ESC}]8;;http://evil.example/{ESC}\\"
HIDE = f"{ESC}[1A{ESC}[2K"
BIDI = "\u202e"  # right-to-left override: "gpj.exe" reads as "exe.jpg"
#: What no byte of stdout or stderr may hold: ESC, the C1 CSI, the bidi overrides and isolates.
RAW = [b"\x1b", "\x9b".encode(), *(chr(c).encode() for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A)))]


def _hostile(planted: Planted) -> None:
    """A version with cursor moves, a name with a hyperlink and a bidi override, an unowned file named so too."""
    planted.set_metadata("alpha", new_version=f"1.0{HIDE}")
    planted.set_metadata("beta", new_name=f"beta{OSC8}{BIDI}gpj.exe")
    (planted.site / "beta/__init__.py").write_bytes(b"BETA = False\n")  # a file component in the BOM
    (planted.site / f"note{HIDE}{BIDI}txt.py").write_bytes(b"x = 1\n")  # unowned: a file component too


def _clean(*streams: bytes) -> None:
    for stream in streams:
        for raw in RAW:
            assert raw not in stream, (raw, stream[:2000])


@pytest.mark.parametrize("command", [["check", "--all"], ["doctor"]])
def test_a_bom_on_stdout_carries_hostile_text_as_json_escapes(planted: Planted, command: list[str]) -> None:
    _hostile(planted)
    done = run_bytes(*command, "--path", planted.site, "--format", "cyclonedx", "--show-unowned")
    no_traceback(done)
    assert done.returncode == 1, done.stderr
    _clean(done.stdout, done.stderr)
    bom = json.loads(done.stdout)
    names = {c["name"] for c in bom["components"]}
    assert canonicalize_name(f"beta{OSC8}{BIDI}gpj.exe") in names  # the document keeps the name, escaped per JSON
    assert any(c.get("version") == f"1.0{HIDE}" for c in bom["components"])
    assert any(HIDE in n and BIDI in n for n in names)  # the unowned file


def test_a_bom_written_to_a_file_leaves_the_terminal_clean(planted: Planted, tmp_path: Path) -> None:
    _hostile(planted)
    out = tmp_path / "bom.json"
    done = run_bytes("check", "--all", "--path", planted.site, "--format", "cyclonedx", "-o", out)
    no_traceback(done)
    _clean(done.stdout, done.stderr, out.read_bytes())


def test_snapshots_and_their_drift_show_hostile_text_escaped(planted: Planted, tmp_path: Path) -> None:
    clean = tmp_path / "a.json"
    done = run_bytes("snapshot", "--path", planted.site, "--host", "a", "-o", clean)
    assert done.returncode == 0, done.stderr
    _hostile(planted)
    for fmt in ("json", "cyclonedx"):
        done = run_bytes("snapshot", "--path", planted.site, "--host", f"b{HIDE}", "--format", fmt)
        no_traceback(done)
        assert done.returncode == 0, done.stderr
        _clean(done.stdout, done.stderr)
        json.loads(done.stdout)
    hostile = tmp_path / "b.json"
    done = run_bytes("snapshot", "--path", planted.site, "--host", f"b{HIDE}", "-o", hostile)
    assert done.returncode == 0, done.stderr
    for fmt in ("text", "github", "json"):
        done = run_bytes("diff", clean, hostile, "--format", fmt)
        no_traceback(done)
        assert done.returncode == 1, done.stderr
        _clean(done.stdout, done.stderr)
        if fmt == "text":
            assert b"\\x1b[1A\\x1b[2K" in done.stdout and b"\\u202e" in done.stdout  # shown, escaped


def test_an_undecodable_file_name_reads_as_in_every_other_format(planted: Planted) -> None:
    """A file name that is not UTF-8: ``\\xNN`` per byte in the BOM, as in JSON and SARIF, never a lone surrogate."""
    (Path(os.fsdecode(os.fsencode(planted.site) + b"/stray\xff\xc3(.py"))).write_bytes(b"x = 1\n")
    done = run_bytes("check", "--all", "--path", planted.site, "--format", "cyclonedx", "--show-unowned")
    no_traceback(done)
    text = done.stdout.decode("utf-8")  # strict
    assert "\\\\xff\\\\xc3(" in text and "\\udc" not in text
    assert any(c["name"].endswith("stray\\xff\\xc3(.py") for c in json.loads(text)["components"])

"""Untrusted text reaches no terminal, CI log or document raw (issue #28, items 2, 3 and 8)."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import ESC, Planted, no_traceback, run_bytes
from helpers import record_hash

#: Cursor up and erase line: what hid the fix plan above its prompt.
HIDE = f"{ESC}[1A{ESC}[2K"
OSC8 = f"{ESC}]8;;http://evil.example/{ESC}\\"
FORGED = "a\n::error title=FORGED::forged\n::add-mask::secret"
FORMATS = ["text", "json", "github", "junit", "sarif"]


def _controls_planted(planted: Planted) -> None:
    """Every untrusted string carries escapes: name, version, a RECORD path, a .pth name and line."""
    planted.set_metadata("alpha", new_version=f"1.0{HIDE}")
    planted.set_metadata("beta", new_name=f"beta{OSC8}[bold]x[/bold]")
    rows = planted.rows("alpha")
    rows.insert(0, [f"alpha/{HIDE}gone.py", record_hash(b"x"), "1"])
    planted.write_rows("alpha", rows)
    (planted.site / "alpha/core.py").write_bytes(b"ANSWER = 43\n")
    (planted.site / f"evil{HIDE}.pth").write_text(f"import os; print('{HIDE}')\n")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("command", ["check", "doctor"])
def test_no_escape_byte_reaches_stdout_or_stderr(planted: Planted, command: str, fmt: str) -> None:
    _controls_planted(planted)
    args = [command] + (["--all"] if command == "check" else []) + ["--path", planted.site, "--format", fmt]
    done = run_bytes(*args)
    no_traceback(done)
    assert done.returncode == 1, done.stderr
    assert b"\x1b" not in done.stdout + done.stderr
    assert b"\x1b" not in done.stdout.decode("utf-8").encode("unicode_escape").replace(b"\\x1b", b"")
    if fmt == "text":
        assert b"\\x1b[1A\\x1b[2K" in done.stdout  # shown, escaped


def test_deps_and_wheels_text_escape_names(planted: Planted) -> None:
    _controls_planted(planted)
    done = run_bytes("deps", "--path", planted.site)
    no_traceback(done)
    assert b"\x1b" not in done.stdout + done.stderr


def test_fix_plan_cannot_be_hidden(planted: Planted) -> None:
    """The plan's lines are shown escaped: a Version cannot erase the steps above the prompt."""
    planted.set_metadata("alpha", new_version=f"1.0{HIDE}")
    (planted.site / "alpha/core.py").write_bytes(b"ANSWER = 43\n")
    done = run_bytes("fix", "--all", "--dry-run", "--path", planted.site)
    no_traceback(done)
    assert b"\x1b" not in done.stdout + done.stderr
    assert b"plan:" in done.stdout


def test_rich_markup_in_a_name_is_text(planted: Planted) -> None:
    """On a terminal, ``[bold]`` in a name is shown, not obeyed (a pty gets rich's table)."""
    import pty
    import subprocess
    import sys

    planted.set_metadata("beta", new_name="beta[link=http://evil.example/]x[/link]")
    (planted.site / "beta/__init__.py").write_bytes(b"BETA = False\n")
    main, child = pty.openpty()
    done = subprocess.run(
        [sys.executable, "-m", "wheeldoctor", "check", "--all", "--path", str(planted.site)],
        stdin=subprocess.DEVNULL,
        stdout=child,
        stderr=subprocess.PIPE,
        env={**os.environ, "COLUMNS": "300", "TERM": "xterm"},
        timeout=120,
        check=False,
    )
    os.close(child)
    out = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(main)
    assert done.returncode == 1
    assert b"]8;" not in out  # no OSC 8 hyperlink was emitted
    assert b"[/link]" in out


def _forged_path(planted: Planted) -> None:
    rows = planted.rows("alpha")
    rows.insert(0, [FORGED, record_hash(b"x"), "1"])
    planted.write_rows("alpha", rows)


def _no_forged_line(stdout: bytes) -> None:
    for line in stdout.decode("utf-8").splitlines():
        assert not line.startswith(("::error title=FORGED", "::add-mask")), line


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_record_path_starts_no_line_beside_output(planted: Planted, tmp_path: Path, fmt: str) -> None:
    """``--format X -o FILE`` prints the text report on stdout: a path with newlines stays on its line."""
    _forged_path(planted)
    done = run_bytes("check", "--all", "--path", planted.site, "--format", fmt, "-o", tmp_path / "report")
    no_traceback(done)
    assert done.returncode == 1
    _no_forged_line(done.stdout)
    if fmt != "text":  # text goes to the file alone; the others print the text report beside it
        assert b"::add-mask" in done.stdout  # it is there, inside a line


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_record_path_starts_no_line_on_stdout(planted: Planted, fmt: str) -> None:
    _forged_path(planted)
    done = run_bytes("check", "--all", "--path", planted.site, "--format", fmt)
    no_traceback(done)
    _no_forged_line(done.stdout)


def test_a_path_option_with_newlines_keeps_the_github_summary_line(planted: Planted, tmp_path: Path) -> None:
    odd = tmp_path / "x\n::error title=FORGED::y"
    odd.mkdir()
    site = odd / "site"
    site.symlink_to(planted.site)
    done = run_bytes("check", "--all", "--path", site, "--format", "github")
    no_traceback(done)
    _no_forged_line(done.stdout)


def test_job_summary_markdown_is_escaped(planted: Planted, tmp_path: Path) -> None:
    rows = planted.rows("alpha")
    rows.insert(0, ["alpha/[click](http://evil.example/)![img](http://evil.example/i.png)<b>x</b>|", "", ""])
    rows.insert(0, ["alpha/[click](http://evil.example/)x.py", record_hash(b"x"), "1"])
    planted.write_rows("alpha", rows)
    summary = tmp_path / "summary.md"
    done = run_bytes(
        "check", "--all", "--path", planted.site, "--format", "github", env={"GITHUB_STEP_SUMMARY": str(summary)}
    )
    no_traceback(done)
    text = summary.read_text(encoding="utf-8")
    assert "](http" not in text and "<b>" not in text and "[click]" not in text
    assert "\\[click\\]" in text


def _undecodable(planted: Planted) -> None:
    name = os.fsencode(planted.site) + b"/evil\xff\xc3(.pth"
    with open(name, "wb") as f:
        f.write(b"import os\n")
    rows = planted.rows("alpha")
    rows.insert(0, ["alpha/\udcff\udcc3(.py", record_hash(b"x"), "1"])
    buf = "\n".join(",".join(r) for r in rows) + "\n"
    planted.record("alpha").write_bytes(buf.encode("utf-8", "surrogateescape"))


@pytest.mark.parametrize("fmt", ["json", "sarif", "junit"])
@pytest.mark.parametrize("encoding", [None, "utf-8", "ascii"])
def test_machine_formats_are_valid_utf8_with_an_undecodable_name(
    planted: Planted, fmt: str, encoding: str | None
) -> None:
    _undecodable(planted)
    env = {"PYTHONIOENCODING": encoding} if encoding else {"LANG": "C", "LC_ALL": "C"}
    done = run_bytes("check", "--all", "--path", planted.site, "--format", fmt, env=env)
    no_traceback(done)
    assert done.returncode == 1, done.stderr
    text = done.stdout.decode("utf-8")  # strict
    if fmt == "junit":
        ET.fromstring(text.split("\n", 1)[1])
        assert "\\xff\\xc3(" in text
    else:
        json.loads(text)
        assert "\\\\xff\\\\xc3(" in text  # one rule: \xNN per byte (a JSON string's backslash is doubled)


@pytest.mark.parametrize("fmt", ["text", "github"])
@pytest.mark.parametrize("encoding", ["utf-8", "ascii"])
def test_strict_stdout_never_ends_in_an_internal_error(planted: Planted, fmt: str, encoding: str) -> None:
    _undecodable(planted)
    planted.set_metadata("beta", new_name="bétà")
    (planted.site / "beta/__init__.py").write_bytes(b"BETA = False\n")
    done = run_bytes("doctor", "--path", planted.site, "--format", fmt, env={"PYTHONIOENCODING": encoding})
    no_traceback(done)
    assert done.returncode == 1, done.stderr
    done.stdout.decode(encoding)
    assert b"\\xff\\xc3(" in done.stdout

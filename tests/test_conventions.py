"""Issue #34's verdicts and CLI conventions: doctor's category, the pair that fails an intact side,
--select/--ignore, --exit-zero, -q, the config's defaults, --format for fix and imports, Ctrl-C,
and the terminal table at 80 columns. Real venvs, real pip installs."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import Venv, build_wheel, make_venv, pip_install, run_cli

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

from wheeldoctor.judge.selection import CodeSelection, SelectionError, parse_prefixes


@dataclass(frozen=True)
class Envs:
    pair: Venv
    """cvfull and cvheadless, unrelated, both write cv2/__init__.py."""
    hook: Venv
    """Intact, with a planted evil.pth."""
    sick: Venv
    """base altered (WD002), lonely requires gone (WD040)."""
    healthy: Venv
    hashless: Venv
    """nohash's RECORD has a row without a hash: unverifiable."""
    wide: Venv
    """Three altered files with long names."""


@pytest.fixture(scope="module")
def envs(tmp_path_factory: pytest.TempPathFactory, uv_bin: Path) -> Envs:
    root = tmp_path_factory.mktemp("conventions")
    w = root / "wheels"
    base = build_wheel(w, "base", "1.0", {"base/__init__.py": b"OK = True\n"})
    pair = make_venv(root / "pair", uv_bin=uv_bin)
    pip_install(
        pair,
        "--no-index",
        "--no-deps",
        build_wheel(w, "cvfull", "1.0", {"cv2/__init__.py": b"A = 1\n"}),
        build_wheel(w, "cvheadless", "1.0", {"cv2/__init__.py": b"B = 2\n"}),
    )
    hook = make_venv(root / "hook", uv_bin=uv_bin)
    pip_install(hook, "--no-index", "--no-deps", base)
    (hook.site_packages / "evil.pth").write_text("import os; os.getpid()\n")
    sick = make_venv(root / "sick", uv_bin=uv_bin)
    lonely = build_wheel(w, "lonely", "1.0", {"lonely/__init__.py": b""}, requires=["gone"])
    pip_install(sick, "--no-index", "--no-deps", base, lonely)
    (sick.site_packages / "base" / "__init__.py").write_text("OK = False\n")
    healthy = make_venv(root / "healthy", uv_bin=uv_bin)
    pip_install(healthy, "--no-index", "--no-deps", base)
    hashless = make_venv(root / "hashless", uv_bin=uv_bin)
    pip_install(hashless, "--no-index", "--no-deps", build_wheel(w, "nohash", "1.0", {"nohash/__init__.py": b""}))
    record = hashless.dist_info("nohash") / "RECORD"
    record.write_text(re.sub(r"^nohash/__init__.py,[^\n]*", "nohash/__init__.py,,", record.read_text(), flags=re.M))
    wide = make_venv(root / "wide", uv_bin=uv_bin)
    names = [f"some_long_package_name/sub/module_{i}.py" for i in range(3)]
    long = build_wheel(w, "some-long-distribution-name", "2024.10.1", {n: b"x = 1\n" for n in names})
    pip_install(wide, "--no-index", "--no-deps", long)
    for n in names:
        (wide.site_packages / n).write_text("changed!\n")
    return Envs(pair, hook, sick, healthy, hashless, wide)


# -- verdicts ---------------------------------------------------------------------------------------


def test_doctor_names_start_up_hooks_when_a_planted_hook_is_all_that_fails(envs: Envs) -> None:
    done = run_cli("doctor", "--python", envs.hook.python)
    assert done.returncode == 1
    assert done.stdout.splitlines()[-1] == "doctor: problems in start-up hooks"
    _, doc = _json("doctor", "--python", envs.hook.python)
    assert doc["verdicts"]["check"] is False


def test_doctor_names_clashes_not_files_for_an_unrelated_pair_alone(envs: Envs) -> None:
    # cvheadless's file holds cvfull's bytes: that is the clash, and a file finding too.
    last = run_cli("doctor", "--python", envs.pair.python).stdout.splitlines()[-1]
    assert last == "doctor: problems in files, clashes"


def test_a_named_check_of_the_intact_side_says_which_pair_fails_it(envs: Envs) -> None:
    intact = next(n for n in ("cvfull", "cvheadless") if _status(envs.pair, n) == "intact")
    other = {"cvfull": "cvheadless", "cvheadless": "cvfull"}[intact]
    done = run_cli("check", intact, "--python", envs.pair.python)
    assert done.returncode == 1
    assert f"{intact} 1.0: files intact, but fails with {other} 1.0: unrelated" in done.stdout
    assert "1 unrelated pair(s)" in done.stdout


def _status(venv: Venv, name: str) -> str:
    _, doc = _json("check", name, "--python", venv.python)
    return str(doc["distributions"][0]["status"])


def _json(*args: str | Path) -> tuple[int, dict[str, object]]:
    done = run_cli(*args, "--json")
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


# -- --select / --ignore ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("select", "ignore", "code", "counts"),
    [
        ((), (), "WD040", True),
        (("WD07",), (), "WD040", False),
        ((), ("WD04",), "WD041", False),
        ((), ("WD04",), "WD030", True),
        (("WD041",), ("WD04",), "WD041", True),  # the longer prefix wins, as in ruff
        (("WD04",), ("WD041",), "WD041", False),
        (("WD041",), ("WD041",), "WD041", False),
        # Integrity is never narrowed: changed files, hooks, unowned modules, lock mismatches.
        ((), ("WD00",), "WD002", True),
        (("WD04",), (), "WD071", True),
        ((), ("WD07",), "WD072", True),
        ((), ("WD08",), "WD084", True),
        ((), ("WD08",), "WD083", False),  # a distribution the lock lacks: its files are still judged
    ],
)
def test_code_prefixes(select: tuple[str, ...], ignore: tuple[str, ...], code: str, counts: bool) -> None:
    assert CodeSelection(select=select, ignore=ignore).allows(code) is counts


def test_prefixes_are_read_comma_separated_and_upper_cased_and_bad_ones_refused() -> None:
    assert parse_prefixes(["wd07,WD001", " WD04 "], "--select") == ("WD07", "WD001", "WD04")
    with pytest.raises(SelectionError, match="--ignore 'E501'"):
        parse_prefixes(["E501"], "--ignore")
    with pytest.raises(SelectionError, match="--select ',': empty"):
        parse_prefixes([","], "--select")
    # Only whole codes and the documented groups of ten: WD and WD0 name (nearly) every code.
    for bad in ("WD", "WD0", "WD1", "WD9", "WD999", "WD0001", "WD09a"):
        with pytest.raises(SelectionError, match="not a code"):
            parse_prefixes([bad], "--ignore")


def test_ignore_never_leaves_a_changed_file_out(envs: Envs) -> None:
    done = run_cli("check", "--all", "--python", envs.sick.python, "--ignore", "WD00")
    assert done.returncode == 1, done.stdout
    assert "WD002" in done.stdout
    assert "not selected" not in done.stdout


def test_select_narrows_doctor_to_dependencies_and_integrity(envs: Envs) -> None:
    done = run_cli("doctor", "--python", envs.sick.python, "--select", "WD04")
    assert done.returncode == 1
    assert done.stdout.splitlines()[-1] == "doctor: problems in files, dependencies"
    done = run_cli("doctor", "--python", envs.sick.python, "--ignore", "WD04")
    assert (done.returncode, done.stdout.splitlines()[-1]) == (1, "doctor: problems in files")
    assert "WD040" not in done.stdout


def test_ignore_never_hides_a_hook_in_any_format(envs: Envs) -> None:
    assert run_cli("check", "--all", "--python", envs.hook.python, "--ignore", "WD07").returncode == 1
    done = run_cli("check", "--all", "--python", envs.hook.python, "--format", "github", "--ignore", "WD07")
    assert done.returncode == 1
    assert "WD071" in done.stdout


HELP = "a code (WD041) or a group of ten (WD04), as docs/codes.md lists them"


def test_a_bad_prefix_is_one_line_and_exit_2(envs: Envs) -> None:
    done = run_cli("check", "--all", "--python", envs.healthy.python, "--select", "E5")
    assert done.returncode == 2
    assert done.stderr.strip() == f"error: --select 'E5': not {HELP}"


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["check", "--all", "--select", ""], f"error: --select '': empty; give {HELP}"),
        (["check", "--all", "--select=,"], f"error: --select ',': empty; give {HELP}"),
        (["check", "--all", "--select", "WD04,"], f"error: --select 'WD04,': empty; give {HELP}"),
        (["doctor", "--ignore", ""], f"error: --ignore '': empty; give {HELP}"),
        (["doctor", "--ignore", "WD"], f"error: --ignore 'WD': not {HELP}"),
    ],
)
def test_an_empty_prefix_is_one_line_and_exit_2(envs: Envs, argv: list[str], line: str) -> None:
    # Read as no prefix at all, it would silently select everything (and override a config's select).
    done = run_cli(*argv, "--python", envs.healthy.python)
    assert (done.returncode, done.stderr.strip(), done.stdout) == (2, line, "")


# -- --exit-zero, -q --------------------------------------------------------------------------------


def test_exit_zero_turns_problems_into_0_but_not_errors(envs: Envs) -> None:
    done = run_cli("doctor", "--python", envs.sick.python, "--exit-zero")
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1].startswith("doctor: problems in files")
    assert run_cli("check", "--all", "--python", envs.sick.python, "--exit-zero", "--json").returncode == 0
    assert run_cli("check", "--all", "--python", "/nonexistent/python", "--exit-zero").returncode == 2


def test_quiet_says_nothing_when_healthy_and_only_what_fails_otherwise(envs: Envs) -> None:
    done = run_cli("check", "--all", "--python", envs.healthy.python, "-q")
    assert (done.returncode, done.stdout) == (0, "")
    done = run_cli("doctor", "--python", envs.sick.python, "--quiet")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert any(line.startswith("base 1.0: WD002: base/__init__.py altered") for line in lines)
    assert any(line.startswith("lonely 1.0: WD040:") for line in lines)
    assert not any(line.startswith(("Tip:", "Note:", "environment:", "  ")) for line in lines)
    assert lines[-1] == "doctor: problems in files, dependencies"


def test_quiet_drops_the_environment_choice_line(envs: Envs, tmp_path: Path) -> None:
    env = {"VIRTUAL_ENV": str(envs.healthy.prefix)}
    assert run_cli("check", "--all", env=env, cwd=tmp_path).stderr.startswith("environment: ")
    assert run_cli("check", "--all", "-q", env=env, cwd=tmp_path).stderr == ""


def _named(*streams: str) -> list[str]:
    return [line for text in streams for line in text.splitlines() if line.startswith("environment:")]


@pytest.mark.parametrize("command", [["check", "--all"], ["deps"], ["doctor"], ["fix", "--all", "--dry-run"]])
def test_the_environment_is_named_once_with_where_it_came_from(envs: Envs, tmp_path: Path, command: list[str]) -> None:
    env = {"VIRTUAL_ENV": str(envs.healthy.prefix)}
    discovered = run_cli(*command, env=env, cwd=tmp_path)
    assert discovered.returncode == 0, discovered.stderr
    choice = f"environment: {envs.healthy.prefix / 'bin' / 'python'} (from VIRTUAL_ENV)"
    assert discovered.stderr.splitlines()[0] == choice
    assert _named(discovered.stderr, discovered.stdout) == [choice]
    given = run_cli(*command, "--python", envs.healthy.python, env=env, cwd=tmp_path)
    assert _named(given.stderr, given.stdout) == [f"environment: {envs.healthy.python} (from --python)"]
    as_json = run_cli(*command, "--json", env=env, cwd=tmp_path)
    assert as_json.returncode == 0, as_json.stderr
    assert isinstance(json.loads(as_json.stdout), dict)  # stdout holds the document alone
    assert _named(as_json.stderr, as_json.stdout) == [choice]


def test_on_a_terminal_and_in_a_written_report_the_environment_is_named_once(
    envs: Envs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", str(envs.healthy.prefix))
    monkeypatch.chdir(tmp_path)
    choice = f"environment: {envs.healthy.prefix / 'bin' / 'python'} (from VIRTUAL_ENV)"
    for command in (["check", "--all"], ["doctor"], ["deps"]):
        assert _named(on_terminal(*command, columns=120)) == [choice], command
    report = tmp_path / "report.txt"
    done = run_cli("check", "--all", "--output", report, cwd=tmp_path)
    assert _named(done.stderr, done.stdout) == [choice]
    assert _named(report.read_text()) == [choice]  # the report file says it in the same words


# -- the config's defaults --------------------------------------------------------------------------


def _project(tmp_path: Path, body: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(f"[tool.wheeldoctor]\n{body}\n")
    return tmp_path


def test_config_ignore_and_select_apply_and_the_command_line_wins(envs: Envs, tmp_path: Path) -> None:
    project = _project(tmp_path, 'ignore = ["WD04"]')
    done = run_cli("doctor", "--python", envs.sick.python, cwd=project)
    assert done.stdout.splitlines()[-1] == "doctor: problems in files"
    # --ignore given replaces the config's list.
    done = run_cli("doctor", "--python", envs.sick.python, "--ignore", "WD07", cwd=project)
    assert done.stdout.splitlines()[-1] == "doctor: problems in files, dependencies"
    _project(tmp_path, 'select = ["WD04"]')
    done = run_cli("doctor", "--python", envs.sick.python, cwd=project)
    assert done.stdout.splitlines()[-1] == "doctor: problems in files, dependencies"


def test_config_strict_fails_an_unverifiable_distribution(envs: Envs, tmp_path: Path) -> None:
    assert run_cli("check", "--all", "--python", envs.hashless.python, cwd=tmp_path).returncode == 0
    project = _project(tmp_path, "strict = true")
    done = run_cli("check", "--all", "--python", envs.hashless.python, cwd=project)
    assert done.returncode == 1, done.stdout
    assert "unverifiable" in done.stdout


def test_config_jobs_is_applied_and_a_bad_one_refused(envs: Envs, tmp_path: Path) -> None:
    project = _project(tmp_path, "jobs = 1")
    assert run_cli("check", "--all", "--python", envs.healthy.python, cwd=project).returncode == 0
    _project(tmp_path, "jobs = 0")
    done = run_cli("check", "--all", "--python", envs.healthy.python, cwd=project)
    assert done.returncode == 2
    assert "jobs must be a positive integer" in done.stderr


def test_config_python_is_the_default_environment(envs: Envs, tmp_path: Path) -> None:
    project = _project(tmp_path, f"python = {json.dumps(str(envs.sick.python))}")
    env = {k: "" for k in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    done = run_cli("check", "--all", cwd=project, env=env)
    assert done.returncode == 1, done.stderr
    assert str(envs.sick.python) in done.stderr.splitlines()[0]


# -- --format for fix and imports -------------------------------------------------------------------


def test_fix_takes_format_json(envs: Envs) -> None:
    done = run_cli("fix", "--all", "--python", envs.sick.python, "--dry-run", "--format", "json")
    assert done.returncode == 1
    assert json.loads(done.stdout)["command"] == "fix"
    done = run_cli("fix", "--all", "--python", envs.sick.python, "--dry-run", "--format", "github")
    assert done.returncode == 2
    assert "choose one of text, json" in done.stderr


def test_imports_takes_format_json_and_github(envs: Envs) -> None:
    done = run_cli("imports", "json", "--python", envs.healthy.python, "--format", "json")
    assert done.returncode == 0
    assert json.loads(done.stdout)["imports"][0]["module"] == "json"
    done = run_cli("imports", "json", "--python", envs.healthy.python, "--format", "github", "--forbid", "slow:0")
    assert done.returncode == 1
    first = done.stdout.splitlines()[0]
    assert first.startswith("::error title=wheeldoctor imports%3A json::json: FAILED (forbidden: slow)")
    assert "--format FORMAT" in run_cli("imports", "--help").stdout


# -- Ctrl-C -----------------------------------------------------------------------------------------


def test_ctrl_c_while_the_app_is_imported_is_one_line_and_130(tmp_path: Path) -> None:
    # An interrupt that lands in a heavy import: typer here raises it as Ctrl-C would (doctor is
    # parsed by typer; a plain check is not, and never imports it).
    (tmp_path / "typer").mkdir()
    (tmp_path / "typer" / "__init__.py").write_text("raise KeyboardInterrupt\n")
    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", ""), str(Path(__file__).parents[1])])
    done = run_cli("doctor", env={"PYTHONPATH": path})
    assert (done.returncode, done.stderr) == (130, "wheeldoctor: interrupted\n")


def test_ctrl_c_in_an_import_of_a_plain_check_is_one_line_and_130(tmp_path: Path) -> None:
    # The plain parse runs check without typer: an interrupt in one of its imports (packaging here).
    (tmp_path / "packaging").mkdir()
    (tmp_path / "packaging" / "__init__.py").write_text("raise KeyboardInterrupt\n")
    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", ""), str(Path(__file__).parents[1])])
    done = run_cli("check", "--all", "-q", env={"PYTHONPATH": path})
    assert (done.returncode, done.stderr) == (130, "wheeldoctor: interrupted\n")


#: ``python -m wheeldoctor`` as a shell starts a foreground command: a suite run in the background
#: (``&``, ``nohup``) hands its children SIGINT ignored, and Python keeps an ignored SIGINT ignored.
_FOREGROUND = (
    "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv[0] = 'wheeldoctor'; runpy.run_module('wheeldoctor', run_name='__main__', alter_sys=True)"
)


def test_ctrl_c_during_a_command_is_one_line_and_130(envs: Envs, tmp_path: Path) -> None:
    marker = tmp_path / "started"
    module = tmp_path / "slowmod.py"
    module.write_text(f"import pathlib, time\npathlib.Path({str(marker)!r}).touch()\ntime.sleep(60)\n")
    process = subprocess.Popen(
        [sys.executable, "-c", _FOREGROUND, "imports", "slowmod", "--python", str(envs.healthy.python)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])},
    )
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert (process.returncode, err) == (130, "wheeldoctor: interrupted\n")


# -- 80 columns -------------------------------------------------------------------------------------


def on_terminal(*args: str | Path, columns: int) -> str:
    """``wheeldoctor ARGS`` on a pseudo-terminal ``columns`` wide: what it showed, colours stripped."""
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns), "LINES": "50", "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "wheeldoctor", *map(str, args)], stdin=slave, stdout=slave, stderr=slave, env=env
    )
    os.close(slave)
    out = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            out += chunk
        elif process.poll() is not None:
            break
    process.wait(timeout=10)
    os.close(master)
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.decode()).replace("\r", "")


def _digests_whole(shown: str, digests: set[str]) -> int:
    """How many digests ``shown`` holds; fails where one is cut across lines."""
    seen = 0
    for line in shown.splitlines():
        for token, cut in re.findall(r"sha256=([A-Za-z0-9_-]+)(…?)", line):
            assert token in digests if not cut else any(d.startswith(token) for d in digests), line
            seen += 1
    return seen


@pytest.mark.parametrize("columns", [80, 120, 200])
@pytest.mark.parametrize("which", ["wide", "hook", "pair"])
def test_no_digest_is_split_across_lines(envs: Envs, columns: int, which: str) -> None:
    venv: Venv = getattr(envs, which)
    document = run_cli("check", "--all", "--python", venv.python, "--json").stdout
    digests = set(re.findall(r"sha256=([A-Za-z0-9_-]{43})", document))
    assert digests
    # A clash pair's findings are a block of paths; -v lists each, with its digests.
    verbose = ["-v"] if which == "pair" else []
    shown = on_terminal("check", "--all", "--python", venv.python, *verbose, columns=columns)
    # Every finding's expected and found (the hook's found twice: its line and its accept rule).
    assert _digests_whole(shown, digests) >= {"wide": 6, "hook": 2, "pair": 2}[which]
    assert "distributio\n" not in shown
    assert all(len(line) <= columns for line in shown.splitlines() if "sha256=" in line)


def test_the_table_abbreviates_digests_and_verbose_shows_them_whole(envs: Envs) -> None:
    shown = on_terminal("check", "--all", "--python", envs.wide.python, columns=220)
    assert "┃ distribution" in shown
    assert re.search(r"sha256=[A-Za-z0-9_-]{10}…", shown)
    full = on_terminal("check", "--all", "--python", envs.wide.python, "-v", columns=220)
    assert not re.search(r"sha256=[A-Za-z0-9_-]+…", full)
    assert re.search(r"sha256=[A-Za-z0-9_-]{43}", full)


# -- CI formats carry the repair --------------------------------------------------------------------


def _sarif(*args: str | Path) -> dict[str, Any]:
    import jsonschema

    done = run_cli(*args, "--format", "sarif")
    assert done.returncode in (0, 1), done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    schema = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(document)
    return document


def test_github_annotations_carry_the_repair_command(envs: Envs) -> None:
    done = run_cli("check", "--all", "--python", envs.sick.python, "--format", "github")
    error = next(line for line in done.stdout.splitlines() if line.startswith("::error"))
    assert "WD002" in error
    command = f"pip --python {envs.sick.python} install --force-reinstall --no-deps -- base==1.0"
    assert error.endswith(f"%0ATip: {command}")


def test_the_unrelated_pair_gets_its_own_annotation_and_result_with_both_ways_out(envs: Envs) -> None:
    done = run_cli("check", "--all", "--python", envs.pair.python, "--format", "github")
    pair = [line for line in done.stdout.splitlines() if "unrelated-pair" in line]
    assert len(pair) == 1
    assert pair[0].startswith("::error title=cvfull 1.0 + cvheadless 1.0%3A unrelated-pair::")
    assert "%0ATip: keep cvfull: " in pair[0] and "; or keep cvheadless: " in pair[0]
    results = _sarif("check", "--all", "--python", envs.pair.python)["runs"][0]["results"]
    pairs = [r for r in results if r["ruleId"] == "unrelated-pair"]
    assert len(pairs) == 1
    assert pairs[0]["properties"]["repair"].startswith("keep ")


def test_sarif_results_carry_the_command_and_still_validate(envs: Envs) -> None:
    results = _sarif("check", "--all", "--python", envs.sick.python)["runs"][0]["results"]
    (broken,) = [r for r in results if r["ruleId"] == "WD002"]
    command = f"pip --python {envs.sick.python} install --force-reinstall --no-deps -- base==1.0"
    assert broken["properties"]["repair"] == command
    assert broken["message"]["text"].endswith(f" Tip: {command}")


def test_a_hook_annotation_names_its_file_once_and_carries_the_accept_rule(envs: Envs) -> None:
    done = run_cli("check", "--all", "--python", envs.hook.python, "--format", "github")
    (error,) = [line for line in done.stdout.splitlines() if line.startswith("::error")]
    assert "WD071: evil.pth runs code" in error
    assert "evil.pth evil.pth" not in error
    assert '%0A[[tool.wheeldoctor.accept]]%0Adistribution = "(unowned)"%0Apath = "evil.pth"' in error
    results = _sarif("check", "--all", "--python", envs.hook.python)["runs"][0]["results"]
    assert "[[tool.wheeldoctor.accept]]" in results[0]["properties"]["repair"]


def test_the_step_summary_shows_an_accept_rule_that_can_be_copied(envs: Envs, tmp_path: Path) -> None:
    """A rule of several lines is no table cell: the cell names it, and a TOML block holds it as written."""
    summary = tmp_path / "summary.md"
    run_cli(
        "check", "--all", "--python", envs.hook.python, "--format", "github", env={"GITHUB_STEP_SUMMARY": str(summary)}
    )
    text = summary.read_text()
    assert "\\n" not in text  # no literal backslash-n where a line break is meant
    assert "add to pyproject.toml: rule 1 below |" in text
    block = text.split("```toml\n", 1)[1].split("\n```", 1)[0]
    (accepted,) = tomllib.loads(block)["tool"]["wheeldoctor"]["accept"]
    assert (accepted["path"], accepted["code"], accepted["found"].startswith("sha256=")) == ("evil.pth", "WD071", True)


def test_the_step_summary_has_a_repair_column(envs: Envs, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    run_cli(
        "check", "--all", "--python", envs.sick.python, "--format", "github", env={"GITHUB_STEP_SUMMARY": str(summary)}
    )
    text = summary.read_text()
    assert "| level | distribution | code | path | problem | repair |" in text
    assert "install --force-reinstall --no-deps -- base==1.0 |" in text


# -- policy: every kind of finding -----------------------------------------------------------------


def test_an_accept_rule_for_a_dependency_finding_accepts_it_and_is_not_stale(envs: Envs, tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        '[[tool.wheeldoctor.accept]]\ndistribution = "lonely"\ncode = "WD040"\nreason = "gone is vendored"',
    )
    done = run_cli("doctor", "--python", envs.sick.python, cwd=project)
    assert done.stdout.splitlines()[-1] == "doctor: problems in files"
    assert "matched nothing: stale" not in done.stdout
    done = run_cli("doctor", "--python", envs.sick.python, "--json", cwd=project)
    doc = json.loads(done.stdout)
    assert (doc["dependency_conflicts"], doc["policy"]["stale"], doc["policy"]["accepted"]) == ([], [], 1)


def test_write_baseline_pins_dependency_conflicts_too(envs: Envs, tmp_path: Path) -> None:
    pinned = tmp_path / "baseline.json"
    done = run_cli("doctor", "--python", envs.sick.python, "--write-baseline", pinned, cwd=tmp_path)
    assert (done.returncode, done.stderr.splitlines()[-1]) == (0, f"wrote {pinned}: 2 finding(s) pinned")
    codes = sorted(f["code"] for f in json.loads(pinned.read_text())["findings"])
    assert codes == ["WD002", "WD040"]
    done = run_cli("doctor", "--python", envs.sick.python, "--baseline", pinned, cwd=tmp_path)
    assert (done.returncode, done.stdout.splitlines()[-1]) == (0, "doctor: healthy")


def test_a_baselined_file_modified_further_is_changed_not_fixed(tmp_path: Path, uv_bin: Path) -> None:
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    pip_install(venv, "--no-index", "--no-deps", build_wheel(tmp_path / "w", "base", "1.0", {"base/__init__.py": b""}))
    target = venv.site_packages / "base" / "__init__.py"
    target.write_text("first edit\n")
    pinned = tmp_path / "baseline.json"
    assert run_cli("check", "--all", "--python", venv.python, "--write-baseline", pinned).returncode == 0
    assert run_cli("check", "--all", "--python", venv.python, "--baseline", pinned).returncode == 0
    target.write_text("second edit, longer\n")
    done = run_cli("check", "--all", "--python", venv.python, "--baseline", pinned)
    assert done.returncode == 1
    assert "baseline entr(ies) changed since pinned (changed: base base/__init__.py WD002)" in done.stdout
    assert "fixed" not in done.stdout
    doc = json.loads(run_cli("check", "--all", "--python", venv.python, "--baseline", pinned, "--json").stdout)
    assert (len(doc["policy"]["changed"]), doc["policy"]["fixed"]) == (1, [])
    target.unlink()  # gone altogether: WD003, a different finding; the WD002 entry no longer occurs
    doc = json.loads(run_cli("check", "--all", "--python", venv.python, "--baseline", pinned, "--json").stdout)
    assert (doc["policy"]["changed"], len(doc["policy"]["fixed"])) == ([], 1)


# -- imports: start-up hooks ------------------------------------------------------------------------


def test_a_process_a_pth_starts_at_start_up_is_counted_and_attributed(envs: Envs, tmp_path: Path, uv_bin: Path) -> None:
    assert run_cli("imports", "json", "--python", envs.healthy.python, "--forbid", "processes").returncode == 0
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    (venv.site_packages / "spawner.pth").write_text("import os; os.system('true')\n")
    done = run_cli("imports", "json", "--python", venv.python, "--forbid", "processes", "--json")
    assert done.returncode == 1, done.stderr
    (entry,) = json.loads(done.stdout)["imports"]
    assert entry["processes_by"]
    assert {p["module"] for p in entry["processes_by"]} == {"(start-up: spawner.pth)"}
    assert entry["forbidden"] == ["processes"]
    plain = run_cli("imports", "json", "--python", venv.python, "--forbid", "processes").stdout
    assert "by (start-up: spawner.pth)" in plain

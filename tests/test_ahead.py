"""cli/ahead.py: ``--python`` read from the raw arguments as the parser reads it, and the probe started early."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
from helpers import VenvFactory

from wheeldoctor.checks import ahead
from wheeldoctor.cli.ahead import PROBING, VALUE_OPTIONS, check_ahead, python_ahead, start_probe_ahead
from wheeldoctor.cli.app import app
from wheeldoctor.where import probe
from wheeldoctor.where.target import Target, load_target


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["check", "--all", "--python", "/p/python"], ("/p/python", False)),
        (["check", "x", "--python=/p/python", "--json"], ("/p/python", False)),
        (["deps", "--python", "py"], ("py", True)),
        (["doctor", "--jobs", "4", "--python", "py"], ("py", True)),
        (["check", "--python", "a", "--python", "b"], ("b", False)),  # the last one, as the parser takes
        (["check", "-j4", "--python", "py"], ("py", False)),
        (["snapshot", "--host", "--python", "--python", "py", "-o", "snap.json"], ("py", True)),
        # Nothing plainly understood: nothing started.
        (["check", "--config", "--python", "py"], None),  # "--python" is --config's value
        (["check", "--output", "--python", "--python", "py"], ("py", False)),
        (["check", "--all", "--path", "/site", "--python", "py"], None),
        (["check", "--all", "--path=/site", "--python", "py"], None),
        (["check", "--", "--python", "py"], None),
        (["check", "--python", "py", "--help"], None),
        (["check", "--all", "--python"], None),
        (["fix", "--python", "py"], None),
        (["--version"], None),
        ([], None),
    ],
)
def test_python_is_read_as_the_parser_reads_it(argv: list[str], expected: tuple[str, bool] | None) -> None:
    assert python_ahead(argv) == expected


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["check", "--all"], (None, None, False)),
        (["check", "--all", "--python", "/p/python", "--no-cache", "--jobs", "8"], ("/p/python", 8, True)),
        (["check", "--json", "-j", "3", "--all", "--python=py"], ("py", 3, False)),
        (["check", "--all", "--jobs", "2", "--jobs", "5"], (None, 5, False)),  # the last one, as the parser takes
        # snapshot verifies as check --all does.
        (["snapshot", "--python", "py", "-o", "snap-%N.json", "--host", "n1"], ("py", None, False)),
        (["snapshot", "--no-cache"], (None, None, True)),
        (["snapshot", "stray"], None),
        # Not a plain check of everything: nothing started.
        (["check", "torch"], None),
        (["check", "--all", "torch"], None),
        (["check", "--all", "-j4"], None),
        (["check", "--all", "--jobs", "many"], None),
        (["check", "--all", "--jobs=-1"], None),
        (["check", "--all", "--path", "/site"], None),
        (["check", "--all", "--python"], None),
        (["check", "--all", "--help"], None),
        (["doctor", "--all"], None),
        ([], None),
    ],
)
def test_a_check_of_everything_is_read_as_the_parser_reads_it(
    argv: list[str], expected: tuple[str | None, int | None, bool] | None
) -> None:
    assert check_ahead(argv) == expected


def test_the_options_that_take_a_value_are_the_apps() -> None:
    # The reading above skips each option's value: the list must be the app's own.
    group = typer.main.get_command(app)
    taking = {
        opt
        for name in PROBING
        for param in group.commands[name].params  # type: ignore[attr-defined]
        if param.param_type_name == "option" and not param.is_flag
        for opt in (*param.opts, *param.secondary_opts)
    }
    assert taking == VALUE_OPTIONS


def test_a_probe_started_ahead_is_the_one_the_command_collects(
    venv_factory: VenvFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv = venv_factory()
    spawned: list[tuple[str, bool]] = []
    real = probe.spawn

    def counting(python: str, with_tags: bool) -> subprocess.Popen[str]:
        spawned.append((python, with_tags))
        return real(python, with_tags)

    monkeypatch.setattr(probe, "spawn", counting)
    start_probe_ahead(["check", "--all", "--python", str(venv.python)])
    assert spawned == [(str(venv.python), False)]
    env = load_target(Target(python=str(venv.python)))
    assert spawned == [(str(venv.python), False)]  # collected, not started again
    assert not probe.started
    assert env.python is not None
    child = ahead.take()  # check --all also started the child proving big files (nothing verifies here)
    assert (child is not None) == (ahead._cpus() - 1 >= ahead._LEAST_THREADS)
    if child is not None:
        child.close()


def test_the_console_script_checks_with_the_probe_started_ahead(venv_factory: VenvFactory, tmp_path: Path) -> None:
    venv = venv_factory()
    done = subprocess.run(
        [sys.executable, "-m", "wheeldoctor", "check", "--all", "--python", str(venv.python), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert '"healthy": true' in done.stdout


@pytest.mark.parametrize(("jobs", "started"), [("4", True), ("3", False), ("1", False)])
def test_a_check_of_everything_starts_the_child_proving_big_files(
    venv_factory: VenvFactory, jobs: str, started: bool
) -> None:
    """The console script's first step forks the child for ``check --all`` with 4 jobs or more (3 threads)."""
    venv = venv_factory()
    start_probe_ahead(["check", "--all", "--jobs", jobs, "--python", str(venv.python)])
    child = ahead.take()
    assert (child is not None) == started
    if child is not None:
        done, in_flight, _ = child.stop()  # a venv of pip alone: nothing of 16 MiB to prove
        assert (done, in_flight) == ({}, set())
        child.close()
    load_target(Target(python=str(venv.python)))  # collects the probe started beside it

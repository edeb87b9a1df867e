"""The fast parse (``cli/plain.py``) against typer's: where it answers, typer must answer the same.

Typer's answer is the options object its command passes to the shared body (found through
``cli/commands.py``'s ``body``), recorded by putting a recorder in the body's place; the fast
parse's is its return value.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import Venv, build_wheel, make_venv, uv_install

from wheeldoctor.cli import commands
from wheeldoctor.cli.app import app
from wheeldoctor.cli.plain import parse

Parsed = tuple[str, object]


@pytest.fixture
def typer_parse(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``argv -> (command, options)`` as typer passes them to the body; None where typer refuses."""
    seen: list[Parsed] = []

    def recorder(name: str) -> Any:
        def body(options: object) -> int:
            seen.append((name, options))
            return 0

        return body

    monkeypatch.setattr(commands, "body", recorder)

    def run(argv: list[str]) -> Parsed | None:
        seen.clear()
        with pytest.raises(SystemExit):
            app(argv, prog_name="wheeldoctor")
        return seen[0] if seen else None

    yield run


PLAIN = [
    ["--version"],
    ["-V"],
    ["deps"],
    ["deps", "--json"],
    ["deps", "--python", "/usr/bin/python3"],
    ["deps", "--python=/usr/bin/python3", "--format", "github", "-o", "out.json"],
    ["deps", "--path", "a", "--path=b", "--no-cache", "--dpkg-admindir", "/mnt/var/lib/dpkg"],
    ["deps", "--json", "--json", "--python", "p1", "--python", "p2"],
    ["check", "--all"],
    ["check", "--all", "-q", "--select", "WD0", "--ignore=WD07", "--ignore", "WD061", "--exit-zero", "-v"],
    ["check", "numpy", "--quiet", "--verbose", "--select=WD00,WD01"],
    ["check", "--all", "--json", "--python", "py", "-j", "3"],
    ["check", "alpha", "beta"],
    ["check", "alpha", "--strict", "beta", "--jobs=12", "--no-cache"],
    ["check", "--all", "--config", "c.toml", "--baseline", "b.json", "--show-accepted", "--show-unowned"],
    ["check", "--all", "--write-baseline", "w.json", "--output", "o", "--format=sarif"],
    ["check", "--all", "--path", "site", "--dpkg-admindir=/var/lib/dpkg", "-o", "x", "-j", "01"],
    ["check", "name with spaces", "--all"],
    ["check", "--all", "--python", "=", "--format", "text"],
]

DECLINED = [
    [],
    ["--help"],
    ["--version", "deps"],
    ["-V", "-V"],
    ["doctor"],
    ["deps", "--help"],
    ["deps", "-h"],
    ["deps", "--"],
    ["deps", "-"],
    ["deps", "name"],
    ["deps", "--pyth", "p"],
    ["deps", "--python"],
    ["deps", "--python", ""],
    ["deps", "--python="],
    ["deps", "--python", "--json"],
    ["deps", "--json=1"],
    ["deps", "--no-json"],
    ["deps", "-oFILE"],
    ["check", "--all", "-j4"],
    ["check", "--all", "--jobs", "0"],
    ["check", "--all", "--jobs", "x"],
    ["check", "--all", "--jobs", "+3"],
    ["check", "--all", "--jobs", "٣"],
    ["check", "--all", "--", "name"],
    ["check", "--all", "--strict=yes"],
    ["check", "--all", "--all=1"],
    ["check", "-a"],
]


@pytest.mark.parametrize("argv", PLAIN, ids=" ".join)
def test_plain_lines_parse_as_typer_parses_them(argv: list[str], typer_parse: Any) -> None:
    ours = parse(argv)
    assert ours is not None
    assert ours == typer_parse(argv)


@pytest.mark.parametrize("argv", DECLINED, ids=lambda a: " ".join(a) or "nothing")
def test_anything_in_doubt_is_left_to_typer(argv: list[str]) -> None:
    assert parse(argv) is None


WORDS = [
    "--all", "--json", "--strict", "--no-cache", "--show-accepted", "--show-unowned", "--python", "py",
    "--path", "site", "--path=s2", "-o", "out", "--output=o2", "--format", "json", "--format=text",
    "--jobs", "2", "-j", "0", "-j5", "--config", "c", "--baseline=b", "--write-baseline", "w",
    "--dpkg-admindir", "d", "name", "other", "--", "-", "--help", "--json=1", "", "--pyth", "-x", "=",
]  # fmt: skip


def test_random_lines_parse_as_typer_parses_them_or_are_left_to_it(typer_parse: Any) -> None:
    rng = random.Random(20261125)
    answered = 0
    for _ in range(400):
        argv = [rng.choice(["check", "deps"]), *rng.choices(WORDS, k=rng.randint(0, 7))]
        ours = parse(argv)
        if ours is not None:
            answered += 1
            assert ours == typer_parse(argv), argv
    assert answered > 40  # the comparison covered many lines, not only refusals


@pytest.fixture(scope="module")
def small_env(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """A uv venv with two distributions, one requiring the other."""
    root = tmp_path_factory.mktemp("plain")
    wheels = [
        build_wheel(root / "w", "base-lib", "1.2", {"base_lib/__init__.py": b""}),
        build_wheel(
            root / "w",
            "app-lib",
            "2.0",
            {"app_lib/__init__.py": b""},
            requires=["base-lib>=1", 'missing-lib; python_version >= "3"'],
        ),
    ]
    venv = make_venv(root / "venv")
    uv_install(venv, "--no-deps", *wheels)
    return venv


@pytest.mark.parametrize("args", [["deps"], ["deps", "--json"], ["check", "--all", "--json"], ["check", "app-lib"]])
def test_the_fast_path_and_typer_give_the_same_report(small_env: Venv, args: list[str]) -> None:
    """``--`` at the end makes the fast parse decline: the same line then goes through typer."""

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "wheeldoctor", *args, "--python", str(small_env.python), *extra]
        return subprocess.run(argv, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False)

    fast, typer = run(), run("--")
    assert parse([*args, "--python", "p"]) is not None and parse([*args, "--python", "p", "--"]) is None
    assert (fast.returncode, fast.stderr) == (typer.returncode, typer.stderr)
    if "--json" in args:
        assert json.loads(fast.stdout) == json.loads(typer.stdout)
    else:
        assert fast.stdout == typer.stdout
    assert fast.returncode in (0, 1)  # a report, not a refusal


def test_a_refusal_is_one_plain_line_on_a_pipe(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "wheeldoctor", "deps", "--python", str(tmp_path / "no\x1bpython")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: --python ") and done.stderr.count("\n") == 1
    assert "\x1b" not in done.stderr and "\\x1b" in done.stderr

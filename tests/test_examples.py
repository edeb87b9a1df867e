"""The command examples of the README and docs/, as a reader copies them.

Every ``wheeldoctor`` command line in a shell block of the README and of docs/ must parse
(its command and options exist). Those of the README and of the pages listed in
``RUN_AS_WRITTEN`` also run, word for word, in a project that has what they name: a
``.venv`` with ``mypkg`` (and ``mypkg.models``) installed, its wheel in ``dist/``, and a
``pylock.toml`` served from a local index. Each must end 0 or 1 (a verdict), never 2 (could
not run). Synopses (``NAME...``, ``[--opt]``) and output samples are not commands.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer.main
from helpers import build_wheel, find_uv, make_venv, run_checked
from range_server import range_index
from typer.exceptions import TyperException

from wheeldoctor.cli.app import app

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
#: Pages whose every example needs no more than the project below: they run as written.
RUN_AS_WRITTEN = {"README.md", "commands.md", "cli-conventions.md", "fix.md", "imports.md"}

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_SEPARATORS = {"&&", "||", ";", "|", "&"}


@dataclass(frozen=True)
class Example:
    page: str
    line: int
    text: str
    """The command line as written (without a console's ``$ ``)."""
    invocations: tuple[tuple[str, ...], ...]
    """Each ``wheeldoctor`` in it: the words after the program."""

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.text}"


def _invocations(text: str) -> tuple[tuple[str, ...], ...]:
    """The argument lists of every ``wheeldoctor`` the line runs (also behind ``srun``); () for none."""
    # A command substitution stands for one word (snap-$(hostname).json): its parentheses are not the shell's.
    lexer = shlex.shlex(re.sub(r"\$\([^()]*\)", "X", text), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        words = list(lexer)
    except ValueError:  # unbalanced quotes: an output sample, not a command
        return ()
    found, command = [], []
    for word in [*words, ";"]:
        if word not in _SEPARATORS:
            command.append(word)
            continue
        if "wheeldoctor" in command and (command[0] == "wheeldoctor" or command[0] == "srun"):
            found.append(tuple(command[command.index("wheeldoctor") + 1 :]))
        command = []
    return tuple(found)


def _synopsis(args: tuple[str, ...]) -> bool:
    return any("..." in word or word.startswith("[") or word == "|" for word in args)


def examples(page: Path) -> Iterator[Example]:
    """The page's command lines that run wheeldoctor: every line of a shell block, or only its
    ``$ `` lines where it has any (the rest is output). A block with a synopsis in it is a synopsis."""
    text = page.read_text(encoding="utf-8")
    for block in _FENCE.finditer(text):
        if block.group(1) not in ("", "console", "sh", "bash", "shell"):
            continue
        lines = block.group(2).splitlines()
        prompted = any(line.startswith("$ ") for line in lines)
        first = text[: block.start(2)].count("\n") + 1
        found = []
        for offset, line in enumerate(lines):
            if prompted and not line.startswith("$ "):
                continue
            command = line.removeprefix("$ ").strip()
            invoked = _invocations(command)
            if invoked:
                found.append(Example(page.name, first + offset, command, invoked))
        if not any(_synopsis(args) for example in found for args in example.invocations):
            yield from found


EVERY = [example for page in PAGES for example in examples(page)]


def test_the_examples_are_found() -> None:
    """The extraction sees the examples it is meant to hold to their word (a regression guard)."""
    texts = {e.text for e in EVERY}
    assert "wheeldoctor snapshot -o snap-$(hostname).json && wheeldoctor diff snap-*.json" in texts
    assert 'wheeldoctor snapshot --format cyclonedx -o "bom-$(hostname).json"' in texts
    assert sum(e.page == "README.md" for e in EVERY) >= 10
    assert not [e for e in EVERY if "wheeldoctor[" in e.text]  # not on PyPI: extras from a clone


@pytest.mark.parametrize("example", EVERY, ids=str)
def test_every_example_parses(example: Example) -> None:
    """Each invocation parses as the command line does (command, options, values, arguments), not run."""
    group = typer.main.get_command(app)
    for args in example.invocations:
        with group.make_context("wheeldoctor", list(args)) as context:
            name, command, rest = group.resolve_command(context, list(args))
            assert command is not None and name is not None, example
            try:
                command.make_context(name, rest, parent=context)
            except TyperException as e:  # click's UsageError: an unknown option, a bad value, extra words
                pytest.fail(f"{example}: {e}")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """A project as the examples assume one: ``.venv`` with ``mypkg``, ``dist/``, ``pylock.toml``; and the
    environment to run them in (``wheeldoctor`` on PATH, no activated venv)."""
    root = tmp_path_factory.mktemp("project")
    files = {"mypkg/__init__.py": b"VERSION = 1\n", "mypkg/models.py": b"MODELS = ()\n"}
    wheel = build_wheel(root / "dist", "mypkg", "1.0", files)
    shims = root.parent / f"{root.name}-bin"
    shims.mkdir()
    (shims / "wheeldoctor").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m wheeldoctor "$@"\n')
    (shims / "wheeldoctor").chmod(0o755)
    clean = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH")}
    env = {**clean, "PATH": f"{shims}{os.pathsep}{clean['PATH']}", "UV_NO_CONFIG": "1", "UV_LINK_MODE": "copy"}
    with range_index(wheel.parent) as index:
        (root / "requirements.in").write_text("mypkg\n")
        uv = str(find_uv())
        # For any CPython from 3.10: the README selects it for 3.11 too.
        compile_lock = [uv, "pip", "compile", "-q", "--python-version", "3.10", "--format", "pylock.toml"]
        run_checked([*compile_lock, "--index-url", index.simple, "requirements.in", "-o", "pylock.toml"], cwd=root)
        venv = make_venv(root / ".venv")
        run_checked(
            [uv, "pip", "sync", "-q", "--python", venv.python, "--index-url", index.simple, "pylock.toml"], cwd=root
        )
        yield root, env


@pytest.mark.parametrize("example", [e for e in EVERY if e.page in RUN_AS_WRITTEN], ids=str)
def test_the_examples_run_as_written(example: Example, project: tuple[Path, dict[str, str]]) -> None:
    root, env = project
    done = subprocess.run(
        ["bash", "-c", example.text],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    assert done.returncode in (0, 1), f"{example}\n{done.stdout}\n{done.stderr}"
    assert "error:" not in done.stderr and "Traceback" not in done.stderr, f"{example}\n{done.stderr}"

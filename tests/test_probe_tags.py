"""``--python``'s wheel tags: computed here for this very interpreter's binary, by the probe for any other.

Both ways must give the same list: the probe's own computation is the reference.
"""

from __future__ import annotations

import glob
import os
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import make_venv, run_cli

import wheeldoctor
from wheeldoctor.where import probe, target


def test_own_binary_tags_are_the_probes(tmp_path: Path) -> None:
    venv = make_venv(tmp_path / "venv")  # its bin/python links to the interpreter running the tests
    python = str(venv.python)
    assert probe.own_build(python)
    asked = target._answer(python, None, True)  # the probe computes them itself
    assert asked.tags
    found = target._probe(python, True)
    assert found.tags == asked.tags
    assert replace(found, tags=None) == replace(asked, tags=None)


def test_a_started_probe_leaves_the_tags_to_this_process() -> None:
    python = probe.resolved(sys.executable)
    probe.start(python, True)
    assert (python, True) in probe.started
    found = target._probe(python, True)
    assert (python, True) not in probe.started
    assert found.tags == target._answer(python, None, True).tags


def test_an_answer_of_another_interpreter_is_not_given_this_ones_tags() -> None:
    found = target._answer(sys.executable, None, False)
    assert found.tags is None
    assert target._own_tags(found) is not None
    older = (found.version[0], found.version[1] - 1)
    assert target._own_tags(replace(found, version=older)) is None
    assert target._own_tags(replace(found, stdlib="/elsewhere/lib/python3")) is None
    assert target._own_tags(replace(found, markers={**found.markers, "python_full_version": "0.0.1"})) is None


def _other_python() -> str | None:
    mine = f"{sys.version_info[0]}.{sys.version_info[1]}"
    for candidate in sorted(glob.glob("/root/.pyenv/versions/3.1*/bin/python3")):
        if f"/{mine}." not in candidate:
            return candidate
    return None


def test_another_interpreter_computes_its_own_tags() -> None:
    other = _other_python()
    if other is None:
        pytest.skip("needs a second Python 3.10+ under pyenv")
    assert not probe.own_build(other)
    found = target._probe(other, True)
    assert found.tags is not None
    wanted = f"cp{found.version[0]}{found.version[1]}"
    assert found.tags[0].startswith(wanted + "-")
    assert found.tags == target._answer(other, None, True).tags


def test_the_probe_writes_no_byte_code_beside_our_packaging(tmp_path: Path) -> None:
    other = _other_python()
    if other is None:
        pytest.skip("needs a second Python 3.10+ under pyenv")
    import packaging

    copy = tmp_path / "copy"
    shutil.copytree(Path(packaging.__file__).parent, copy / "packaging", ignore=shutil.ignore_patterns("__pycache__"))
    ours = Path(wheeldoctor.__file__).parent.parent
    # This process writes none (PYTHONDONTWRITEBYTECODE); the probe runs with -I, so only -B stops it.
    env = {"PYTHONPATH": os.pathsep.join([str(ours), str(copy)]), "PYTHONDONTWRITEBYTECODE": "1"}
    done = run_cli("deps", "--python", other, env=env)
    assert done.returncode in (0, 1), done.stderr
    assert "the interpreter wheeldoctor runs in" not in done.stderr + done.stdout
    assert sorted(p.name for p in copy.rglob("*.pyc")) == []

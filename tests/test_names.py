"""Names and versions that may enter a command: packaging's rules, judged once a process.

A warm check of a broken distribution (settled on its cache verdict by a forked worker)
builds its reinstall command from the same words, and refuses a name that is no project
name just the same.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import VenvFactory, WheelFactory, pip_install

from wheeldoctor.engine import cache
from wheeldoctor.formats import names

ROOT = Path(__file__).resolve().parent.parent

#: Runs ``check ARGS`` as the console script does, its small venv verified by forked workers as a big one is.
_RUN = """
import sys
sys.path.insert(0, {root!r})
import wheeldoctor.engine.verify as verify
verify.PROCESS_MIN_FILES = 1
sys.argv = ["wheeldoctor", *{args!r}]
from wheeldoctor.cli import main
main()
"""


@pytest.mark.unit
@pytest.mark.parametrize(
    ("name", "version", "why"),
    [
        ("alpha", "1.0", None),
        ("Alpha.Beta_x", "2!1.0.post3", None),
        ("-r/file", "1.0", "is not a valid project name"),
        ("evil @ file:///tmp/x", "1.0", "is not a valid project name"),
        ("-eproj", None, "is not a valid project name"),
        ("alpha", "1.0; rm -rf /", "is not a PEP 440 version"),
    ],
)
def test_words_are_judged_by_packagings_rules(
    name: str, version: str | None, why: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import packaging.utils

    monkeypatch.setattr(names, "_FIT", set())
    found = names.unsafe_words(name, version)
    assert found is None if why is None else why in str(found)
    assert ((name, version) in names._FIT) is (why is None)  # nothing unfit is remembered

    def refuse(*args: object, **kwargs: object) -> str:
        raise packaging.utils.InvalidName("judged again")

    monkeypatch.setattr(packaging.utils, "canonicalize_name", refuse)
    again = names.unsafe_words(name, version)  # fit: what was remembered; unfit: judged again
    assert again is None if why is None else "is not a valid project name" in str(again)


def _broken(venv_factory: VenvFactory, wheel_factory: WheelFactory, name: str | None = None) -> Path:
    """A venv whose ``gamma`` and ``delta`` have an altered file each, beside an intact ``omega`` (three
    distributions: as many workers as ``--jobs 3`` asks); ``name`` rewrites gamma's METADATA Name."""
    venv = venv_factory()
    for dist in ("gamma", "delta", "omega"):
        pip_install(venv, "--no-index", "--no-deps", wheel_factory(dist, "1.0", {f"{dist}/__init__.py": b"G = 1\n"}))
    for dist in ("gamma", "delta"):
        (venv.site_packages / dist / "__init__.py").write_bytes(b"G = 2\n")
    if name is not None:
        metadata = venv.dist_info("gamma") / "METADATA"
        lines = metadata.read_text().splitlines()
        metadata.write_text("\n".join(f"Name: {name}" if x.startswith("Name:") else x for x in lines) + "\n")
    time.sleep(2 * cache.SETTLE_NS / 1e9)  # old enough for the cache to keep what matched
    return venv.python


def _check(python: Path, store: Path, jobs: int = 2) -> str:
    """One ``check --all`` with the cache ``store``: its report."""
    args = ["check", "--all", "--jobs", str(jobs), "--python", str(python)]
    code = _RUN.format(root=str(ROOT), args=args)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "WHEELDOCTOR_NO_CACHE")}
    env["WHEELDOCTOR_CACHE_DIR"] = str(store)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 1, done.stdout + done.stderr
    return done.stdout


@pytest.mark.parametrize("jobs", [2, 3])
def test_a_warm_check_builds_the_reinstall_a_cold_one_does(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, tmp_path: Path, jobs: int
) -> None:
    python = _broken(venv_factory, wheel_factory)
    store = tmp_path / "cache"
    cold = _check(python, store, jobs)
    assert "-- gamma==1.0" in cold and "-- delta==1.0" in cold
    assert _check(python, store, jobs) == cold


def test_a_warm_check_still_refuses_a_name_that_is_no_project_name(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, tmp_path: Path
) -> None:
    python = _broken(venv_factory, wheel_factory, name="-r/etc/passwd")
    store = tmp_path / "cache"
    for _ in ("cold", "warm"):
        report = _check(python, store)
        assert "'-r/etc/passwd' is not a valid project name, so no command is built from it" in report, report
        assert "-- -r" not in report, report
        assert "-- delta==1.0" in report, report  # its neighbour's words were judged fit, and only its

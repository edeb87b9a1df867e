"""Overlays accepted as rpm's "replaced", every refusal, and unrelated pairs told truly.

Real wheels (tests/helpers.py), installed by real pip and uv; the repair sequences the
report prints are run as printed and must heal the environment.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import Venv, build_wheel, pip_install, run_cli, uv_install
from variants import BASE, DIFFERING, FILES, IDENTICAL, OVERLAY, Wheels


def _check(venv: Venv, *args: str) -> tuple[int, dict[str, Any]]:
    done = run_cli("check", *(args or ("--all",)), "--python", venv.python, "--json")
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def _by_name(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {d["name"]: d for d in document["distributions"]}


def _codes(dist: dict[str, Any]) -> set[str]:
    return {f["code"] for f in dist["findings"]}


def _base_then_overlay(venv_factory: Any, wheels: Wheels) -> Venv:
    venv = venv_factory()
    for wheel in (wheels.base, wheels.overlay):
        pip_install(venv, "--no-index", "--no-deps", wheel)
    return venv


def test_overlay_on_top_is_overlaid_not_broken(venv_factory: Any, wheels: Wheels) -> None:
    venv = _base_then_overlay(venv_factory, wheels)
    rc, document = _check(venv)
    assert rc == 0
    dists = _by_name(document)
    assert dists[OVERLAY]["status"] == "intact"
    assert dists[BASE]["status"] == "overlaid"
    assert {(f["code"], f["kind"], f["content_from"]) for f in dists[BASE]["findings"]} == {
        ("WD060", "replaced", OVERLAY)
    }
    assert sorted(f["path"] for f in dists[BASE]["findings"]) == DIFFERING
    assert document["summary"]["overlaid"] == 1
    # The runtime gate still answers the byte question: the base's files are not its own.
    gate = "import sys, wheeldoctor; print(wheeldoctor.is_intact(sys.argv[1]))"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}
    answers = [
        subprocess.run([venv.python, "-c", gate, name], capture_output=True, text=True, env=env, check=True).stdout
        for name in (BASE, OVERLAY)
    ]
    assert answers == ["False\n", "True\n"]


def test_a_path_holding_the_base_bytes_refuses(venv_factory: Any, wheels: Wheels) -> None:
    venv = _base_then_overlay(venv_factory, wheels)
    for path in DIFFERING[:5]:
        (venv.site_packages / path).write_bytes(FILES[BASE][path])
    rc, document = _check(venv)
    assert rc == 1
    dists = _by_name(document)
    assert dists[BASE]["status"] == dists[OVERLAY]["status"] == "broken"
    assert "WD060" not in _codes(dists[BASE])
    assert rc == _check(venv, BASE)[0] == 1


def test_a_path_holding_nobodys_bytes_refuses(venv_factory: Any, wheels: Wheels) -> None:
    venv = _base_then_overlay(venv_factory, wheels)
    (venv.site_packages / DIFFERING[3]).write_bytes(b"nobody shipped this")
    rc, document = _check(venv)
    assert rc == 1
    dists = _by_name(document)
    assert dists[BASE]["status"] == dists[OVERLAY]["status"] == "broken"
    assert "WD060" not in _codes(dists[BASE])
    assert _check(venv, BASE)[0] == 1


def test_a_broken_overlay_refuses(venv_factory: Any, wheels: Wheels) -> None:
    venv = _base_then_overlay(venv_factory, wheels)
    (venv.site_packages / "demo_dsl/cu13_only.py").write_bytes(b"VARIANT = 'tampered'\n")
    rc, document = _check(venv)
    assert rc == 1
    dists = _by_name(document)
    assert dists[OVERLAY]["status"] == "broken"
    assert dists[BASE]["status"] == "broken"
    assert {f["kind"] for f in dists[BASE]["findings"]} == {"modified"}
    # A named check of the base verifies the overlay too, and refuses for the same reason.
    rc, named = _check(venv, BASE)
    assert rc == 1
    assert [d["name"] for d in named["distributions"]] == [BASE]


def test_a_requirement_whose_marker_is_false_is_no_overlay(venv_factory: Any, tmp_path: Path) -> None:
    files = {"pkg/core.py": b"A = 1\n" * 40}
    base = build_wheel(tmp_path, "marker-base", "1.0", files)
    top = build_wheel(
        tmp_path, "marker-top", "1.0", {"pkg/core.py": b"B = 2\n"}, requires=["marker-base; python_version < '3'"]
    )
    venv = venv_factory()
    for wheel in (base, top):
        pip_install(venv, "--no-index", "--no-deps", wheel)
    rc, document = _check(venv)
    assert rc == 1
    (pair,) = document["clash_pairs"]
    assert pair["relation"] == "unrelated"


def test_three_level_chain(venv_factory: Any, tmp_path: Path) -> None:
    def files(who: str, extra: dict[str, bytes]) -> dict[str, bytes]:
        return {"chain/lib.so": f"{who} library ".encode() * (10 + len(who)), **extra}

    low = build_wheel(tmp_path, "chain-l", "1.0", files("l", {"chain/mid.py": b"L = 1\n", "chain/l.py": b"\n"}))
    mid = build_wheel(tmp_path, "chain-m", "1.0", files("mm", {"chain/mid.py": b"M = 22\n"}), requires=["chain-l"])
    top = build_wheel(tmp_path, "chain-w", "1.0", files("www", {"chain/w.py": b"W\n"}), requires=["chain-m>=1"])
    venv = venv_factory()
    for wheel in (low, mid, top):
        pip_install(venv, "--no-index", "--no-deps", wheel)
    rc, document = _check(venv)
    assert rc == 0, document
    dists = _by_name(document)
    assert dists["chain-w"]["status"] == "intact"
    assert dists["chain-m"]["status"] == "overlaid"
    assert dists["chain-l"]["status"] == "overlaid"
    low_findings = {f["path"]: f["content_from"] for f in dists["chain-l"]["findings"]}
    assert low_findings == {"chain/lib.so": "chain-w", "chain/mid.py": "chain-m"}
    assert {p["relation"] for p in document["clash_pairs"]} == {"overlay"}
    # Named checks reach up the chain to verify the overlays.
    assert _check(venv, "chain-l")[0] == 0
    assert _check(venv, "chain-m")[0] == 0
    # Break the middle layer's own file: the bottom's path it covers is no longer explained.
    (venv.site_packages / "chain/mid.py").write_bytes(b"M = 23\n")
    rc, document = _check(venv, "chain-l")
    assert rc == 1
    assert _by_name(document)["chain-l"]["status"] == "broken"


# Two builds of one library under two names: neither requires the other.
_ALT_A = {"fastlib/__init__.py": b"BUILD = 'a'\n" * 30, "fastlib/core.so": b"A" * 5000, "fastlib/a.txt": b"a\n"}
_ALT_B = {"fastlib/__init__.py": b"BUILD = 'b'\n" * 31, "fastlib/core.so": b"B" * 5000, "fastlib/b.txt": b"b\n"}


@pytest.fixture
def alternatives(tmp_path: Path) -> tuple[Path, Path]:
    out = tmp_path / "alt-wheels"
    return build_wheel(out, "fastlib-a", "2.0", _ALT_A), build_wheel(out, "fastlib-b", "2.0", _ALT_B)


def _run(command: str, uv_dir: Path, extra: list[str] | None = None) -> None:
    path = os.pathsep.join([str(uv_dir), str(Path(sys.executable).parent), os.environ["PATH"]])
    env = {**os.environ, "PATH": path, "PIP_NO_INDEX": "1"}
    words = shlex.split(command)
    at = words.index("--") if "--" in words else len(words)  # options go before the operands' "--"
    words[at:at] = extra or []
    subprocess.run(words, env=env, check=True, capture_output=True, timeout=300)


@pytest.mark.parametrize("installer", ["pip", "uv"])
@pytest.mark.parametrize("keep", ["fastlib-a", "fastlib-b"])
def test_unrelated_pair_fails_and_either_keep_sequence_heals(
    venv_factory: Any, alternatives: tuple[Path, Path], uv_bin: Path, installer: str, keep: str
) -> None:
    venv = venv_factory()
    for wheel in alternatives:  # b installed last: it holds every differing path
        if installer == "pip":
            pip_install(venv, "--no-index", "--no-deps", wheel)
        else:
            uv_install(venv, "--no-index", "--no-deps", wheel)
    rc, document = _check(venv)
    assert rc == 1
    (pair,) = document["clash_pairs"]
    assert pair["relation"] == "unrelated"
    assert _by_name(document)["fastlib-b"]["status"] == "intact"
    # Intact byte for byte, yet one uninstall of the other deletes its files: still a failure.
    assert _check(venv, "fastlib-b")[0] == 1
    assert _check(venv, "fastlib-a")[0] == 1
    choices = {c["keep"]: c for c in pair["repair_choices"]}
    assert set(choices) == {"fastlib-a", "fastlib-b"}
    choice = choices[keep]
    assert choice["remove"] == ({"fastlib-a", "fastlib-b"} - {keep}).pop()
    uninstall, reinstall = choice["commands"]
    assert "uninstall" in uninstall and choice["remove"] in uninstall
    assert f"{keep}==2.0" in reinstall and "--no-deps" in reinstall
    links = ["--find-links", str(alternatives[0].parent)] + (["--no-index"] if installer == "uv" else [])
    _run(uninstall, uv_bin.parent)
    _run(reinstall, uv_bin.parent, links)
    rc, document = _check(venv)
    assert rc == 0, document
    assert [d["name"] for d in document["distributions"]] == [keep]
    own = _ALT_A if keep == "fastlib-a" else _ALT_B
    for path, data in own.items():
        assert (venv.site_packages / path).read_bytes() == data


def test_unrelated_pair_text_states_the_choice(venv_factory: Any, alternatives: tuple[Path, Path]) -> None:
    venv = venv_factory()
    for wheel in alternatives:
        pip_install(venv, "--no-index", "--no-deps", wheel)
    done = run_cli("check", "fastlib-b", "--python", venv.python)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert any(line.startswith("Tip: fastlib-a and fastlib-b are unrelated") for line in lines)
    keeps = [line for line in lines if line.startswith(("Tip: keep ", "Tip: or keep "))]
    assert len(keeps) == 2
    assert all(" && " in line and "uninstall" in line for line in keeps)
    note = next(line for line in lines if line.startswith("Note: uninstalling either"))
    assert "all 2 shared path(s)" in note
    assert "1 unrelated clash" in done.stdout


def test_wheels_preflight_tells_overlay_from_alternatives(wheels: Wheels, alternatives: tuple[Path, Path]) -> None:
    done = run_cli("wheels", wheels.base, wheels.overlay, "--json")
    (pair,) = json.loads(done.stdout)["clash_pairs"]
    assert (pair["relation"], pair["install_last"]) == ("overlay", OVERLAY)
    text = run_cli("wheels", wheels.base, wheels.overlay).stdout
    assert f"Tip: {OVERLAY} requires {BASE} and lies on top of it" in text
    assert f"install {OVERLAY} last" in text
    done = run_cli("wheels", *alternatives, "--json")
    assert done.returncode == 1
    (pair,) = json.loads(done.stdout)["clash_pairs"]
    assert (pair["relation"], pair["install_last"]) == ("unrelated", None)
    text = run_cli("wheels", *alternatives).stdout
    assert "fastlib-a and fastlib-b are alternatives" in text
    assert "install one, not both" in text
    assert "last" not in text


def test_an_overlay_under_its_base_is_reinstalled_last_and_nothing_else(venv_factory: Any, wheels: Wheels) -> None:
    venv = venv_factory()
    for wheel in (wheels.overlay, wheels.base):  # the base on top: not the intended state
        pip_install(venv, "--no-index", "--no-deps", wheel)
    rc, document = _check(venv)
    assert rc == 1
    (pair,) = document["clash_pairs"]
    (choice,) = pair["repair_choices"]
    assert (choice["keep"], choice["remove"]) == (OVERLAY, None)
    assert choice["commands"] == [pair["repair"]]
    lines = run_cli("check", "--all", "--python", venv.python).stdout.splitlines()
    tips = [line for line in lines if line.startswith("Tip:")]
    assert len(tips) == 1 and f"reinstall {OVERLAY} last" in tips[0]
    assert not [line for line in lines if "win instead" in line]
    assert "uninstall" not in tips[0]
    note = next(line for line in lines if line.startswith("Note:"))
    assert f"uninstalling {OVERLAY} deletes all {len(DIFFERING) + len(IDENTICAL)} shared path(s)" in note

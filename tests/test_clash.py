"""Clashes made real: a base wheel and an overlay that ship some of the same paths.

The pair (tests/variants.py) mirrors nvidia-cutlass-dsl-libs-base / -libs-cu13.
Installed by uv in one command, by pip in both orders, and into deterministic mixed
states, every shared path's ``on_disk`` and every finding's ``content_from`` must name
whose bytes are really there.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from helpers import Venv, build_wheel, make_venv, pip_install, run_cli, uv_install
from variants import BASE, DIFFERING, FILES, IDENTICAL, OVERLAY, VERSION, Wheels


def _check_json(venv: Venv, *names: str) -> tuple[int, dict[str, Any]]:
    done = run_cli("check", *(names or ("--all",)), "--python", venv.python, "--json")
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def _whose_bytes(venv: Venv, path: str) -> str | None:
    """Who wrote this file, judged by the test itself from the bytes it put in the wheels."""
    data = (venv.site_packages / path).read_bytes()
    owners = [name for name in (BASE, OVERLAY) if FILES[name][path] == data]
    return owners[0] if len(owners) == 1 else None


def _assert_attribution(venv: Venv, document: Mapping[str, Any]) -> dict[str, str | None]:
    """Every clash's on_disk and every finding's content_from agree with the real bytes.

    Where every differing path holds the overlay's bytes (it requires the base and is
    intact), the base's findings are the overlay's ``replaced`` bytes and it is ``overlaid``.
    """
    truth = {path: _whose_bytes(venv, path) for path in DIFFERING}
    clashes = {c["path"]: c for c in document["clashes"]}
    assert set(clashes) == set(DIFFERING) | set(IDENTICAL)
    for path in IDENTICAL:
        assert clashes[path]["identical"] is True
    for path in DIFFERING:
        assert clashes[path]["identical"] is False
        assert sorted(clashes[path]["claimants"]) == [BASE, OVERLAY]
        assert clashes[path]["on_disk"] == truth[path], path
    overlay_on_top = set(truth.values()) == {OVERLAY}
    for dist in document["distributions"]:
        findings = {f["path"]: f for f in dist["findings"]}
        expected_broken = {p for p, owner in truth.items() if owner != dist["name"]}
        assert set(findings) == expected_broken, dist["name"]
        replaced = overlay_on_top and dist["name"] == BASE
        for path, finding in findings.items():
            assert (finding["kind"], finding["code"]) == (
                ("replaced", "WD060") if replaced else ("modified", finding["code"])
            )
            assert finding["content_from"] == truth[path]
        assert dist["status"] == ("overlaid" if replaced else "broken" if expected_broken else "intact")
    return truth


def _install_pip(venv: Venv, *wheels: Path) -> None:
    for wheel in wheels:
        pip_install(venv, "--no-index", "--no-deps", wheel)


@pytest.mark.parametrize("order", ["base-first", "overlay-first"])
def test_pip_sequential_last_one_wins(venv_factory: Any, wheels: Wheels, order: str) -> None:
    venv = venv_factory()
    first, last = (wheels.base, wheels.overlay) if order == "base-first" else (wheels.overlay, wheels.base)
    _install_pip(venv, first, last)
    rc, document = _check_json(venv)
    truth = _assert_attribution(venv, document)
    winner = OVERLAY if order == "base-first" else BASE
    assert set(truth.values()) == {winner}
    # The overlay on top is the intended state (the base is overlaid); the base on top is not.
    assert rc == (0 if winner == OVERLAY else 1)
    (pair,) = document["clash_pairs"]
    assert pair["shared"] == len(DIFFERING) + len(IDENTICAL)
    assert pair["differing"] == len(DIFFERING)
    assert pair["on_disk"][winner] == len(DIFFERING)
    # Overlay on top: the base is overlaid, as meant, never called broken; base on top: the overlay is.
    assert pair["broken"] == ([] if winner == OVERLAY else [OVERLAY])
    assert pair["relation"] == "overlay"
    # The overlay requires the base, so it is the one to reinstall last whatever is on disk.
    assert pair["winner"] == OVERLAY
    # Overlay installed last: the best state two such wheels allow, and nothing to repair.
    assert pair["settled"] is (winner == OVERLAY)


def test_uv_one_command_each_path_attributed(venv_factory: Any, wheels: Wheels) -> None:
    venv = venv_factory()
    uv_install(venv, "--no-index", "--no-deps", wheels.base, wheels.overlay)
    _, document = _check_json(venv)
    truth = _assert_attribution(venv, document)
    assert None not in truth.values()


def test_mixed_state_by_copying_bytes(venv_factory: Any, wheels: Wheels) -> None:
    venv = venv_factory()
    _install_pip(venv, wheels.base, wheels.overlay)
    altered = DIFFERING[0]
    for path in DIFFERING[1::3]:
        (venv.site_packages / path).write_bytes(FILES[BASE][path])
    (venv.site_packages / altered).write_bytes(b"neither variant wrote this")
    rc, document = _check_json(venv, OVERLAY)
    assert rc == 1
    truth = _assert_attribution(venv, {**document, "distributions": document["distributions"]})
    assert truth[altered] is None
    (overlay,) = document["distributions"]
    finding = next(f for f in overlay["findings"] if f["path"] == altered)
    assert finding["content_from"] is None
    assert "no installed distribution ships these bytes" in finding["message"]


def test_plain_text_says_whose_bytes(venv_factory: Any, wheels: Wheels) -> None:
    """Piped: the pair's findings are one block, the tip first, a count and a few examples;
    ``--verbose`` lists every one; the machine formats list every one as they are."""
    venv = venv_factory()
    _install_pip(venv, wheels.overlay, wheels.base)
    done = run_cli("check", OVERLAY, "--python", venv.python)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    start = next(
        i for i, line in enumerate(lines) if line.startswith(f"clash: {BASE} {VERSION} and {OVERLAY} {VERSION}")
    )
    tip = lines[start + 1]
    assert tip.startswith("Tip: only one of") and f"reinstall {OVERLAY} last (it requires {BASE})" in tip
    side = next(i for i, line in enumerate(lines) if line.startswith(f"{OVERLAY} {VERSION}: "))
    assert start < side
    assert lines[side] == (
        f"{OVERLAY} {VERSION}: WD001: {len(DIFFERING)} file(s) hold {BASE}'s bytes, e.g. in demo_dsl/lib/:"
    )
    assert lines[side + 1 : side + 5] == [
        *(f"  {path.removeprefix('demo_dsl/lib/')}" for path in DIFFERING[:3]),
        f"  and {len(DIFFERING) - 3} more (--verbose lists every one)",
    ]
    assert not [line for line in lines if ": WD00" in line and "demo_dsl/lib/" in line and "holds" in line]
    assert len(lines) < 12, done.stdout

    verbose = run_cli("check", OVERLAY, "--python", venv.python, "--verbose").stdout.splitlines()
    for path in DIFFERING:
        (line,) = [line for line in verbose if f" {path} holds {BASE}'s bytes" in line]
        assert line.startswith("  WD001: "), line
    _, document = _check_json(venv, OVERLAY)
    assert len(document["distributions"][0]["findings"]) == len(DIFFERING)
    github = run_cli("check", OVERLAY, "--python", venv.python, "--format", "github").stdout
    assert sum(line.startswith("::error") and "holds" in line for line in github.splitlines()) == len(DIFFERING)


def test_the_block_at_a_terminal_80_columns_wide(venv_factory: Any, wheels: Wheels) -> None:
    """At a terminal (rich, 80 columns): the block, tip first; every line but the whole-line commands fits."""
    from test_conventions import on_terminal

    venv = venv_factory()
    _install_pip(venv, wheels.overlay, wheels.base)
    shown = on_terminal("check", "--all", "--python", venv.python, columns=80).splitlines()
    clash = next(i for i, line in enumerate(shown) if line.startswith("clash: "))
    tip = next(i for i, line in enumerate(shown) if line.startswith("Tip: only one of"))
    more = shown.index(f"  and {len(DIFFERING) - 3} more (--verbose lists every one)")
    assert clash < tip < more
    assert all(len(line) <= 80 for line in shown if not line.startswith("Tip: ")), shown
    assert len(shown) < 25, "\n".join(shown)
    every = on_terminal("check", "--all", "--python", venv.python, "-v", columns=80)
    assert all(path in every for path in DIFFERING)
    assert "more (--verbose lists every one)" not in every


def test_settled_pair_gets_a_note_not_a_repair(venv_factory: Any, wheels: Wheels) -> None:
    venv = venv_factory()
    _install_pip(venv, wheels.base, wheels.overlay)
    done = run_cli("check", "--all", "--python", venv.python)
    # The base's RECORD cannot match, but every difference is its overlay's bytes: intended.
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    assert not [line for line in lines if line.startswith("Tip:")]
    assert not [line for line in lines if "WD001" in line or "WD002" in line]
    assert [line for line in lines if line.startswith("overlay: ")] == [
        f"overlay: {OVERLAY} {VERSION} lies on top of {BASE} {VERSION}: {len(DIFFERING)} of "
        f"{len(DIFFERING) + len(IDENTICAL)} shared path(s) hold {OVERLAY}'s bytes (WD060 replaced; {BASE} is overlaid)"
    ]
    shared = len(DIFFERING) + len(IDENTICAL)
    assert any(
        line.startswith(f"Note: {OVERLAY} lies on top of {BASE}") and f"all {shared} shared" in line for line in lines
    )
    # Named alone, either side: the same overlay line, and no word calls the base broken.
    for name in (OVERLAY, BASE):
        named = run_cli("check", name, "--python", venv.python)
        assert named.returncode == 0, named.stdout
        assert "broken" not in named.stdout and "clash:" not in named.stdout, named.stdout
        assert f"overlay: {OVERLAY} {VERSION} lies on top of {BASE} {VERSION}: " in named.stdout
    _, document = _check_json(venv, OVERLAY)
    assert document["clash_pairs"][0]["broken"] == []
    assert run_cli("check", "--all", "--strict", "--python", venv.python).returncode == 1


def _run_tip(command: str, uv_dir: Path) -> None:
    # The tip names bare `uv` / `pip`: put ours first on PATH, as an activated venv would.
    path = os.pathsep.join([str(uv_dir), str(Path(sys.executable).parent), os.environ["PATH"]])
    env = {**os.environ, "PATH": path, "PIP_NO_INDEX": "1"}
    subprocess.run(shlex.split(command), env=env, check=True, capture_output=True, timeout=300)


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_repair_tip_heals(venv_factory: Any, wheels: Wheels, installer: str, uv_bin: Path) -> None:
    venv = venv_factory()
    if installer == "pip":
        _install_pip(venv, wheels.overlay, wheels.base)
        find_links = ["--find-links", str(wheels.base.parent)]
    else:
        uv_install(venv, "--no-index", "--no-deps", wheels.overlay)
        uv_install(venv, "--no-index", "--no-deps", "--reinstall", wheels.base)
        find_links = ["--find-links", str(wheels.base.parent), "--no-index"]
    rc, document = _check_json(venv, OVERLAY)
    assert rc == 1
    (pair,) = document["clash_pairs"]
    assert pair["winner"] == OVERLAY
    repair = pair["repair"]
    # A uv venv has no pip of its own, so pip is pointed at it from outside.
    assert repair.startswith("uv pip install" if installer == "uv" else f"pip --python {venv.python}")
    assert " -- " in repair  # the requirement follows "--": the options go before it
    _run_tip(repair.replace(" -- ", f" {shlex.join(find_links)} -- ", 1), uv_bin.parent)
    rc, document = _check_json(venv, OVERLAY)
    assert rc == 0, document
    truth = _assert_attribution(venv, document)
    assert set(truth.values()) == {OVERLAY}


def test_identical_shared_files_are_harmless(venv_factory: Any, tmp_path: Path) -> None:
    shared = {"nspkg/__init__.py": b"__path__ = __import__('pkgutil').extend_path(__path__, __name__)\n"}
    one = build_wheel(tmp_path, "ns-one", "1.0", {**shared, "nspkg/one.py": b"ONE = 1\n"})
    two = build_wheel(tmp_path, "ns-two", "1.0", {**shared, "nspkg/two.py": b"TWO = 2\n"})
    venv = venv_factory()
    uv_install(venv, "--no-index", "--no-deps", one, two)
    rc, document = _check_json(venv)
    assert rc == 0
    (clash,) = document["clashes"]
    assert clash["path"] == "nspkg/__init__.py"
    assert clash["identical"] is True
    assert document["clash_pairs"] == []
    assert all(d["status"] == "intact" for d in document["distributions"])


def test_hard_linked_alteration_suggests_cleaning_uv_cache(tmp_path: Path, wheels: Wheels, uv_bin: Path) -> None:
    cache = tmp_path / "uv-cache"
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin, cache_dir=cache)
    uv_install(venv, "--no-index", "--no-deps", wheels.base, uv_bin=uv_bin, cache_dir=cache, link_mode="hardlink")
    target = venv.site_packages / "demo_dsl/base_only.py"
    if os.stat(target).st_nlink < 2:
        pytest.skip("uv did not hard-link on this filesystem")
    with open(target, "r+b") as f:  # in place, as a stray write would: the cache copy changes too
        f.write(b"#")
    done = run_cli("check", BASE, "--python", venv.python)
    assert done.returncode == 1
    assert f"uv cache clean -- {BASE}" in done.stdout

"""fix: the repairs check and doctor report, planned, run by real pip and real uv, and verified again.

Every environment is real: wheels built by tests/helpers.py, installed by the real
installers, damaged on disk the way accidents damage them. The installers that ``fix``
runs find wheels only in a local directory (``--find-links``, no index), so nothing here
needs the network; the one failing step points them at an index nobody listens on.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import Venv, build_wheel, make_venv, offline, pip_install, record_hash, run_checked, run_cli, uv_install

#: No index on this machine answers here: connection refused at once.
UNREACHABLE = "http://127.0.0.1:9/simple"


def unreachable() -> dict[str, str]:
    """pip and uv look for wheels on an index that refuses every connection."""
    return {
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_INDEX_URL": UNREACHABLE,
        "PIP_RETRIES": "1",
        "PIP_TIMEOUT": "2",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "UV_NO_CONFIG": "1",
        "UV_INDEX_URL": UNREACHABLE,
        "UV_HTTP_RETRIES": "0",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }


def snapshot(root: Path) -> dict[str, tuple[str, int, str]]:
    """Every entry under ``root``: kind, mode and content digest (link target for symlinks)."""
    entries: dict[str, tuple[str, int, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            st = path.lstat()
            if path.is_symlink():
                entries[str(path)] = ("link", st.st_mode, os.readlink(path))
            elif path.is_dir():
                entries[str(path)] = ("dir", st.st_mode, "")
            else:
                entries[str(path)] = ("file", st.st_mode, hashlib.sha256(path.read_bytes()).hexdigest())
    return entries


def fix(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``wheeldoctor fix ARGS``, stdin not a terminal; never a traceback."""
    done = run_cli("fix", *args, env=env)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def fix_json(*args: str | Path, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    """``wheeldoctor fix ARGS --json``: the exit code and the document."""
    done = fix(*args, "--json", env=env)
    document: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, document


def rc_of(*args: str | Path) -> int:
    """The exit code of one wheeldoctor run."""
    return run_cli(*args).returncode


def pkg(name: str, **files: bytes) -> dict[str, bytes]:
    """A package ``name`` with ``__init__.py`` and the given files (``data_txt`` -> ``data.txt``)."""
    module = name.replace("-", "_")
    return {f"{module}/__init__.py": b"V = 1\n", **{f"{module}/{k.replace('_', '.')}": v for k, v in files.items()}}


# -- a pip environment with one problem of each sort ------------------------------------------


@dataclass(frozen=True)
class Sick:
    """A copy of a real pip venv (its own pip inside): modified, missing, emptied files, a stale dist-info."""

    python: Path
    site: Path
    root: Path
    wheels: Path


@dataclass(frozen=True)
class Original:
    """The pip venv before the damage, and the wheels it was built from."""

    root: Path
    site: Path
    wheels: Path


@pytest.fixture(scope="session")
def sick_original(tmp_path_factory: pytest.TempPathFactory) -> Original:
    """Built once with the venv's own pip (an interrupted upgrade included); never changed."""
    root = tmp_path_factory.mktemp("sick")
    wheels = root / "wheels"
    alpha = build_wheel(wheels, "alpha", "1.0", pkg("alpha", data_txt=b"data\n", more_py=b"M = 2\n"))
    beta = build_wheel(wheels, "beta", "1.0", pkg("beta"))
    foo = {
        v: build_wheel(wheels, "foo", v, pkg("foo", **({"old_py": b"OLD = 1\n"} if v == "1.0" else {})))
        for v in ("1.0", "2.0")
    }
    original = root / "original"
    run_checked([sys.executable, "-m", "venv", original])
    pip = [original / "bin" / "python", "-m", "pip", "install", "-q", "--no-index", "--no-deps"]
    run_checked([*pip, alpha, beta, foo["1.0"]])
    site = Path(next(original.glob("lib/python3*/site-packages")))
    kept = root / "kept"
    shutil.copytree(next(site.glob("foo-1.0.dist-info")), kept)
    run_checked([*pip, "--upgrade", foo["2.0"]])
    shutil.copytree(kept, site / "foo-1.0.dist-info")  # an upgrade interrupted: the old record is back
    return Original(original, site, wheels)


@pytest.fixture
def sick(sick_original: Original, tmp_path: Path) -> Sick:
    """A copy of the original for this test alone, damaged."""
    copy = tmp_path / "env"
    shutil.copytree(sick_original.root, copy, symlinks=True)
    site = copy / sick_original.site.relative_to(sick_original.root)
    (site / "alpha" / "__init__.py").write_bytes(b"V = 2\n")  # modified
    (site / "alpha" / "data.txt").unlink()  # missing
    (site / "alpha" / "more.py").write_bytes(b"")  # emptied
    return Sick(copy / "bin" / "python", site, copy, sick_original.wheels)


def test_dry_run_lists_the_commands_and_changes_no_byte(sick: Sick) -> None:
    before = snapshot(sick.root)
    done = fix("--all", "--dry-run", "--python", sick.python, env=offline(sick.wheels))
    assert done.returncode == 1
    python = str(sick.python)
    # The version whose files are on disk stays (2.0: 1.0's RECORD lists old.py, which the upgrade removed),
    # whichever dist-info Python reads first; the check's tip says the same.
    steps = [line.strip() for line in done.stdout.splitlines() if line.strip()[:2] in {"1.", "2.", "3.", "4."}]
    assert steps == [
        f"1. {python} -m pip uninstall -y -- foo",
        f"2. {python} -m pip uninstall -y -- foo",
        f"3. {python} -m pip install --force-reinstall --no-deps -- foo==2.0",
        f"4. {python} -m pip install --force-reinstall --no-deps -- alpha==1.0",
    ]
    tips = run_cli("check", "--all", "--python", sick.python).stdout
    assert f"{python} -m pip install --force-reinstall --no-deps -- foo==2.0" in tips
    assert "reinstall alpha 1.0: puts back 3 file(s) (1 missing, 2 modified)" in done.stdout
    assert done.stdout.splitlines()[-1] == "fix: 4 step(s) planned; nothing was run"
    assert snapshot(sick.root) == before


def test_without_yes_and_without_a_terminal_nothing_runs(sick: Sick) -> None:
    before = snapshot(sick.root)
    done = fix("--all", "--python", sick.python, env=offline(sick.wheels))
    assert done.returncode == 2
    assert "no terminal to ask on, and no --yes: nothing was run" in done.stderr
    assert snapshot(sick.root) == before


def test_yes_repairs_everything_and_doctor_agrees(sick: Sick) -> None:
    assert rc_of("doctor", "--python", sick.python) == 1
    rc, doc = fix_json("--all", "--yes", "--python", sick.python, env=offline(sick.wheels))
    assert rc == 0, doc
    assert [s["status"] for s in doc["steps"]] == ["ok"] * 4
    assert [s["returncode"] for s in doc["steps"]] == [0] * 4
    assert (doc["healthy"], doc["before"]["healthy"], doc["after"]["healthy"]) == (True, False, True)
    assert doc["after"]["still_broken"] == doc["after"]["new"] == []
    # foo: its stale dist-info (WD052 in files, WD050 in duplicates).
    assert sorted(p["distribution"] for p in doc["after"]["fixed"]) == ["alpha"] * 3 + ["foo"] * 2
    assert rc_of("doctor", "--python", sick.python) == 0
    assert len(list(sick.site.glob("foo-*.dist-info"))) == 1


def test_a_step_that_cannot_reach_the_index_stops_the_rest(sick: Sick) -> None:
    done = fix("alpha", "beta", "--yes", "--python", sick.python, env=unreachable())
    # beta is intact: one step for alpha; damage beta too, so that a second step exists.
    assert done.returncode == 1
    (sick.site / "beta" / "__init__.py").write_bytes(b"V = 3\n")
    before = snapshot(sick.root)
    done = fix("alpha", "beta", "--yes", "--python", sick.python, env=unreachable())
    assert done.returncode == 1
    assert "error: step 1 failed: pip could not reach the package index ([Errno 111] Connection refused)" in done.stdout
    assert "ran: none; failed: step 1; not run: 2" in done.stdout
    assert "step 2/2" not in done.stdout
    assert snapshot(sick.root) == before  # pip removes nothing before it has the wheel
    assert done.stdout.splitlines()[-1] == "fix: problems remain"


# -- uv: hard links into its cache ------------------------------------------------------------


def test_uv_hard_linked_file_is_dropped_from_the_cache_first(tmp_path: Path, uv_bin: Path) -> None:
    cache = tmp_path / "uv-cache"  # its own: altering a linked file alters the cache entry too
    wheels = tmp_path / "wheels"
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin, cache_dir=cache)
    uv_install(venv, "--no-deps", build_wheel(wheels, "gamma", "1.0", pkg("gamma")), cache_dir=cache, link_mode=None)
    target = venv.site_packages / "gamma" / "__init__.py"
    assert target.stat().st_nlink > 1
    with target.open("r+b") as f:  # in place: the cache's copy changes with it
        f.write(b"X")
    env = {**offline(wheels), "UV_CACHE_DIR": str(cache)}
    rc, doc = fix_json("gamma", "--yes", "--python", venv.python, env=env)
    assert [(s["kind"], s["command"]) for s in doc["plan"]["steps"]] == [
        ("cache-clean", "uv cache clean -- gamma"),
        ("reinstall", f"uv pip install --python {venv.python} --reinstall-package gamma --no-deps -- gamma==1.0"),
    ]
    assert rc == 0, doc
    assert rc_of("check", "gamma", "--python", venv.python) == 0
    assert target.read_bytes() == b"V = 1\n"


def test_uv_step_that_cannot_reach_the_index(tmp_path: Path, uv_bin: Path) -> None:
    wheels = tmp_path / "wheels"
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    uv_install(venv, "--no-deps", *(build_wheel(wheels, n, "1.0", pkg(n)) for n in ("delta", "epsilon")))
    for name in ("delta", "epsilon"):
        (venv.site_packages / name / "__init__.py").write_bytes(b"broken\n")
    rc, doc = fix_json("--all", "--yes", "--python", venv.python, env=unreachable())
    assert rc == 1
    assert [s["status"] for s in doc["steps"]] == ["failed", "not-run"]
    assert doc["steps"][0]["error"].startswith("uv could not reach the package index (")
    assert doc["after"]["fixed"] == [] and doc["after"]["new"] == []
    assert sorted(p["distribution"] for p in doc["after"]["still_broken"]) == ["delta", "epsilon"]


def test_uv_env_repaired(tmp_path: Path, uv_bin: Path) -> None:
    wheels = tmp_path / "wheels"
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    uv_install(venv, "--no-deps", build_wheel(wheels, "zeta", "1.0", pkg("zeta", extra_py=b"E = 1\n")))
    (venv.site_packages / "zeta" / "extra.py").unlink()
    (venv.site_packages / "zeta" / "__init__.py").write_bytes(b"")
    done = fix("--all", "--yes", "--python", venv.python, env=offline(wheels))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "after: 2 fixed, 0 still broken, 0 new problem(s)" in done.stdout
    assert "uv cache clean" not in done.stdout  # copies, not links: nothing to drop
    assert rc_of("doctor", "--python", venv.python) == 0


# -- clash pairs ------------------------------------------------------------------------------


def install_all(installer: str, venv: Venv, *wheels: Path) -> None:
    """Install wheels one at a time, in order (the last one's bytes win), with the named real installer."""
    for wheel in wheels:
        if installer == "pip":
            pip_install(venv, "--no-index", "--no-deps", wheel)
        else:
            uv_install(venv, "--no-deps", wheel)


def two_builds(wheels: Path) -> tuple[Path, Path]:
    """Two builds of one library under two project names: same package, different bytes, no requirement."""
    files = {"onelib/__init__.py": b"", "onelib/core.py": b"BUILD = '%s'\n"}
    return tuple(  # type: ignore[return-value]
        build_wheel(wheels, name, "1.0", {p: d.replace(b"%s", name.encode()) for p, d in files.items()})
        for name in ("onelib-fast", "onelib-slow")
    )


@pytest.mark.parametrize("installer", ["pip", "uv"])
@pytest.mark.parametrize("kept", ["onelib-fast", "onelib-slow"])
def test_unrelated_pair_needs_keep_and_keep_heals_it(installer: str, kept: str, tmp_path: Path, uv_bin: Path) -> None:
    wheels = tmp_path / "wheels"
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    install_all(installer, venv, *two_builds(wheels))  # onelib-slow's bytes win every path
    other = "onelib-slow" if kept == "onelib-fast" else "onelib-fast"
    assert rc_of("check", "--all", "--python", venv.python) == 1

    before = snapshot(venv.prefix)
    rc, doc = fix_json("--all", "--yes", "--python", venv.python, env=offline(wheels))
    assert rc == 1
    assert doc["plan"]["steps"] == []
    [left] = doc["plan"]["left_alone"]
    assert left["subject"] == "onelib-fast and onelib-slow"
    assert "choose with --keep onelib-fast or --keep onelib-slow" in left["reason"]
    assert snapshot(venv.prefix) == before

    rc, doc = fix_json("--all", "--yes", "--keep", kept, "--python", venv.python, env=offline(wheels))
    assert [(s["kind"], s["distribution"]) for s in doc["plan"]["steps"]] == [("uninstall", other), ("reinstall", kept)]
    assert rc == 0, doc
    assert rc_of("check", "--all", "--python", venv.python) == 0
    assert rc_of("check", other, "--python", venv.python) == 1  # not installed
    assert (venv.site_packages / "onelib" / "core.py").read_bytes() == f"BUILD = '{kept}'\n".encode()


def test_overlay_winner_is_reinstalled_last(tmp_path: Path, uv_bin: Path) -> None:
    from variants import BASE, DIFFERING, FILES, OVERLAY, build_variant_wheels

    wheels = build_variant_wheels(tmp_path / "wheels")
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    install_all("uv", venv, wheels.base, wheels.overlay)
    assert rc_of("check", OVERLAY, "--python", venv.python) == 0
    for path in DIFFERING[:5]:  # a parallel install let the base win these
        (venv.site_packages / path).write_bytes(FILES[BASE][path])
    assert rc_of("check", OVERLAY, "--python", venv.python) == 1
    rc, doc = fix_json("--all", "--yes", "--python", venv.python, env=offline(tmp_path / "wheels"))
    assert [(s["kind"], s["distribution"]) for s in doc["plan"]["steps"]] == [("reinstall", OVERLAY)]
    assert all(s["status"] == "ok" for s in doc["steps"])
    assert (rc, doc["after"]["new"], doc["after"]["still_broken"]) == (0, [], [])
    assert rc_of("check", OVERLAY, "--python", venv.python) == 0
    assert rc_of("check", "--all", "--python", venv.python) == 0  # the base is overlaid, as intended
    for path in DIFFERING:
        assert (venv.site_packages / path).read_bytes() == FILES[OVERLAY][path]


def test_a_settled_overlay_is_left_alone(tmp_path: Path, uv_bin: Path) -> None:
    from variants import BASE, DIFFERING, OVERLAY, build_variant_wheels

    wheels = build_variant_wheels(tmp_path / "wheels")
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    install_all("uv", venv, wheels.base, wheels.overlay)
    before = snapshot(venv.prefix)
    _, doc = fix_json("--all", "--yes", "--python", venv.python, env=offline(tmp_path / "wheels"))
    assert doc["plan"]["steps"] == [] and doc["plan"]["left_alone"] == []
    assert doc["plan"]["notes"] == [
        f"{BASE} and {OVERLAY}: {OVERLAY} already holds all {len(DIFFERING)} differing path(s) "
        f"(it requires {BASE}); nothing to repair"
    ]
    assert snapshot(venv.prefix) == before


def test_a_chain_reinstalls_the_lower_layer_first(tmp_path: Path, uv_bin: Path) -> None:
    wheels = tmp_path / "wheels"
    layer = {name: {"stack/core.py": f"LAYER = '{name}'\n".encode()} for name in ("low", "mid", "top")}
    built = [
        build_wheel(wheels, "low", "1.0", layer["low"]),
        build_wheel(wheels, "mid", "1.0", layer["mid"], requires=["low"]),
        build_wheel(wheels, "top", "1.0", layer["top"], requires=["mid"]),
    ]
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    install_all("uv", venv, built[1], built[2], built[0])  # the bottom layer's bytes won
    rc, doc = fix_json("--all", "--yes", "--python", venv.python, env=offline(wheels))
    assert [s["distribution"] for s in doc["plan"]["steps"]] == ["mid", "top"]
    assert (venv.site_packages / "stack" / "core.py").read_bytes() == layer["top"]["stack/core.py"]
    assert rc == 0, doc
    assert rc_of("check", "--all", "--python", venv.python) == 0


# -- what fix will not run --------------------------------------------------------------------


@pytest.mark.parametrize("installer", ["poetry", None])
def test_another_tools_distribution_gets_no_step_only_the_tip(
    installer: str | None, tmp_path: Path, uv_bin: Path
) -> None:
    wheels = tmp_path / "wheels"
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    pip_install(venv, "--no-index", "--no-deps", build_wheel(wheels, "theta", "1.0", pkg("theta")))
    marker = venv.dist_info("theta") / "INSTALLER"
    if installer is None:
        marker.unlink()
    else:
        marker.write_text(installer + "\n")
    (venv.site_packages / "theta" / "__init__.py").write_bytes(b"altered\n")
    before = snapshot(venv.prefix)
    rc, doc = fix_json("--all", "--yes", "--python", venv.python, env=offline(wheels))
    assert rc == 1
    assert doc["plan"]["steps"] == [] and doc["steps"] == [] and doc["after"] is None
    [left] = doc["plan"]["left_alone"]
    expected = f"installed by {installer}, not pip or uv" if installer else "no INSTALLER is recorded"
    assert left["subject"] == "theta" and left["reason"].startswith(expected)
    tip = [line for line in run_cli("check", "theta", "--python", venv.python).stdout.splitlines() if "Tip:" in line]
    assert left["commands"] == [tip[-1].removeprefix("Tip: ")]  # the tip's command, for the user to run
    assert snapshot(venv.prefix) == before


def test_it_will_not_reinstall_what_it_runs_on(tmp_path: Path) -> None:
    # A copy of one of wheeldoctor's own dependencies, first on its sys.path, then damaged.
    from importlib.metadata import distribution

    own = distribution("mdurl")
    site = tmp_path / "site"
    for top in ("mdurl", f"mdurl-{own.version}.dist-info"):
        shutil.copytree(Path(str(own.locate_file(top))), site / top)
    with (site / "mdurl" / "_url.py").open("ab") as f:
        f.write(b"# altered\n")
    before = snapshot(site)
    done = run_cli("fix", "mdurl", "--yes", env={"PYTHONPATH": str(site), **unreachable()})
    assert done.returncode == 2
    assert "the plan reinstalls mdurl, which this wheeldoctor runs on; nothing was run" in done.stderr
    assert snapshot(site) == before
    # Named with --python, it goes ahead: here to an index that cannot answer, so nothing changes.
    done = run_cli("fix", "mdurl", "--yes", "--python", sys.executable, env={"PYTHONPATH": str(site), **unreachable()})
    assert (done.returncode, "step 1 failed: pip could not reach the package index" in done.stdout) == (1, True)
    assert snapshot(site) == before


def read_until(fd: int, marker: bytes | None) -> bytes:
    """Read a terminal until ``marker`` shows (None: until it closes); a minute at most, never a hang."""
    import select

    output = b""
    while marker is None or marker not in output:
        ready, _, _ = select.select([fd], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the other side closed
            break
        if not chunk:
            break
        output += chunk
    return output


def test_on_a_terminal_it_asks_and_no_means_nothing_runs(sick: Sick) -> None:
    import pty

    before = snapshot(sick.root)
    pid, fd = pty.fork()
    if pid == 0:  # the child: wheeldoctor on a terminal
        os.environ.update(offline(sick.wheels))
        os.execv(sys.executable, [sys.executable, "-m", "wheeldoctor", "fix", "--all", "--python", str(sick.python)])
    output = read_until(fd, b"Run these 4 step(s)? [y/N]")
    os.write(fd, b"n\n")
    output += read_until(fd, None)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 2
    assert b"not confirmed: nothing was run" in output
    assert snapshot(sick.root) == before


def test_on_a_terminal_an_unanswered_question_runs_nothing(sick: Sick) -> None:
    import pty

    before = snapshot(sick.root)
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update(offline(sick.wheels))
        os.execv(sys.executable, [sys.executable, "-m", "wheeldoctor", "fix", "--all", "--python", str(sick.python)])
    read_until(fd, b"Run these 4 step(s)? [y/N]")
    os.write(fd, b"\x04")  # end of input: the question is never answered
    read_until(fd, None)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 2
    assert snapshot(sick.root) == before


# -- the real overlay -------------------------------------------------------------------------

CUTLASS = Path(os.environ.get("WHEELDOCTOR_CUTLASS_WHEELS", "/work/coord/wheels"))


def test_real_cutlass_overlay_with_five_paths_back_to_base(tmp_path: Path, uv_bin: Path) -> None:
    import zipfile

    from helpers import find_interpreter

    wheels = {w.name.split("-")[0]: w for w in CUTLASS.glob("nvidia_cutlass_dsl_libs_*-4.5.0-cp311-*.whl")}
    python = find_interpreter("3.11")
    if len(wheels) != 2 or python is None:
        pytest.skip("needs the real cutlass-dsl 4.5.0 cp311 wheels and Python 3.11")
    base, cu13 = wheels["nvidia_cutlass_dsl_libs_base"], wheels["nvidia_cutlass_dsl_libs_cu13"]
    venv = make_venv(tmp_path / "venv", python, uv_bin=uv_bin)
    pip_install(venv, "--no-index", "--no-deps", base)
    pip_install(venv, "--no-index", "--no-deps", cu13)
    with zipfile.ZipFile(base) as b, zipfile.ZipFile(cu13) as c:
        shared = sorted(set(b.namelist()) & set(c.namelist()))
        differing = [p for p in shared if ".dist-info/" not in p and b.getinfo(p).CRC != c.getinfo(p).CRC]
        for path in differing[:5]:  # as a parallel install leaves them: base's bytes in cu13's paths
            (venv.site_packages / path).write_bytes(b.read(path))
    name = "nvidia-cutlass-dsl-libs-cu13"
    assert rc_of("check", name, "--python", venv.python) == 1
    rc, doc = fix_json("--all", "--yes", "--python", venv.python, env=offline(CUTLASS))
    assert [(s["kind"], s["distribution"]) for s in doc["plan"]["steps"]] == [("reinstall", name)]
    assert [s["status"] for s in doc["steps"]] == ["ok"]
    assert (rc, doc["after"]["new"], doc["after"]["still_broken"]) == (0, [], [])
    assert rc_of("check", "--all", "--python", venv.python) == 0
    with zipfile.ZipFile(cu13) as c:
        assert all((venv.site_packages / p).read_bytes() == c.read(p) for p in differing)


def test_an_accepted_alteration_is_not_repaired(tmp_path: Path, uv_bin: Path) -> None:
    wheels = tmp_path / "wheels"
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    pip_install(venv, "--no-index", "--no-deps", build_wheel(wheels, "iota", "1.0", pkg("iota", ca_pem=b"CA 1\n")))
    bundle = venv.site_packages / "iota" / "ca.pem"
    bundle.write_bytes(bundle.read_bytes() + b"CORPORATE CA\n")  # appended on purpose
    project = tmp_path / "project"
    project.mkdir()
    # Pinned to the bytes: a rule without ``found`` accepts no changed content (#28).
    found = record_hash(b"CA 1\nCORPORATE CA\n")
    (project / "pyproject.toml").write_text(
        '[[tool.wheeldoctor.accept]]\ndistribution = "iota"\npath = "iota/ca.pem"\n'
        f'found = "{found}"\nreason = "our root CA"\n'
    )
    before = snapshot(venv.prefix)
    done = run_cli("fix", "--all", "--yes", "--python", venv.python, env=offline(wheels), cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-2:] == ["plan: nothing to repair", "fix: healthy"]
    assert snapshot(venv.prefix) == before
    # --config names the same rules from anywhere, as it does for check.
    config = str(project / "pyproject.toml")
    done = run_cli(
        "fix", "--all", "--yes", "--python", venv.python, "--config", config, env=offline(wheels), cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-2:] == ["plan: nothing to repair", "fix: healthy"]
    assert snapshot(venv.prefix) == before
    # Without the rule, the same alteration is repaired, and what was appended is gone.
    done = run_cli("fix", "--all", "--yes", "--python", venv.python, env=offline(wheels), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert bundle.read_bytes() == b"CA 1\n"


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_stale_dist_info_in_a_venv_without_pip(installer: str, tmp_path: Path, uv_bin: Path) -> None:
    wheels = tmp_path / "wheels"
    old, new = (
        build_wheel(wheels, "kappa", v, pkg("kappa", **({"old_py": b""} if v == "1.0" else {}))) for v in ("1.0", "2.0")
    )
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)  # no pip inside: pip is run as ``pip --python``
    install_all(installer, venv, old)
    shutil.copytree(venv.dist_info("kappa"), tmp_path / "kept")
    install_all(installer, venv, new)
    shutil.copytree(tmp_path / "kept", venv.site_packages / "kappa-1.0.dist-info")
    rc, doc = fix_json("--all", "--yes", "--python", venv.python, env=offline(wheels))
    kinds = [s["kind"] for s in doc["plan"]["steps"]]
    assert kinds == (["uninstall", "uninstall", "install"] if installer == "pip" else ["reinstall"])
    assert rc == 0, doc
    # One dist-info is left: the version whose files are on disk (1.0's RECORD lists old.py, gone), as the tip says.
    assert doc["plan"]["steps"][-1]["version"] == "2.0"
    assert [p.name for p in venv.site_packages.glob("kappa-*.dist-info")] == ["kappa-2.0.dist-info"]
    assert rc_of("doctor", "--python", venv.python) == 0


def test_a_bare_directory_repairs_pure_distributions_only(tmp_path: Path) -> None:
    """With no interpreter known, pip --target picks builds for its own Python: compiled ones are left alone."""
    wheels, site = tmp_path / "wheels", tmp_path / "site"
    pure = build_wheel(wheels, "plain", "1.0", {"plain/__init__.py": b"X = 1\n"})
    compiled = build_wheel(
        wheels, "native", "1.0", {"native/__init__.py": b"", "native/_speed.so": b"\x7fELF not really"}
    )
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--target", str(site)]
    subprocess.run([*pip, str(pure), str(compiled)], check=True)
    (site / "plain" / "__init__.py").write_bytes(b"X = 2\n")
    (site / "native" / "__init__.py").write_bytes(b"# altered\n")
    before = snapshot(site)
    rc, doc = fix_json("--all", "--dry-run", "--path", site, env=offline(wheels))
    assert rc == 1
    assert [(s["kind"], s["distribution"]) for s in doc["plan"]["steps"]] == [("reinstall", "plain")]
    [left] = doc["plan"]["left_alone"]
    assert left["subject"] == "native"
    assert "compiled extensions and no interpreter is known" in left["reason"]
    assert snapshot(site) == before


def test_a_removed_start_up_hook_is_not_put_back_by_fix_and_checks_tip_says_so(tmp_path: Path) -> None:
    """Deleting a hook is how one stops it (litellm 1.82.8's ``litellm_init.pth``): a reinstall brings it back."""
    wheels = tmp_path / "wheels"
    wheel = build_wheel(wheels, "hooked", "1.0", {"hooked/__init__.py": b"", "hooked_init.pth": b"import os\n"})
    venv = make_venv(tmp_path / "venv")
    pip_install(venv, "--no-index", "--no-deps", wheel)
    (venv.site_packages / "hooked_init.pth").unlink()
    checked = run_cli("check", "hooked", "--python", venv.python)
    assert checked.returncode == 1
    assert "puts back start-up hook(s) removed since the install (hooked_init.pth)" in checked.stdout, checked.stdout
    done = fix("--all", "--yes", "--python", venv.python, env=offline(wheels))
    assert not (venv.site_packages / "hooked_init.pth").exists(), done.stdout
    assert "left alone: hooked: a reinstall would put back start-up hook(s)" in done.stdout, done.stdout
    assert done.returncode == 1

"""Attacks repaired after the engine merge (issue #28 items 1, 5 and 7): fix argv, cache trust, symlinks.

Each failed on main for the reason the issue gives; they were xfail here until the
repairs landed.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Planted, no_traceback
from helpers import VenvFactory, WheelFactory, pip_install, record_hash, run_cli, uv_install

from wheeldoctor.engine import cache

NOBODY = 65534


def _offline(wheels: Path) -> dict[str, str]:
    return {
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "UV_NO_CONFIG": "1",
        "UV_OFFLINE": "1",
        "UV_FIND_LINKS": str(wheels),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }


@pytest.fixture
def plain_root() -> Iterator[Path]:
    """A directory whose path ``canonicalize_name`` leaves alone (lower case, no ``-_.``)."""
    folder = Path("/tmp") / f"wdhostile{os.getpid()}{time.monotonic_ns()}"
    folder.mkdir()
    yield folder
    shutil.rmtree(folder)


def _set_name(info: Path, name: str) -> None:
    metadata = info / "METADATA"
    lines = metadata.read_text().splitlines()
    metadata.write_text("\n".join(f"Name: {name}" if x.startswith("Name:") else x for x in lines) + "\n")


# -- item 1: nothing from METADATA becomes an option or a URL ---------------------------------


def test_an_option_shaped_name_on_a_duplicate_uninstalls_nothing_healthy(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, tmp_path: Path, plain_root: Path
) -> None:
    venv = venv_factory()
    victim = wheel_factory("victim", "1.0", {"victim/__init__.py": b""})
    old, new = (wheel_factory("evil", v, {"evil/__init__.py": v.encode()}) for v in ("1.0", "2.0"))
    pip_install(venv, "--no-index", "--no-deps", victim, old)
    kept = tmp_path / "kept"
    shutil.copytree(venv.dist_info("evil"), kept)
    pip_install(venv, "--no-index", "--no-deps", "--upgrade", new)
    shutil.copytree(kept, venv.site_packages / "evil-1.0.dist-info")  # a duplicate: fix uninstalls both
    requirements = plain_root / "list"
    requirements.write_text("victim\n")
    for info in venv.site_packages.glob("evil-*.dist-info"):
        _set_name(info, f"-r{requirements}")
    done = run_cli("fix", "--all", "--yes", "--python", venv.python, env=_offline(tmp_path / "wheels"))
    no_traceback(done)
    assert list(venv.site_packages.glob("victim-1.0.dist-info")), done.stdout  # the healthy one is still there
    named = [line for line in done.stdout.splitlines() if f"-r{requirements}" in line]
    assert named, done.stdout
    for line in named:  # no step and no command was built from the name: it is only refused, and why
        assert line.startswith("left alone: ") and "is not a valid project name" in line, done.stdout


def _backend(project: Path, marker: Path) -> None:
    """A project whose build backend, if anything ever builds it, leaves ``marker``."""
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
    )
    (project / "backend.py").write_text(f"open({str(marker)!r}, 'w').close()\n")


@pytest.mark.parametrize("form", ["url", "editable"])
def test_a_url_or_editable_shaped_name_builds_nothing(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, tmp_path: Path, plain_root: Path, form: str
) -> None:
    venv = venv_factory()
    pip_install(venv, "--no-index", "--no-deps", wheel_factory("evil", "1.0", {"evil/__init__.py": b"E = 1\n"}))
    (venv.site_packages / "evil/__init__.py").write_bytes(b"E = 2\n")  # something for fix to reinstall
    root = plain_root
    marker = tmp_path / "built"
    _backend(root / "proj==1.0", marker)  # the requirement fix writes is NAME==VERSION
    name = f"evil @ file://{root}/proj" if form == "url" else f"-e{root}/proj"
    _set_name(venv.dist_info("evil"), name)
    done = run_cli("fix", "--all", "--yes", "--python", venv.python, env=_offline(tmp_path / "wheels"))
    assert not marker.exists(), done.stdout + done.stderr  # (pip's own traceback may be streamed: not ours)
    no_traceback(done)
    assert done.returncode == 1, done.stdout  # refused, so the problem remains
    assert "is not a valid project name" in done.stdout


# -- item 5: cache entries trusted only when yours --------------------------------------------


def test_a_forged_entry_in_a_group_writable_cache_is_not_trusted(planted: Planted, tmp_path: Path) -> None:
    store = tmp_path / "cache"
    store.mkdir(mode=0o700)
    env = {"WHEELDOCTOR_CACHE_DIR": str(store)}
    time.sleep(2 * cache.SETTLE_NS / 1e9)
    assert run_cli("check", "alpha", "--path", planted.site, env=env).returncode == 0
    victim = planted.site / "alpha/core.py"
    victim.write_bytes(b"ANSWER = 43\n")  # altered in place, same size
    dist = str(planted.venv.dist_info("alpha"))
    entry_file = cache.entry_path(str(store), dist)
    entry = cache.decode(Path(entry_file).read_bytes())
    assert entry is not None
    now = cache.identity(os.stat(victim))
    forged = tuple((p, now if p == str(victim) else i, d) for p, i, d in entry.files)
    Path(entry_file).write_bytes(cache.encode(cache.Entry(entry.dist_path, entry.record, entry.verdict_root, forged)))
    os.chown(entry_file, NOBODY, -1)
    store.chmod(0o770)
    done = run_cli("check", "alpha", "--path", planted.site, env=env)
    no_traceback(done)
    assert done.returncode == 1, done.stdout  # the entry claimed RECORD's digests: not believed
    assert done.stderr.count("not using the cache") == 1, done.stderr  # said, once
    assert run_cli("check", "alpha", "--path", planted.site, "--no-cache").returncode == 1  # the truth


# -- item 7: symlinks that leave the environment ----------------------------------------------


def test_a_file_link_out_of_the_environment_is_reported_with_its_target(planted: Planted, tmp_path: Path) -> None:
    secret = tmp_path / "outside" / "secret"
    secret.parent.mkdir()
    secret.write_bytes(b"ANSWER = 42\n")  # RECORD's very bytes: intact, yet read from outside
    link = planted.site / "alpha/core.py"
    link.unlink()
    link.symlink_to(secret)
    done = run_cli("check", "alpha", "--path", planted.site, "--strict")
    no_traceback(done)
    assert done.returncode == 1, done.stdout
    assert str(secret) in done.stdout


def test_a_directory_link_out_of_the_environment_is_reported(planted: Planted) -> None:
    rows = planted.rows("alpha")
    data = Path("/etc/hostname").read_bytes() if Path("/etc/hostname").exists() else b""
    rows.insert(0, ["alpha/dirlink/hostname", record_hash(data), str(len(data))])
    planted.write_rows("alpha", rows)
    (planted.site / "alpha/dirlink").symlink_to("/etc")
    done = run_cli("check", "alpha", "--path", planted.site, "--strict")
    no_traceback(done)
    assert done.returncode == 1, done.stdout
    assert "/etc/hostname" in done.stdout


def test_a_link_inside_the_environment_is_judged_as_before(planted: Planted) -> None:
    # A link that stays in site-packages is the environment's own business: no WD008.
    (planted.site / "alpha/elsewhere.py").write_bytes(b"ANSWER = 42\n")
    link = planted.site / "alpha/core.py"
    link.unlink()
    link.symlink_to(planted.site / "alpha/elsewhere.py")
    done = run_cli("check", "alpha", "--path", planted.site, "--strict")
    no_traceback(done)
    assert done.returncode == 0, done.stdout
    assert "WD008" not in done.stdout


def test_the_link_out_is_said_without_strict_and_fails_with_it(planted: Planted, tmp_path: Path) -> None:
    secret = tmp_path / "secret.py"
    secret.write_bytes(b"ANSWER = 42\n")
    link = planted.site / "alpha/core.py"
    link.unlink()
    link.symlink_to(secret)
    done = run_cli("check", "--all", "--path", planted.site, "--json")
    no_traceback(done)
    reports = {d["name"]: d for d in json.loads(done.stdout)["distributions"]}
    [finding] = reports["alpha"]["findings"]
    assert (finding["code"], finding["path"]) == ("WD008", "alpha/core.py")
    assert str(secret) in finding["message"]
    assert reports["alpha"]["status"] == "unverifiable"
    assert done.returncode == 0  # unverifiable: --all tolerates it, as every such finding
    assert run_cli("check", "--all", "--strict", "--path", planted.site).returncode == 1


def test_uv_symlink_link_mode_is_judged_as_before(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, tmp_path: Path
) -> None:
    venv = venv_factory()
    cache_dir = tmp_path / "uv-cache"
    wheel = wheel_factory("linked", "1.0", {"linked/__init__.py": b"L = 1\n"})
    uv_install(venv, "--no-deps", wheel, cache_dir=cache_dir, link_mode="symlink")
    installed = venv.site_packages / "linked/__init__.py"
    if not installed.is_symlink():
        pytest.skip("uv did not symlink on this filesystem")
    assert str(cache_dir) in os.path.realpath(installed)  # into uv's cache, outside the environment
    done = run_cli("check", "linked", "--python", venv.python, "--strict")
    no_traceback(done)
    assert done.returncode == 0, done.stdout
    assert "WD008" not in done.stdout


def test_a_version_that_is_not_pep_440_builds_no_command(planted: Planted) -> None:
    planted.set_metadata("beta", new_version="1.0 --index-url=http://127.0.0.1:9/")
    (planted.site / "beta/__init__.py").write_bytes(b"BETA = False\n")
    done = run_cli("check", "beta", "--python", planted.venv.python)
    no_traceback(done)
    assert done.returncode == 1
    tips = [line for line in done.stdout.splitlines() if line.startswith("Tip: ")]
    assert tips and all("--index-url" not in line or "no command: " in line for line in tips), tips
    assert any("is not a PEP 440 version" in line for line in tips), tips


def test_a_cache_directory_of_another_user_is_not_used_and_said_once(planted: Planted, tmp_path: Path) -> None:
    store = tmp_path / "cache"
    store.mkdir(mode=0o700)
    os.chown(store, NOBODY, -1)
    done = run_cli("check", "--all", "--path", planted.site, env={"WHEELDOCTOR_CACHE_DIR": str(store)})
    no_traceback(done)
    assert done.returncode == 0, done.stdout
    assert done.stderr.count("not using the cache") == 1, done.stderr
    assert f"owned by uid {NOBODY}" in done.stderr
    assert list(store.iterdir()) == []  # nothing written there either

"""Distributions dpkg installed, judged by dpkg's md5sums: real .debs, real dpkg, a throwaway root.

Each test builds small packages with dpkg-deb and installs them with dpkg into a venv's
own prefix (``--root`` and ``--admindir`` inside it), so they sit in the site-packages
beside what pip installs there, as apt's and pip's files sit together in a system
interpreter's dist-packages. wheeldoctor reads that database through ``--dpkg-admindir``.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

import pytest
from debs import admindir, build_deb, install_deb, needs_dpkg
from helpers import Venv, VenvFactory, WheelFactory, cli_json, dist_info_dirname, pip_install, record_rows, run_cli

pytestmark = needs_dpkg

# What the wheel's RECORD says about the shared object, and what Debian ships after stripping it.
UNSTRIPPED = b"\x7fELF" + b"symbols and debug info " * 400
STRIPPED = b"\x7fELF" + b"code only"
INIT = b"from foo._native import x\n"
DATA = b"the package's data\n"
BAR = b"def bar():\n    return 2\n"


def _dist_info(
    site: str, name: str, version: str, files: dict[str, bytes], extra_rows: list[list[str]]
) -> dict[str, bytes]:
    """A dist-info as Debian ships one: METADATA, WHEEL and a RECORD written from the upstream wheel."""
    info = dist_info_dirname(name, version)
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n".encode()
    wheel = b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: py3-none-any\n"
    rows = [*record_rows(files), *extra_rows, [f"{info}/RECORD", "", ""]]
    record = "".join(",".join(row) + "\n" for row in rows).encode()
    shipped = {f"{site}/{path}": data for path, data in files.items() if path != "foo/_native.so"}
    shipped.update(
        {f"{site}/{info}/METADATA": metadata, f"{site}/{info}/WHEEL": wheel, f"{site}/{info}/RECORD": record}
    )
    return shipped


@pytest.fixture
def debian(venv_factory: VenvFactory, tmp_path: Path) -> Venv:
    """A venv whose site-packages holds python3-foo (a dist-info, its .so stripped) and python3-bar (egg-info)."""
    venv = venv_factory()
    site = str(venv.site_packages.relative_to(venv.prefix))
    upstream = {"foo/__init__.py": INIT, "foo/_native.so": UNSTRIPPED, "foo/data.txt": DATA}
    # The upstream wheel's RECORD also lists a script Debian installs elsewhere (not at all, here).
    files = _dist_info(site, "foo", "1.0", upstream, [["../../../bin/foo", "sha256=" + "A" * 43, "12"]])
    files[f"{site}/foo/_native.so"] = STRIPPED
    files["usr/share/doc/python3-foo/changelog.gz"] = b"changes"
    install_deb(venv.prefix, build_deb(tmp_path, "python3-foo", "1.0-1", files), path_exclude=["/usr/share/doc/*"])
    egg = {
        f"{site}/bar-2.0.egg-info/PKG-INFO": b"Metadata-Version: 1.2\nName: bar\nVersion: 2.0\n",
        f"{site}/bar-2.0.egg-info/top_level.txt": b"bar\n",
        f"{site}/bar.py": BAR,
    }
    install_deb(venv.prefix, build_deb(tmp_path, "python3-bar", "2.0-3", egg))
    (venv.prefix / "etc" / "dpkg" / "dpkg.cfg.d").mkdir(parents=True)
    (venv.prefix / "etc" / "dpkg" / "dpkg.cfg.d" / "excludes").write_text("path-exclude=/usr/share/doc/*\n")
    return venv


def _check(venv: Venv, *names: str) -> tuple[int, dict[str, Any]]:
    selection = list(names) or ["--all"]
    return cli_json("check", *selection, "--python", venv.python, "--dpkg-admindir", admindir(venv.prefix))


def _by_name(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {d["name"]: d for d in document["distributions"]}


def test_a_stripped_object_passes_by_dpkgs_md5sums(debian: Venv) -> None:
    code, document = _check(debian)
    foo = _by_name(document)["foo"]
    assert (code, foo["status"], foo["findings"]) == (0, "intact", [])
    assert foo["managed_by"]["tool"] == "dpkg"
    assert foo["managed_by"]["package"] == "python3-foo"
    assert foo["managed_by"]["version"] == "1.0-1"
    # __init__.py and data.txt match RECORD too (sha256 credited); the stripped .so and the
    # dist-info's own files only match dpkg's md5sums. The excluded changelog is not missed.
    assert foo["verified_by"] == {"sha256": 2, "md5": 4}


def test_without_dpkg_the_same_files_are_judged_by_record(debian: Venv) -> None:
    """The control: RECORD alone calls the stripped object altered and the moved script missing."""
    empty = debian.prefix / "elsewhere" / "var" / "lib" / "dpkg"
    (empty / "info").mkdir(parents=True)
    code, document = cli_json("check", "foo", "--python", debian.python, "--dpkg-admindir", empty)
    foo = _by_name(document)["foo"]
    assert (code, foo["status"]) == (1, "broken")
    assert {f["code"] for f in foo["findings"]} == {"WD002", "WD003"}
    assert foo["managed_by"]["tool"] == "unknown"


def test_a_modified_file_fails_and_names_the_package(debian: Venv) -> None:
    target = debian.site_packages / "foo" / "data.txt"
    target.write_bytes(DATA + b"appended\n")
    code, document = _check(debian)
    foo = _by_name(document)["foo"]
    assert (code, foo["status"]) == (1, "broken")
    [finding] = foo["findings"]
    assert finding["code"] == "WD001"
    assert finding["path"] == "foo/data.txt"
    assert "python3-foo" in finding["message"]
    assert finding["expected"] == f"md5={hashlib.md5(DATA).hexdigest()} (dpkg package python3-foo)"
    assert finding["found"] == f"md5={hashlib.md5(target.read_bytes()).hexdigest()}"
    assert foo["repair"]["argv"] == ["apt-get", "install", "--reinstall", "python3-foo"]
    assert foo["repair"]["runs_pip"] is False
    done = run_cli("check", "--all", "--python", debian.python, "--dpkg-admindir", admindir(debian.prefix))
    assert "Tip: apt-get install --reinstall python3-foo" in done.stdout.splitlines()
    assert " pip " not in done.stdout


def test_an_egg_info_distribution_is_verified(debian: Venv) -> None:
    code, document = _check(debian, "bar")
    bar = _by_name(document)["bar"]
    assert (code, bar["status"], bar["verified_by"]) == (0, "intact", {"md5": 3})
    (debian.site_packages / "bar.py").write_bytes(b"def bar():\n    return 3\n")
    code, document = _check(debian, "bar")
    bar = _by_name(document)["bar"]
    assert (code, bar["status"], [f["path"] for f in bar["findings"]]) == (1, "broken", ["bar.py"])


def test_a_missing_packaged_file_is_missing(debian: Venv) -> None:
    (debian.site_packages / "foo" / "_native.so").unlink()
    code, document = _check(debian, "foo")
    [finding] = _by_name(document)["foo"]["findings"]
    assert (code, finding["code"], finding["path"]) == (1, "WD003", "foo/_native.so")


def test_a_pip_wheel_over_an_apt_file_is_a_clash_naming_both(debian: Venv, wheel_factory: WheelFactory) -> None:
    wheel = wheel_factory("baz", "0.1", {"baz/__init__.py": b"", "foo/data.txt": b"baz's data\n"})
    pip_install(debian, "--no-deps", "--no-index", wheel)
    code, document = _check(debian)
    dists = _by_name(document)
    assert dists["baz"]["status"] == "intact"
    assert dists["baz"]["managed_by"]["tool"] == "pip"
    foo = dists["foo"]
    [finding] = foo["findings"]
    assert (code, foo["status"], finding["path"], finding["content_from"]) == (1, "broken", "foo/data.txt", "baz")
    [clash] = [c for c in document["clashes"] if not c["identical"]]
    assert (sorted(clash["claimants"]), clash["on_disk"]) == (["baz", "foo"], "baz")
    done = run_cli("check", "--all", "--python", debian.python, "--dpkg-admindir", admindir(debian.prefix))
    clash_lines = [line for line in done.stdout.splitlines() if line.startswith("clash:")]
    assert clash_lines and "baz 0.1" in clash_lines[0] and "[dpkg python3-foo]" in clash_lines[0]


def test_one_packages_dist_info_and_egg_info_are_not_a_stale_duplicate(
    venv_factory: VenvFactory, tmp_path: Path
) -> None:
    """Debian's python3-cryptography ships cryptography-X.dist-info and cryptography.egg-info together."""
    venv = venv_factory()
    site = str(venv.site_packages.relative_to(venv.prefix))
    files = _dist_info(site, "pair", "1.0", {"pair/__init__.py": b""}, [])
    files[f"{site}/pair.egg-info/PKG-INFO"] = b"Metadata-Version: 1.2\nName: pair\nVersion: 1.0\n"
    install_deb(venv.prefix, build_deb(tmp_path, "python3-pair", "1.0-1", files))
    code, document = cli_json("doctor", "--python", venv.python, "--dpkg-admindir", admindir(venv.prefix))
    assert (code, document["duplicates"]) == (0, [])
    assert all("pip" not in c for d in document["duplicates"] for c in d["remedy"])


def test_a_dpkg_admindir_that_cannot_be_read_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = run_cli("check", "--all", "--path", tmp_path, "--dpkg-admindir", tmp_path / "nowhere")
    assert done.returncode == 2
    assert "--dpkg-admindir" in done.stderr and "Traceback" not in done.stderr


def test_dpkg_is_never_asked_per_file(debian: Venv, tmp_path: Path) -> None:
    """Ownership comes from the .list files alone: with no dpkg on PATH the verdict is the same."""
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("uv",):
        found = shutil.which(tool)
        if found:
            (bare / tool).symlink_to(found)
    done = run_cli(
        "check",
        "foo",
        "--json",
        "--python",
        debian.python,
        "--dpkg-admindir",
        admindir(debian.prefix),
        env={"PATH": str(bare)},
    )
    assert done.returncode == 0, done.stderr


def test_pip_on_an_externally_managed_interpreter_is_said_aloud(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, tmp_path: Path
) -> None:
    """pip's own files in a PEP 668 interpreter's site dir: the tip overrides the marker, and says so."""
    from wheeldoctor.repair.steps import repair_step
    from wheeldoctor.where.environment import load_environment
    from wheeldoctor.where.managers import attach_managers

    venv = venv_factory()
    pip_install(venv, "--no-deps", "--no-index", wheel_factory("local", "1.0", {"local.py": b""}))
    env = load_environment("t", [str(venv.site_packages)], [str(venv.prefix)], python=str(venv.python))
    stdlib = tmp_path / "stdlib"
    stdlib.mkdir()
    (stdlib / "EXTERNALLY-MANAGED").write_text("[externally-managed]\nError=use apt\n")
    nothing = tmp_path / "var" / "lib" / "dpkg"
    (nothing / "info").mkdir(parents=True)
    marked = attach_managers(env, dpkg_admindir=str(nothing), stdlib=str(stdlib))
    step = repair_step(marked.distributions[0], marked)
    assert marked.externally_managed == str(stdlib / "EXTERNALLY-MANAGED")
    assert step.runs_pip and "--break-system-packages" in step.argv
    assert step.note is not None and "EXTERNALLY-MANAGED" in step.note
    # The same interpreter run as a venv: PEP 668 says the marker does not apply.
    plain = attach_managers(env, dpkg_admindir=str(nothing), stdlib=str(stdlib), venv=str(venv.prefix))
    step = repair_step(plain.distributions[0], plain)
    assert (plain.externally_managed, step.note) == (None, None)
    assert "--break-system-packages" not in step.argv


def test_a_diverted_file_is_looked_for_where_dpkg_divert_put_it(debian: Venv) -> None:
    """As dpkg --verify and debsums: the package's copy was renamed aside; the original path is another's."""
    import subprocess

    original = "/" + str((debian.site_packages / "foo" / "data.txt").relative_to(debian.prefix))
    subprocess.run(
        [
            "dpkg-divert",
            f"--root={debian.prefix}",
            f"--admindir={admindir(debian.prefix)}",
            "--package=local-overrides",
            f"--divert={original}.distrib",
            "--rename",
            "--add",
            original,
        ],
        check=True,
        capture_output=True,
    )
    (debian.site_packages / "foo" / "data.txt").write_bytes(b"the local replacement\n")
    code, document = _check(debian, "foo")
    foo = _by_name(document)["foo"]
    assert (code, foo["status"], foo["findings"]) == (0, "intact", [])
    # The renamed copy is what is checked: altering it breaks the package.
    (debian.site_packages / "foo" / "data.txt.distrib").write_bytes(b"altered\n")
    code, document = _check(debian, "foo")
    [finding] = _by_name(document)["foo"]["findings"]
    assert (code, finding["path"]) == (1, "foo/data.txt.distrib")

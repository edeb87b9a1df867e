"""``check --all --lock`` and ``wheels --lock`` end to end: real locks made by uv against a local index.

The index is served on 127.0.0.1 by :mod:`range_server`; uv resolves, locks and installs
from it; wheeldoctor fetches the locked wheels' RECORDs from it by range.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import Venv, build_wheel, cli_json, find_uv, make_venv, record_hash, run_checked, run_cli
from range_server import RangeIndex, range_index
from test_schema import validate

#: uv must copy files into the venv: the tests alter installed files, never uv's cache.
UV_ENV = {"UV_LINK_MODE": "copy", "UV_NO_PROGRESS": "1", "UV_PYTHON_DOWNLOADS": "never"}
API = b'def get(url):\n    return "GET " + url\n'


@pytest.fixture
def index(tmp_path: Path) -> Iterator[RangeIndex]:
    wheels = tmp_path / "index"
    build_wheel(wheels, "alpha", "1.0", {"alpha/__init__.py": b"", "alpha/api.py": API}, requires=["beta>=2"])
    build_wheel(wheels, "beta", "2.0", {"beta/__init__.py": b"B = 2\n"})
    for version in ("1.16.0", "1.17.0"):
        build_wheel(wheels, "six", version, {"six.py": f"__version__ = {version!r}\n".encode()})
    build_wheel(wheels, "tomli", "2.0.1", {"tomli/__init__.py": b""})
    with range_index(wheels) as served:
        yield served


def _uv(*args: str | Path, cwd: Path | None = None) -> None:
    run_checked([find_uv(), *args], env=UV_ENV, cwd=cwd)


def _pylock(index: RangeIndex, tmp_path: Path, *requirements: str, no_deps: bool = False) -> Path:
    wanted = tmp_path / "requirements.in"
    wanted.write_text("".join(r + "\n" for r in requirements))
    lock = tmp_path / "pylock.toml"
    extra = (
        [
            "--no-deps",
            "--python-version",
            f"{sys.version_info[0]}.{sys.version_info[1]}",
            "--python-platform",
            "x86_64-manylinux_2_28",
        ]
        if no_deps
        else []
    )
    _uv(
        "pip",
        "compile",
        "-q",
        "--python",
        sys.executable,
        "--format",
        "pylock.toml",
        "--index-url",
        index.simple,
        *extra,
        wanted,
        "-o",
        lock,
    )
    return lock


def _synced(index: RangeIndex, tmp_path: Path, lock: Path) -> Venv:
    venv = make_venv(tmp_path / "venv")
    _uv("pip", "sync", "-q", "--python", venv.python, "--index-url", index.simple, lock)
    return venv


def _rewrite(venv: Venv, name: str, path: str, data: bytes) -> None:
    """Alter an installed file and rewrite its row in the installed RECORD to match."""
    (venv.site_packages / path).write_bytes(data)
    record = venv.dist_info(name) / "RECORD"
    rows = record.read_text().splitlines()
    rows = [f"{path},{record_hash(data)},{len(data)}" if r.startswith(path + ",") else r for r in rows]
    record.write_text("\n".join(rows) + "\n")


def test_check_lock_passes_a_synced_venv_and_catches_a_rewritten_record(
    index: RangeIndex, tmp_path: Path, cache_dir: Path
) -> None:
    """With a cache of its own: another test's identical wheel (the same sha256) must not answer from the cache."""
    lock = _pylock(index, tmp_path, "alpha", "six==1.17.0")
    venv = _synced(index, tmp_path, lock)
    index.clear()
    done = run_cli("check", "--all", "--python", venv.python, "--lock", lock)
    assert done.returncode == 0, done.stdout + done.stderr
    # Each wheel is under the first range's size: it came whole and was hashed, so no RECORD rests on TLS alone.
    assert "3 range" in done.stderr and "only as trusted as the index and TLS" not in done.stderr
    assert index.wheel_requests() and all(s.status == 206 for s in index.wheel_requests())

    _rewrite(venv, "alpha", "alpha/api.py", API + b"import os; os.system('id')\n")
    plain = run_cli("check", "--all", "--python", venv.python)
    assert plain.returncode == 0, plain.stdout
    index.clear()
    locked = run_cli("check", "--all", "--python", venv.python, "--lock", lock)
    assert locked.returncode == 1, locked.stdout + locked.stderr
    assert "alpha 1.0: WD084: alpha/api.py RECORD rewritten" in locked.stdout
    assert index.log == []  # the RECORDs came from the cache
    assert "3 cache" in locked.stderr
    doctor = run_cli("doctor", "--python", venv.python, "--lock", lock)
    assert doctor.returncode == 1
    assert "WD084" in doctor.stdout and "alpha/api.py" in doctor.stdout

    code, document = cli_json("check", "--all", "--python", venv.python, "--lock", lock)
    assert code == 1
    assert document["fetched"] == {
        "wheels": 3,
        "bytes": 0,
        "requests": 0,
        "wheels_size": document["fetched"]["wheels_size"],
        "by_source": {"cache": 3},
        "range_only": 0,  # cached from small wheels that came whole and were hashed
        "no_hash": 0,
    }
    assert isinstance(document["fetched"]["wheels_size"], int)  # 0 here: uv's pylock gives no sizes
    validate(document)  # the JSON Schema names fetched and the lock's codes
    [alpha] = [d for d in document["distributions"] if d["name"] == "alpha"]
    assert "WD084" in {f["code"] for f in alpha["findings"]}
    locked_alpha = f"alpha @ {index.pinned_url('alpha-1.0-py3-none-any.whl')}"  # the locked wheel, not a name
    assert alpha["repair"]["argv"][-4:] == ["alpha", "--no-deps", "--", locked_alpha]
    code, document = cli_json("doctor", "--python", venv.python, "--lock", lock)
    assert code == 1 and document["fetched"]["by_source"] == {"cache": 3}
    validate(document)
    code, document = cli_json("check", "--all", "--python", venv.python)
    assert code == 0 and "fetched" not in document


def test_check_lock_names_another_version_and_an_unlocked_distribution(index: RangeIndex, tmp_path: Path) -> None:
    lock = _pylock(index, tmp_path, "alpha", "six==1.17.0")
    venv = _synced(index, tmp_path, lock)
    _uv("pip", "install", "-q", "--python", venv.python, "--index-url", index.simple, "six==1.16.0", "tomli")
    done = run_cli("check", "--all", "--python", venv.python, "--lock", lock)
    assert done.returncode == 1
    assert "six 1.16.0: WD081" in done.stdout
    assert "tomli 2.0.1: WD083" in done.stdout
    assert "Tip: tomli is not in the lock: uninstall it, or accept WD083 for it by a rule" in done.stdout
    assert "WD084" not in done.stdout  # six's other version is not judged against 1.17.0's RECORD
    uninstall = ["uv", "pip", "uninstall", "--python", str(venv.python), "--", "tomli"]
    assert f"(to uninstall: {' '.join(uninstall)})" in done.stdout
    code, document = cli_json("check", "--all", "--python", venv.python, "--lock", lock)
    assert code == 1
    repairs = {d["name"]: d["repair"] for d in document["distributions"] if d["repair"] is not None}
    assert repairs["tomli"]["argv"] == uninstall  # a reinstall would keep it unlocked
    assert repairs["tomli"]["note"] == "not in the lock: uninstall it, or accept WD083 for it by a rule"
    # The lock's wheel (so its version), not the installed 1.16.0
    assert repairs["six"]["argv"][-1] == f"six @ {index.pinned_url('six-1.17.0-py3-none-any.whl')}"


def test_a_distribution_the_lock_lacks_is_not_called_broken(index: RangeIndex, tmp_path: Path) -> None:
    """WD083 fails the run, in its own words: its files are intact, so it is never counted as broken."""
    lock = _pylock(index, tmp_path, "alpha", "six==1.17.0")
    venv = _synced(index, tmp_path, lock)
    _uv("pip", "install", "-q", "--python", venv.python, "--index-url", index.simple, "tomli")
    done = run_cli("check", "--all", "--python", venv.python, "--lock", lock)
    assert done.returncode == 1
    summary = next(line for line in done.stdout.splitlines() if " checked: " in line)
    assert summary == "4 checked: 3 intact, 1 not as locked (files intact); 1 finding(s)"
    doctor = run_cli("doctor", "--python", venv.python, "--lock", lock)
    assert doctor.returncode == 1 and doctor.stdout.splitlines()[-1] == "doctor: problems in lock membership"
    (venv.site_packages / "beta" / "__init__.py").write_text("B = 3\n")
    both = run_cli("doctor", "--python", venv.python, "--lock", lock)
    assert "4 checked: 2 intact, 1 broken, 1 not as locked (files intact); 2 finding(s)" in both.stdout
    assert both.stdout.splitlines()[-1] == "doctor: problems in files, lock membership"


def test_check_lock_reads_no_fifo_at_direct_url_json(index: RangeIndex, tmp_path: Path) -> None:
    lock = _pylock(index, tmp_path, "alpha")
    venv = _synced(index, tmp_path, lock)
    os.mkfifo(venv.dist_info("alpha") / "direct_url.json")  # opened for reading, it would block forever
    done = run_cli("check", "--all", "--python", venv.python, "--lock", lock)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "alpha" not in done.stdout


def test_check_lock_with_a_uv_project(index: RangeIndex, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "project"\nversion = "0.1"\nrequires-python = ">=3.10"\n'
        'dependencies = ["alpha", "six"]\n[tool.uv]\npackage = false\n'
    )
    _uv("lock", "-q", "--default-index", index.simple, "--python", sys.executable, cwd=project)
    _uv("sync", "-q", "--default-index", index.simple, "--python", sys.executable, cwd=project)
    python = project / ".venv" / "bin" / "python"
    lock = project / "uv.lock"
    done = run_cli("check", "--all", "--python", python, "--lock", lock)
    assert done.returncode == 0, done.stdout + done.stderr
    site = next((project / ".venv" / "lib").glob("python3.*/site-packages"))
    venv = Venv(prefix=project / ".venv", python=python, site_packages=site, bin=project / ".venv" / "bin")
    _rewrite(venv, "six", "six.py", b"__version__ = 'evil'\n")
    failed = run_cli("check", "--all", "--python", python, "--lock", lock)
    assert failed.returncode == 1
    assert "six 1.17.0: WD084: six.py RECORD rewritten" in failed.stdout


def test_wheels_lock_finds_a_clash_from_records_alone(tmp_path: Path) -> None:
    wheels = tmp_path / "index"
    build_wheel(wheels, "cv", "5.0", {"cv2/__init__.py": b"full\n", "cv2/data.txt": b"same\n"})
    build_wheel(wheels, "cv-headless", "5.0", {"cv2/__init__.py": b"headless\n", "cv2/data.txt": b"same\n"})
    with range_index(wheels) as index:
        lock = _pylock(index, tmp_path, "cv", "cv-headless", no_deps=True)
        target = ["--python-version", "3.11", "--platform", "manylinux_2_28_x86_64"]
        done = run_cli("wheels", "--lock", lock, *target)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "clash: cv2/__init__.py is shipped by cv, cv-headless with different bytes" in done.stdout
        assert "cv2/data.txt" not in done.stdout.split("wheel(s):")[0]
        assert "RECORDs of 2 locked wheel(s) (2 range)" in done.stderr
        code, document = cli_json("wheels", "--lock", lock, *target)
        assert code == 1
        assert document["fetched"]["by_source"] == {"cache": 2} and document["fetched"]["requests"] == 0
        assert document["fetched"]["range_only"] == 0  # small wheels: they came whole and were hashed
        assert [c["path"] for c in document["clashes"] if not c["identical"]] == ["cv2/__init__.py"]
        index.missing.add("cv-5.0-py3-none-any.whl")
        gone = run_cli("wheels", "--lock", lock, "--no-cache", *target)
    # The missing wheel is a finding of its own (WD086); the other is still judged.
    assert gone.returncode == 1, gone.stdout + gone.stderr
    url = index.file_url("cv-5.0-py3-none-any.whl")
    assert f"cv-5.0-py3-none-any.whl the locked wheel cannot be had ({url}: not found (404))" in gone.stdout
    assert "RECORDs of 2 locked wheel(s) (1 failed, 1 range)" in gone.stderr


def test_wheels_lock_reads_find_links_and_verifies_downloads(tmp_path: Path) -> None:
    wheels = tmp_path / "index"
    build_wheel(wheels, "one", "1.0", {"one/__init__.py": b"1\n"})
    with range_index(wheels) as index:
        lock = _pylock(index, tmp_path, "one")
        verified = run_cli("wheels", "--lock", lock, "--verify-wheels", "--no-cache")
        assert verified.returncode == 0, verified.stderr
        assert "1 download" in verified.stderr and "trust:" not in verified.stderr
        index.clear()
        local = run_cli("wheels", "--lock", lock, "--find-links", wheels, "--no-cache")
        assert local.returncode == 0 and index.log == []
        assert "1 local" in local.stderr


def after_discovery(stderr: str) -> list[str]:
    """stderr's lines after the ``environment:`` line that discovery writes first (no --python given)."""
    first, *rest = stderr.splitlines()
    assert first.startswith("environment: "), first
    return rest


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        ("uv.lock", "version = 2\n", "error: version: uv.lock version 2 is not supported (only 1)"),
        ("pylock.toml", 'lock-version = "1.0"\n', "error: created-by: Missing required value"),
        ("pylock.toml", "[[", "error: "),
    ],
)
def test_a_bad_lock_is_one_line_and_exit_2(tmp_path: Path, name: str, text: str, line: str) -> None:
    lock = tmp_path / name
    lock.write_text(text)
    done = run_cli("wheels", "--lock", lock)
    assert done.returncode == 2
    (error,) = after_discovery(done.stderr)  # the lock is selected for the environment found first
    assert error.startswith(line)
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("version", "platform", "line"),
    [
        ("3.99999999999999999999", "linux_x86_64", "error: --python-version: '3.99999999999999999999': minor version"),
        ("3.12", "macosx_99999_0_arm64", "error: --platform: 'macosx_99999_0_arm64': major version over 99"),
        ("3.12", "manylinux_2_99999999_x86_64", "error: --platform: 'manylinux_2_99999999_x86_64': minor version"),
    ],
)
def test_an_absurd_target_is_one_line_and_exit_2(tmp_path: Path, version: str, platform: str, line: str) -> None:
    lock = tmp_path / "pylock.toml"
    lock.write_text('lock-version = "1.0"\ncreated-by = "test"\n')
    done = run_cli("wheels", "--lock", lock, "--python-version", version, "--platform", platform)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.startswith(line)


def test_an_unreachable_index_is_exit_2_naming_the_host(tmp_path: Path) -> None:
    """No locked wheel could be had: nothing was judged against the lock, so the run could not be made (exit 2),
    which CI tells from a problem found in the environment (exit 1, as when some wheels are had)."""
    wheels = tmp_path / "index"
    build_wheel(wheels, "one", "1.0", {"one/__init__.py": b"1\n"})
    with range_index(wheels) as index:
        lock = _pylock(index, tmp_path, "one")
    done = run_cli("wheels", "--lock", lock, "--no-cache", env={"NO_PROXY": "*"})
    assert done.returncode == 2, done.stdout + done.stderr
    reason = f"cannot reach 127.0.0.1:{index.port}: connection failed"
    [line] = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert line.startswith("error: none of the lock's 1 wheel(s) could be had; one-1.0-py3-none-any.whl: "), line
    assert f"the locked wheel cannot be had ({reason})" in line


@pytest.mark.network
def test_check_lock_against_pypi_requests_and_six(tmp_path: Path) -> None:
    wanted = tmp_path / "requirements.in"
    wanted.write_text("requests\nsix\n")
    lock = tmp_path / "pylock.toml"
    _uv("pip", "compile", "-q", "--python", sys.executable, "--format", "pylock.toml", wanted, "-o", lock)
    venv = make_venv(tmp_path / "venv")
    _uv("pip", "sync", "-q", "--python", venv.python, lock)
    done = run_cli("check", "--all", "--python", venv.python, "--lock", lock)
    assert done.returncode == 0, done.stdout + done.stderr
    _rewrite(venv, "requests", "requests/api.py", b"# altered\n")
    assert run_cli("check", "--all", "--python", venv.python).returncode == 0
    failed = run_cli("check", "--all", "--python", venv.python, "--lock", lock)
    assert failed.returncode == 1
    assert "requests/api.py RECORD rewritten" in failed.stdout
    assert "6 locked wheel(s)" in failed.stderr  # requests, six, certifi, charset-normalizer, idna, urllib3


def test_wheels_lock_takes_a_pip_install_report(tmp_path: Path) -> None:
    wheels = tmp_path / "index"
    build_wheel(wheels, "cv", "5.0", {"cv2/__init__.py": b"full\n"})
    build_wheel(wheels, "cv-headless", "5.0", {"cv2/__init__.py": b"headless\n"})
    report = tmp_path / "report.json"
    with range_index(wheels) as index:
        pip = [sys.executable, "-m", "pip", "install", "-q", "--dry-run", "--ignore-installed", "--report", report]
        run_checked([*pip, "--index-url", index.simple, "cv", "cv-headless"], env={"PIP_NO_CACHE_DIR": "1"})
        done = run_cli("wheels", "--lock", report, "--no-cache")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "clash: cv2/__init__.py is shipped by cv, cv-headless with different bytes" in done.stdout
    assert "RECORDs of 2 locked wheel(s) (2 range)" in done.stderr


@pytest.mark.network
def test_wheels_lock_of_opencv_gives_the_clashes_that_the_downloaded_wheels_give(tmp_path: Path) -> None:
    wanted = tmp_path / "requirements.in"
    wanted.write_text("opencv-python==5.0.0.93\nopencv-python-headless==5.0.0.93\n")
    lock = tmp_path / "pylock.toml"
    target = ["--python-version", "3.11", "--python-platform", "x86_64-manylinux_2_28"]
    _uv("pip", "compile", "-q", "--format", "pylock.toml", "--no-deps", *target, wanted, "-o", lock)
    by_lock = run_cli("wheels", "--lock", lock, "--python-version", "3.11", "--platform", "manylinux_2_28_x86_64")
    assert by_lock.returncode == 1, by_lock.stderr
    pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d", tmp_path / "dl"]
    run_checked([*pip, "--python-version", "3.11", "--platform", "manylinux_2_28_x86_64", "-r", wanted])
    by_wheels = run_cli("wheels", *sorted((tmp_path / "dl").glob("*.whl")))
    assert by_wheels.returncode == 1

    def clashes(out: str) -> list[str]:
        return [line for line in out.splitlines() if line.startswith("clash:")]

    assert clashes(by_lock.stdout) and clashes(by_lock.stdout) == clashes(by_wheels.stdout)
    assert "(0." in by_lock.stderr  # under 1% of the wheels' bytes fetched


@pytest.mark.network
def test_wheels_lock_of_cutlass_dsl_base_and_cu13_finds_98_differing_paths(tmp_path: Path) -> None:
    wanted = tmp_path / "requirements.in"
    wanted.write_text("nvidia-cutlass-dsl-libs-base==4.5.0\nnvidia-cutlass-dsl-libs-cu13==4.5.0\n")
    lock = tmp_path / "pylock.toml"
    target = ["--python-version", "3.11", "--python-platform", "x86_64-manylinux_2_28"]
    _uv("pip", "compile", "-q", "--format", "pylock.toml", "--no-deps", *target, wanted, "-o", lock)
    code, document = cli_json(
        "wheels", "--lock", lock, "--python-version", "3.11", "--platform", "manylinux_2_28_x86_64"
    )
    assert code == 1
    assert sum(not c["identical"] for c in document["clashes"]) == 98
    (pair,) = document["clash_pairs"]
    assert (pair["differing"], pair["install_last"]) == (98, "nvidia-cutlass-dsl-libs-cu13")
    assert (
        document["fetched"]["bytes"] < 0.01 * document["fetched"]["wheels_size"] or document["fetched"]["requests"] == 0
    )


def test_wheels_lock_against_an_installed_environment(tmp_path: Path) -> None:
    wheels = tmp_path / "index"
    build_wheel(wheels, "cv", "5.0", {"cv2/__init__.py": b"full\n"})
    build_wheel(wheels, "cv-headless", "5.0", {"cv2/__init__.py": b"headless\n"})
    with range_index(wheels) as index:
        venv = make_venv(tmp_path / "venv")
        _uv("pip", "install", "-q", "--python", venv.python, "--index-url", index.simple, "cv")
        lock = _pylock(index, tmp_path, "cv-headless", no_deps=True)
        done = run_cli("wheels", "--lock", lock, "--python", venv.python, "--no-cache")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "overwrite: installing cv-headless would replace" in done.stdout
    assert "(recorded by cv)" in done.stdout


def test_extras_and_groups_select_more_of_a_uv_lock(index: RangeIndex, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "project"\nversion = "0.1"\nrequires-python = ">=3.10"\ndependencies = ["six"]\n'
        '[project.optional-dependencies]\nfast = ["tomli"]\n[dependency-groups]\ndev = ["alpha"]\n'
        "[tool.uv]\npackage = false\n"
    )
    _uv("lock", "-q", "--default-index", index.simple, "--python", sys.executable, cwd=project)
    lock = project / "uv.lock"

    def wheels(*options: str) -> int:
        code, document = cli_json("wheels", "--lock", lock, *options)
        assert code == 0
        return int(document["fetched"]["wheels"])

    assert wheels() == 3  # six, and the dev group: alpha, beta
    assert wheels("--extra", "fast") == 4
    assert wheels("--group", "dev") == 3
    unknown = run_cli("wheels", "--lock", lock, "--group", "none-such")
    assert unknown.returncode == 2
    assert after_discovery(unknown.stderr) == [
        "error: dev-dependencies: no workspace member declares the group(s) none-such"
    ]
    refused = run_cli("wheels", "A.whl", "--extra", "fast")
    assert refused.returncode == 2 and "need --lock FILE" in refused.stderr


def test_fix_lock_reinstalls_the_locked_versions_and_a_recheck_passes(index: RangeIndex, tmp_path: Path) -> None:
    """A rewritten RECORD and another version: ``fix --lock`` reinstalls the lock's versions by the tips' words."""
    lock = _pylock(index, tmp_path, "alpha", "six==1.17.0")
    venv = _synced(index, tmp_path, lock)
    _uv("pip", "install", "-q", "--python", venv.python, "--index-url", index.simple, "six==1.16.0")
    _rewrite(venv, "alpha", "alpha/api.py", API + b"import os; os.system('id')\n")
    found = run_cli("check", "--all", "--python", venv.python, "--lock", lock)
    assert found.returncode == 1, found.stdout + found.stderr
    uv = f"uv pip install --python {venv.python}"
    # Each from the locked wheel's URL (uv's pylock names no index): the lock's bytes, and the lock's version.
    alpha = index.pinned_url("alpha-1.0-py3-none-any.whl")  # its bytes pinned: the installers check the fragment
    assert f"Tip: {uv} --reinstall-package alpha --no-deps -- 'alpha @ {alpha}'" in found.stdout
    six = index.pinned_url("six-1.17.0-py3-none-any.whl")
    assert f"Tip: {uv} --reinstall-package six --no-deps -- 'six @ {six}'" in found.stdout  # not 1.16.0

    nowhere = "http://127.0.0.1:9/simple"  # the installers' own index: never asked
    installers = {**UV_ENV, "UV_INDEX_URL": nowhere, "PIP_INDEX_URL": nowhere}
    fixed = run_cli("fix", "--all", "--python", venv.python, "--lock", lock, "--yes", env=installers)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert (venv.site_packages / "alpha" / "api.py").read_bytes() == API
    assert (venv.site_packages / "six.py").read_text() == "__version__ = '1.17.0'\n"
    again = run_cli("check", "--all", "--python", venv.python, "--lock", lock)
    assert again.returncode == 0, again.stdout + again.stderr


def test_fix_lock_installs_nothing_but_the_locked_bytes(index: RangeIndex, tmp_path: Path) -> None:
    """The server swaps the locked wheel after the check: the installer refuses it by the lock's sha256."""
    lock = _pylock(index, tmp_path, "alpha")
    venv = _synced(index, tmp_path, lock)
    tampered = API + b"import os; os.system('id')\n"
    _rewrite(venv, "alpha", "alpha/api.py", tampered)
    assert run_cli("check", "--all", "--python", venv.python, "--lock", lock).returncode == 1
    swapped = {"alpha/__init__.py": b"", "alpha/api.py": b"SWAPPED = 1\n"}
    build_wheel(index.directory, "alpha", "1.0", swapped, requires=["beta>=2"])
    nowhere = "http://127.0.0.1:9/simple"
    installers = {**UV_ENV, "UV_INDEX_URL": nowhere, "PIP_INDEX_URL": nowhere}
    fixed = run_cli("fix", "--all", "--python", venv.python, "--lock", lock, "--yes", env=installers)
    assert fixed.returncode != 0, fixed.stdout + fixed.stderr
    assert (venv.site_packages / "alpha" / "api.py").read_bytes() != b"SWAPPED = 1\n"


def test_fix_lock_needs_all(tmp_path: Path) -> None:
    done = run_cli("fix", "alpha", "--lock", tmp_path / "pylock.toml", "--dry-run")
    assert done.returncode == 2
    assert done.stderr.strip() == "error: --lock judges the whole environment: give --all"


def test_one_lock_judge_serves_check_doctor_and_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``lock_judge``: none without --lock, its other options refused, else a judge that reads the lock given."""
    from wheeldoctor.cli.lock import lock_judge, lock_options
    from wheeldoctor.formats.lock_model import LockError
    from wheeldoctor.where.target import Target, load_target

    assert lock_judge(lock_options(None, None, False, None, None, True), "text") is None
    with pytest.raises(SystemExit) as refused:
        lock_judge(lock_options(None, [str(tmp_path)], False, None, None, False), "text")
    assert refused.value.code == 2
    judge = lock_judge(lock_options(str(tmp_path / "pylock.toml"), None, False, None, None, True), "json")
    assert judge is not None
    assert capsys.readouterr().err == "error: --find-links, --verify-wheels, --extra and --group need --lock FILE\n"
    with pytest.raises(LockError) as unread:
        judge(load_target(Target(python=sys.executable), with_tags=True, defer_records=True))
    assert str(unread.value) == f"{tmp_path / 'pylock.toml'}: cannot be read (No such file or directory)"


@pytest.mark.parametrize("command", [["doctor"], ["fix", "--all", "--dry-run"]])
def test_doctor_and_fix_refuse_lock_options_without_lock_alike(tmp_path: Path, command: list[str]) -> None:
    done = run_cli(*command, "--path", tmp_path, "--find-links", tmp_path)
    assert done.returncode == 2
    assert done.stderr == "error: --find-links, --verify-wheels, --extra and --group need --lock FILE\n"

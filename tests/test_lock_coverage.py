"""Every locked wheel judged or said: the lock's limits, whole wheels hashed, failures per wheel, seeds.

Real locks made by ``uv lock``, ``uv export --format pylock.toml`` and ``uv pip compile
--format pylock.toml`` against a local index on 127.0.0.1 (:mod:`range_server`).
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import build_wheel, find_uv, make_venv, record_hash, run_checked, run_cli
from range_server import RangeIndex, range_index

from wheeldoctor.model.environment import LockedSource
from wheeldoctor.repair.steps import locked_source

UV_ENV = {"UV_LINK_MODE": "copy", "UV_NO_PROGRESS": "1", "UV_PYTHON_DOWNLOADS": "never"}
HERE = f"{sys.version_info[0]}.{sys.version_info[1]}"
#: A target one minor below this interpreter: under any lock whose requires-python is >= HERE.
BELOW = f"{sys.version_info[0]}.{sys.version_info[1] - 1}"
TARGET_BELOW = ("--python-version", BELOW, "--platform", "manylinux_2_28_x86_64")


@pytest.fixture
def index(tmp_path: Path) -> Iterator[RangeIndex]:
    wheels = tmp_path / "index"
    build_wheel(wheels, "alpha", "1.0", {"alpha/__init__.py": b"A = 1\n"}, requires=["beta>=2"])
    build_wheel(wheels, "beta", "2.0", {"beta/__init__.py": b"B = 2\n"})
    build_wheel(wheels, "six", "1.17.0", {"six.py": b"X = 1\n"})
    with range_index(wheels) as served:
        yield served


def _uv(*args: str | Path, cwd: Path | None = None) -> None:
    run_checked([find_uv(), *args], env=UV_ENV, cwd=cwd)


def _uv_project(
    index: RangeIndex, tmp_path: Path, uv_table: str = "", requires_python: str = ">=3.10", direct: str = '"alpha"'
) -> Path:
    """A uv project depending on ``direct`` (alpha, and so beta), locked against the index; its folder."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "pyproject.toml").write_text(
        f'[project]\nname = "project"\nversion = "0.1"\nrequires-python = "{requires_python}"\n'
        f"dependencies = [{direct}]\n[tool.uv]\npackage = false\n{uv_table}"
    )
    _uv("lock", "-q", "--default-index", index.simple, "--python", sys.executable, cwd=project)
    return project


def _exported(project: Path) -> Path:
    """The project's uv.lock exported as pylock.toml, beside it."""
    lock = project / "pylock.toml"
    _uv("export", "-q", "--format", "pylock.toml", "-o", lock, cwd=project)
    return lock


def test_a_target_below_the_locks_requires_python_is_refused_naming_the_rule(index: RangeIndex, tmp_path: Path) -> None:
    project = _uv_project(index, tmp_path, requires_python=f">={HERE}")
    uv_lock, pylock = project / "uv.lock", _exported(project)
    here = run_cli("wheels", "--lock", uv_lock, "--python", sys.executable)
    assert here.returncode == 0, here.stdout + here.stderr
    old = run_cli("wheels", "--lock", uv_lock, *TARGET_BELOW)
    assert old.returncode == 2, old.stdout + old.stderr
    assert old.stderr.splitlines() == [
        f"error: requires-python: the lock is for Python >={HERE}; the target is Python {BELOW}.0"
    ]
    exported = run_cli("wheels", "--lock", pylock, *TARGET_BELOW)
    assert exported.returncode == 2, exported.stdout + exported.stderr
    [line] = exported.stderr.splitlines()
    assert line.startswith("error: requires-python: ") and f"{BELOW}.0" in line


def test_a_target_outside_the_locks_environments_is_refused_naming_the_rule(index: RangeIndex, tmp_path: Path) -> None:
    """``[tool.uv] environments`` (uv.lock's ``supported-markers``; pylock's ``environments``)."""
    project = _uv_project(index, tmp_path, "environments = [\"sys_platform == 'darwin'\"]\n")
    assert "supported-markers = [" in (project / "uv.lock").read_text()
    pylock = _exported(project)
    venv = make_venv(tmp_path / "venv")
    for lock in (project / "uv.lock", pylock):
        done = run_cli("check", "--all", "--python", venv.python, "--lock", lock)
        assert done.returncode == 2, done.stdout + done.stderr
        [line] = done.stderr.splitlines()
        rule = "supported-markers" if lock.name == "uv.lock" else "environments"
        assert line.startswith(f"error: {rule}: "), line
    darwin = ("--python-version", HERE, "--platform", "macosx_14_0_arm64")
    assert run_cli("wheels", "--lock", project / "uv.lock", *darwin).returncode == 0


def _compiled(index: RangeIndex, tmp_path: Path, *requirements: str) -> Path:
    """``uv pip compile --format pylock.toml`` of ``requirements`` against the index."""
    wanted = tmp_path / "requirements.in"
    wanted.write_text("".join(r + "\n" for r in requirements))
    lock = tmp_path / "pylock.toml"
    _uv(
        "pip",
        "compile",
        "-q",
        *("--python", sys.executable, "--format", "pylock.toml", "--index-url", index.simple),
        wanted,
        "-o",
        lock,
    )
    return lock


def _synced(index: RangeIndex, tmp_path: Path, lock: Path) -> Path:
    """A venv synced from ``lock``; its python."""
    venv = make_venv(tmp_path / "venv")
    _uv("pip", "sync", "-q", "--python", venv.python, "--index-url", index.simple, lock)
    return venv.python


def test_a_small_wheel_that_came_whole_is_hashed_against_the_lock(index: RangeIndex, tmp_path: Path) -> None:
    """A wheel under the first range's size comes whole: its sha256 is the lock's, or it is not trusted."""
    lock = _compiled(index, tmp_path, "alpha")
    python = _synced(index, tmp_path, lock)
    index.clear()
    good = run_cli("check", "--all", "--python", python, "--lock", lock, "--no-cache")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "2 range" in good.stderr and "trust:" not in good.stderr  # both hashed: nothing trusted on TLS alone
    beta = "beta-2.0-py3-none-any.whl"
    locked = hashlib.sha256((index.directory / beta).read_bytes()).hexdigest()
    assert locked in lock.read_text()
    lock.write_text(lock.read_text().replace(locked, "0" * 64))
    bad = run_cli("check", "--all", "--python", python, "--lock", lock, "--no-cache")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "beta 2.0: WD085: beta-2.0-py3-none-any.whl the wheel's sha256 differs from the lock" in bad.stdout
    assert all(s.status == 206 for s in index.wheel_requests())


def _rewrite(site: Path, dist_info: str, path: str, data: bytes) -> None:
    """Alter an installed file and rewrite its row in the installed RECORD to match."""
    (site / path).write_bytes(data)
    record = site / dist_info / "RECORD"
    rows = [
        f"{path},{record_hash(data)},{len(data)}" if r.startswith(path + ",") else r
        for r in record.read_text().splitlines()
    ]
    record.write_text("\n".join(rows) + "\n")


def test_a_wheel_that_cannot_be_had_is_its_own_finding_and_the_rest_is_judged(
    index: RangeIndex, tmp_path: Path
) -> None:
    project = _uv_project(index, tmp_path)
    _uv("sync", "-q", "--default-index", index.simple, "--python", sys.executable, cwd=project)
    python = project / ".venv" / "bin" / "python"
    site = next((project / ".venv" / "lib").glob("python3.*/site-packages"))
    _rewrite(site, "alpha-1.0.dist-info", "alpha/__init__.py", b"A = 'evil'\n")
    index.missing.add("beta-2.0-py3-none-any.whl")
    done = run_cli("check", "--all", "--python", python, "--lock", project / "uv.lock", "--no-cache")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "alpha 1.0: WD084: alpha/__init__.py RECORD rewritten" in done.stdout  # judged all the same
    url = index.file_url("beta-2.0-py3-none-any.whl")
    assert f"beta 2.0: WD086: beta-2.0-py3-none-any.whl the locked wheel cannot be had ({url}: not found (404))" in (
        done.stdout
    )
    assert "not judged (the locked wheel cannot be had, WD086): beta-2.0-py3-none-any.whl" in done.stderr
    preflight = run_cli("wheels", "--lock", project / "uv.lock", "--python", python, "--no-cache")
    assert preflight.returncode == 1, preflight.stdout + preflight.stderr
    assert "WD086" in preflight.stdout and "error:" not in preflight.stderr


def test_a_package_locked_without_a_wheel_is_listed_as_not_judged_and_strict_fails_it(
    index: RangeIndex, tmp_path: Path
) -> None:
    """``uv pip compile`` of a local project directory: the lock holds no wheel of it to judge it against."""
    local = tmp_path / "localpkg"
    local.mkdir()
    (local / "pyproject.toml").write_text(
        '[project]\nname = "localpkg"\nversion = "1.0"\ndependencies = []\n'
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
    )
    lock = _compiled(index, tmp_path, "alpha", str(local))
    assert "directory = {" in lock.read_text()
    venv = make_venv(tmp_path / "venv")
    _uv("pip", "install", "-q", "--python", venv.python, "--index-url", index.simple, "alpha")
    built = build_wheel(tmp_path / "built", "localpkg", "1.0", {"localpkg/__init__.py": b""})
    _uv("pip", "install", "-q", "--python", venv.python, "--no-deps", built)
    done = run_cli("check", "--all", "--python", venv.python, "--lock", lock)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not judged (no locked wheel for this target; --strict fails them): localpkg (directory)" in done.stderr
    strict = run_cli("check", "--all", "--python", venv.python, "--lock", lock, "--strict")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "localpkg 1.0: WD087" in strict.stdout


def test_a_wheel_locked_as_a_pylock_archive_is_judged_against_its_own_record(index: RangeIndex, tmp_path: Path) -> None:
    """``beta @ URL`` compiles to an ``archive`` entry: the wheel at that URL, hash-checked, is the reference."""
    url = index.file_url("beta-2.0-py3-none-any.whl")
    lock = _compiled(index, tmp_path, "alpha", f"beta @ {url}")
    assert f'archive = {{ url = "{url}"' in lock.read_text()
    python = _synced(index, tmp_path, lock)
    good = run_cli("check", "--all", "--python", python, "--lock", lock)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "RECORDs of 2 locked wheel(s)" in good.stderr and "not judged" not in good.stderr
    site = next((tmp_path / "venv" / "lib").glob("python3.*/site-packages"))
    _rewrite(site, "beta-2.0.dist-info", "beta/__init__.py", b"B = 'evil'\n")
    done = run_cli("check", "--all", "--python", python, "--lock", lock)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "beta 2.0: WD084: beta/__init__.py RECORD rewritten" in done.stdout


def test_the_seed_packages_of_python_m_venv_are_said_once_not_failed(index: RangeIndex, tmp_path: Path) -> None:
    """``python -m venv`` seeds pip (and setuptools before 3.12): not in the lock, not WD083."""
    lock = _compiled(index, tmp_path, "alpha")
    prefix = tmp_path / "seeded"
    run_checked([sys.executable, "-m", "venv", prefix])
    python = prefix / "bin" / "python"
    _uv("pip", "install", "-q", "--python", python, "--index-url", index.simple, "alpha")
    seeds = ["pip", "setuptools"] if sys.version_info < (3, 12) else ["pip"]
    done = run_cli("check", "--all", "--python", python, "--lock", lock)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WD083" not in done.stdout
    [line] = [line for line in done.stderr.splitlines() if line.startswith("venv seed package(s)")]
    assert [word.split()[0] for word in line.split(": ", 1)[1].split(", ")] == seeds
    _uv("pip", "install", "-q", "--python", python, "--index-url", index.simple, "six")
    other = run_cli("check", "--all", "--python", python, "--lock", lock)
    assert other.returncode == 1 and "six 1.17.0: WD083" in other.stdout  # any other unlocked one still fails


def test_quiet_leaves_out_the_records_and_trust_lines(index: RangeIndex, tmp_path: Path) -> None:
    lock = _compiled(index, tmp_path, "alpha")
    python = _synced(index, tmp_path, lock)
    for command in (["check", "--all"], ["doctor"]):
        loud = run_cli(*command, "--python", python, "--lock", lock)
        assert loud.returncode == 0 and "RECORDs of 2 locked wheel(s)" in loud.stderr, loud.stdout + loud.stderr
        quiet = run_cli(*command, "--python", python, "--lock", lock, "-q")
        assert quiet.returncode == 0, quiet.stdout + quiet.stderr
        assert quiet.stderr == ""


def test_repairs_take_each_package_from_its_locked_source(index: RangeIndex, tmp_path: Path) -> None:
    """alpha from the lock's index, beta from the lock's wheel path: never by name from the installer's own index."""
    wheels = tmp_path / "project" / "wheels"
    beta = build_wheel(wheels, "beta", "2.0", {"beta/__init__.py": b"B = 'local'\n"})
    sources = '[tool.uv.sources]\nbeta = { path = "wheels/beta-2.0-py3-none-any.whl" }\n'
    project = _uv_project(index, tmp_path, sources, direct='"alpha", "beta"')
    _uv("sync", "-q", "--default-index", index.simple, "--python", sys.executable, cwd=project)
    python = project / ".venv" / "bin" / "python"
    site = next((project / ".venv" / "lib").glob("python3.*/site-packages"))
    _rewrite(site, "alpha-1.0.dist-info", "alpha/__init__.py", b"A = 'evil'\n")
    _rewrite(site, "beta-2.0.dist-info", "beta/__init__.py", b"B = 'evil'\n")
    lock = project / "uv.lock"
    found = run_cli("check", "--all", "--python", python, "--lock", lock)
    assert found.returncode == 1, found.stdout + found.stderr
    uv = f"uv pip install --python {python}"
    only = f"--index-url={index.simple} --only-binary=:all:"  # the lock's index alone, and a wheel: never a build
    assert f"Tip: {uv} --reinstall-package alpha --no-deps {only} -- alpha==1.0" in found.stdout
    assert f"Tip: {uv} --reinstall-package beta --no-deps -- {beta}" in found.stdout
    nowhere = {**UV_ENV, "UV_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_INDEX_URL": "http://127.0.0.1:9/simple"}
    fixed = run_cli("fix", "--all", "--python", python, "--lock", lock, "--yes", env=nowhere)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert (site / "alpha" / "__init__.py").read_bytes() == b"A = 1\n"
    assert (site / "beta" / "__init__.py").read_bytes() == b"B = 'local'\n"


@pytest.mark.unit
@pytest.mark.parametrize(
    ("index_url", "path", "url", "expected"),
    [
        ("https://example.org/simple", None, None, LockedSource(index="https://example.org/simple")),
        (None, "/w/x-1.0-py3-none-any.whl", "https://e.org/x.whl", LockedSource(wheel="/w/x-1.0-py3-none-any.whl")),
        (
            None,
            None,
            "https://e.org/x-1.0-py3-none-any.whl",
            LockedSource(wheel="https://e.org/x-1.0-py3-none-any.whl"),
        ),
        ("--extra-index-url=https://evil", None, None, None),
        ("https://e.org/simple --trusted-host x", None, None, None),
        ("https://e.org/simple\n", None, None, None),
        ("ftp://e.org/simple", None, None, None),
        (None, "-e.whl", None, None),
        (None, "relative/x.whl", None, None),
        (None, None, "file:///x.whl", None),
    ],
)
def test_a_locked_source_enters_a_command_only_when_its_words_are_safe(
    index_url: str | None, path: str | None, url: str | None, expected: LockedSource | None
) -> None:
    assert locked_source(index_url, path, url) == expected


_LOCKED_URL = "https://e.org/x-1.0-py3-none-any.whl#md5=00"


@pytest.mark.unit
@pytest.mark.parametrize(
    ("sha256", "wheel"),
    [
        ("ab" * 32, "https://e.org/x-1.0-py3-none-any.whl#sha256=" + "ab" * 32),
        ("AB" * 32, _LOCKED_URL),  # as locked: lower-case hex only
        ("ab" * 31, _LOCKED_URL),
        ("ab" * 31 + "&x", _LOCKED_URL),
        (None, _LOCKED_URL),
    ],
)
def test_a_locked_wheels_url_carries_the_locks_sha256_for_the_installer(sha256: str | None, wheel: str) -> None:
    """pip and uv check a ``#sha256=`` fragment before installing: the reinstall is of the very bytes locked."""
    assert locked_source(None, None, _LOCKED_URL, sha256) == LockedSource(wheel=wheel)


def test_check_lock_settles_unchanged_files_from_the_verification_cache(index: RangeIndex, tmp_path: Path) -> None:
    """A wrong digest planted in the cache is believed under ``--lock`` too: proof that the cache answered."""
    from wheeldoctor.engine import cache

    lock = _compiled(index, tmp_path, "alpha")
    python = _synced(index, tmp_path, lock)
    cached = {"WHEELDOCTOR_CACHE_DIR": str(tmp_path / "cache")}
    assert run_cli("check", "--all", "--python", python, "--lock", lock, env=cached).returncode == 0
    site = next((tmp_path / "venv" / "lib").glob("python3.*/site-packages"))
    where = Path(cache.entry_path(str(tmp_path / "cache"), str(site / "alpha-1.0.dist-info")))
    entry = cache.decode(where.read_bytes())
    assert entry is not None
    target = str(site / "alpha" / "__init__.py")
    assert target in {path for path, _, _ in entry.files}
    planted = tuple((p, fp, (("sha256", b"\0" * 32),) if p == target else d) for p, fp, d in entry.files)
    where.write_bytes(cache.encode(cache.Entry(entry.dist_path, entry.record, None, planted)))
    warm = run_cli("check", "--all", "--python", python, "--lock", lock, env=cached)
    assert warm.returncode == 1, warm.stdout + warm.stderr
    assert "alpha 1.0: WD001" in warm.stdout
    assert "WD084" not in warm.stdout  # the RECORDs agree; the cache's planted digest is what differs

"""The metadata memo: an environment read from it is the one read from its files, and a change is seen."""

from __future__ import annotations

import marshal
import os
import time
import zlib
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import pytest
from helpers import Venv, build_wheel, cli_json, copy_venv, make_venv, pip_install, uv_install

from wheeldoctor.engine import cache, store
from wheeldoctor.engine.distinfo_memo import memos
from wheeldoctor.model.environment import Environment
from wheeldoctor.model.findings import Code
from wheeldoctor.where import environment
from wheeldoctor.where.environment import Reading, load_environment


def _settle() -> None:
    """Wait until just-written files are old enough to be kept (see cache.SETTLE_NS)."""
    time.sleep(2 * cache.SETTLE_NS / 1e9)


@pytest.fixture(scope="session")
def installed_template(tmp_path_factory: pytest.TempPathFactory, uv_bin: Path, uv_cache: Path) -> Venv:
    """A venv with one distribution by pip and two by uv, requirements, extras and a tag of each: built once."""
    root = tmp_path_factory.mktemp("metadata-memo")
    venv = make_venv(root / "venv", uv_bin=uv_bin, cache_dir=uv_cache)
    wheel = partial(build_wheel, root / "wheels")
    pip_install(venv, "--no-deps", wheel("alpha", "1.0", {"alpha/__init__.py": b""}, requires=["beta>=2"]))
    uv_install(
        venv,
        "--no-deps",
        wheel("beta", "2.1", {"beta/__init__.py": b""}, requires_python=">=3.8", extras={"fast": ["gamma"]}),
        wheel("gamma", "0.3", {"gamma.py": b""}, tag="py3-none-any"),
        uv_bin=uv_bin,
        cache_dir=uv_cache,
    )
    return venv


@pytest.fixture
def installed(installed_template: Venv, tmp_path: Path) -> Venv:
    """This test's own copy of the template, settled."""
    venv = copy_venv(installed_template, tmp_path / "venv")
    _settle()
    return venv


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The METADATA files read from disk during the test (the memo reads none of them)."""
    done: list[str] = []
    real = environment._read_metadata

    def counting(path: str, *args: str) -> object:
        done.append(path)
        return real(path, *args)

    monkeypatch.setattr(environment, "_read_metadata", counting)
    yield done


def _read(venv: Venv, cache_dir: Path | None) -> Environment:
    reading = Reading(defer_records=True, memos=memos(cache_dir and str(cache_dir)))
    return load_environment("test", [str(venv.site_packages)], [str(venv.prefix)], reading=reading)


def _dist_info(venv: Venv, name: str) -> Path:
    [found] = venv.site_packages.glob(f"{name}-*.dist-info")
    return found


def test_a_second_read_takes_the_memo_and_gives_the_same_environment(
    installed: Venv, tmp_path: Path, reads: list[str]
) -> None:
    plain = _read(installed, None)
    assert len(reads) == len(plain.distributions) >= 3
    reads.clear()
    first = _read(installed, tmp_path / "cache")
    assert first == plain and len(reads) == len(plain.distributions)  # nothing kept yet: every file read
    assert list((tmp_path / "cache").glob("*.metadata"))
    reads.clear()
    second = _read(installed, tmp_path / "cache")
    assert second == plain
    assert reads == []  # every dist-info came from the memo
    beta = second.find("beta")
    assert beta is not None and beta.metadata is not None
    assert (beta.metadata.requires_python, beta.metadata.provides_extra) == (">=3.8", ("fast",))
    assert beta.installer == "uv" and beta.wheel_tags == ("py3-none-any",)


CHANGES: dict[str, Callable[[Path], None]] = {
    "METADATA rewritten": lambda d: (d / "METADATA").write_text(
        (d / "METADATA").read_text().replace("Version: 1.0", "Version: 1.1")
    ),
    "METADATA rewritten, size and mtime put back": lambda d: _same_size_and_mtime(d / "METADATA", "1.0", "9.9"),
    "INSTALLER removed": lambda d: (d / "INSTALLER").unlink(),
    "INSTALLER rewritten": lambda d: (d / "INSTALLER").write_text("conda\n"),
    "WHEEL rewritten": lambda d: (d / "WHEEL").write_text("Wheel-Version: 1.0\nTag: py2-none-any\n"),
    "METADATA replaced by rename": lambda d: _replaced(d / "METADATA"),
}


def _same_size_and_mtime(path: Path, old: str, new: str) -> None:
    st = path.stat()
    path.write_text(path.read_text().replace(f"Version: {old}", f"Version: {new}"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size


def _replaced(path: Path) -> None:
    fresh = path.with_name("METADATA.new")
    fresh.write_text(path.read_text().replace("Requires-Dist: beta>=2", "Requires-Dist: beta>=3"))
    os.replace(fresh, path)


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_changed_file_is_read_again(installed: Venv, tmp_path: Path, reads: list[str], change: str) -> None:
    cache_dir = tmp_path / "cache"
    _read(installed, cache_dir)
    _read(installed, cache_dir)  # kept now
    alpha = _dist_info(installed, "alpha")
    CHANGES[change](alpha)
    _settle()
    reads.clear()
    after = _read(installed, cache_dir)
    assert [Path(p).parent.name for p in reads] == [alpha.name]  # the changed one alone is read again
    assert after == _read(installed, None)  # what the files say now, not what they said


def test_a_file_changed_too_recently_is_not_kept(installed: Venv, tmp_path: Path, reads: list[str]) -> None:
    alpha = _dist_info(installed, "alpha")
    (alpha / "INSTALLER").write_text("pip\n")  # just now: a later write in the same tick could go unseen
    cache_dir = tmp_path / "cache"
    _read(installed, cache_dir)
    reads.clear()
    _read(installed, cache_dir)
    assert [Path(p).parent.name for p in reads] == [alpha.name]


def test_a_metadata_problem_is_never_kept(installed: Venv, tmp_path: Path) -> None:
    alpha = _dist_info(installed, "alpha")
    (alpha / "METADATA").write_text("Metadata-Version: 2.1\nName: alpha\n\n")
    _settle()
    cache_dir = tmp_path / "cache"
    for _ in range(3):
        dist = next(d for d in _read(installed, cache_dir).distributions if d.path == str(alpha))
        assert [p.code for p in dist.problems] == [Code.METADATA_PROBLEM]


@pytest.mark.parametrize("damage", ["a byte flipped", "truncated", "another site directory's", "not ours"])
def test_a_damaged_memo_is_not_used_and_is_written_again(
    installed: Venv, tmp_path: Path, reads: list[str], damage: str
) -> None:
    cache_dir = tmp_path / "cache"
    _read(installed, cache_dir)
    [memo] = cache_dir.glob("*.metadata")
    data = memo.read_bytes()
    if damage == "a byte flipped":
        memo.write_bytes(data[:-20] + bytes([data[-20] ^ 1]) + data[-19:])
    elif damage == "truncated":
        memo.write_bytes(data[: len(data) // 2])
    elif damage == "another site directory's":  # whole and ours, but made for another directory
        start = len(store.header("metadata", 1)) + 4
        _, kept = marshal.loads(data[start:])
        payload = marshal.dumps((str(installed.prefix), kept))
        memo.write_bytes(store.header("metadata", 1) + zlib.crc32(payload).to_bytes(4, "big") + payload)
    else:
        memo.write_bytes(b"wheeldoctor-cache 2 x\n" + data)
    reads.clear()
    assert _read(installed, cache_dir) == (plain := _read(installed, None))
    assert len(reads) == 2 * len(plain.distributions)  # every dist-info read, with the damaged memo and without
    reads.clear()
    _read(installed, cache_dir)
    assert reads == []  # written again, whole


def test_no_cache_keeps_nothing(installed: Venv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache_dir = tmp_path / "cache"
    monkeypatch.setenv("WHEELDOCTOR_CACHE_DIR", str(cache_dir))
    code, _ = cli_json("check", "--all", "--no-cache", "--path", installed.site_packages)
    assert code == 0 and not cache_dir.exists()
    code, _ = cli_json("deps", "--no-cache", "--path", installed.site_packages)
    assert code == 0 and not cache_dir.exists()
    code, _ = cli_json("deps", "--path", installed.site_packages)
    # deps hashes nothing: its metadata memo, its judgement (engine/deps_memo.py) and the digest of
    # the code that wrote them (``cache.code``), no file's digest
    assert code == 0 and sorted(p.suffix for p in cache_dir.iterdir()) == [".code", ".deps", ".metadata"]
    code, _ = cli_json("check", "--all", "--path", installed.site_packages)
    assert code == 0 and list(cache_dir.glob("*.metadata"))


def test_a_fifo_for_installer_is_not_kept_and_never_blocks(installed: Venv, tmp_path: Path, reads: list[str]) -> None:
    alpha = _dist_info(installed, "alpha")
    (alpha / "INSTALLER").unlink()
    os.mkfifo(alpha / "INSTALLER")
    _settle()
    cache_dir = tmp_path / "cache"
    for _ in range(2):
        dist = next(d for d in _read(installed, cache_dir).distributions if d.path == str(alpha))
        assert dist.installer is None
    assert [Path(p).parent.name for p in reads].count(alpha.name) == 2


def test_a_file_that_appears_while_read_is_not_kept(
    installed: Venv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alpha = _dist_info(installed, "alpha")
    (alpha / "INSTALLER").unlink()
    _settle()
    real = environment._read_metadata

    def reading(path: str, *args: str) -> object:
        if Path(path).parent == alpha:
            (alpha / "INSTALLER").write_text("pip\n")  # written after its absence was fingerprinted
        return real(path, *args)

    monkeypatch.setattr(environment, "_read_metadata", reading)
    cache_dir = tmp_path / "cache"
    _read(installed, cache_dir)
    monkeypatch.setattr(environment, "_read_metadata", real)
    (alpha / "INSTALLER").unlink()  # absent again: the fingerprints of the first read, but not its INSTALLER
    _settle()
    dist = next(d for d in _read(installed, cache_dir).distributions if d.path == str(alpha))
    assert dist.installer is None


@pytest.mark.parametrize("entry", [7, (), ("x",), {0: 1}, [None, None], (None, ("a",) * 8)])
def test_a_memo_entry_of_another_shape_is_a_miss(installed: Venv, tmp_path: Path, entry: object) -> None:
    cache_dir = tmp_path / "cache"
    _read(installed, cache_dir)
    [memo] = cache_dir.glob("*.metadata")
    data = memo.read_bytes()
    start = len(store.header("metadata", 1)) + 4
    location, kept = marshal.loads(data[start:])
    payload = marshal.dumps((location, dict.fromkeys(kept, entry)))  # whole and ours, every entry malformed
    memo.write_bytes(store.header("metadata", 1) + zlib.crc32(payload).to_bytes(4, "big") + payload)
    assert _read(installed, cache_dir) == _read(installed, None)


def test_memos_are_keyed_on_the_code_not_the_version(tmp_path: Path) -> None:
    """A change to what reads or judges makes every memo a miss; a change to rendering does not."""
    import shutil
    import subprocess
    import sys

    package = Path(__file__).resolve().parent.parent / "wheeldoctor"
    shutil.copytree(package, tmp_path / "wheeldoctor", ignore=shutil.ignore_patterns("__pycache__"))
    show = (
        f"import sys; sys.path.insert(0, {str(tmp_path)!r}); "
        "from wheeldoctor.engine import store; print(store.header('metadata', 1))"
    )

    def header() -> str:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        return subprocess.run([sys.executable, "-c", show], capture_output=True, text=True, env=env, check=True).stdout

    first = header()
    with (tmp_path / "wheeldoctor/report/text.py").open("a") as source:
        source.write("# rendering only\n")
    assert header() == first
    with (tmp_path / "wheeldoctor/judge/files.py").open("a") as source:
        source.write("# a judge's change\n")
    assert header() != first

"""The runtime gate: right answers, cached, computed once under contention, and nearly free to import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import Venv, build_wheel, make_venv, os_threads, pip_install, settled_threads, uv_install

import wheeldoctor
import wheeldoctor.gate.predicate
from wheeldoctor.gate.predicate import IntactGate

REPO = Path(wheeldoctor.__file__).resolve().parent.parent

GOOD = {"gate_good/__init__.py": b"OK = True\n", "gate_good/data.txt": b"payload\n"}
BAD = {"gate_bad/__init__.py": b"OK = False\n"}
BARE = {"gate_bare/__init__.py": b"\n"}


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, uv_bin: Path) -> Venv:
    """A venv with an intact dist (pip), a broken one (uv) and one without RECORD."""
    root = tmp_path_factory.mktemp("gate")
    venv = make_venv(root / "venv", uv_bin=uv_bin)
    pip_install(
        venv,
        "--no-index",
        "--no-deps",
        build_wheel(root, "Gate.Good", "1.0", GOOD, console_scripts={"gate-good": "gate_good:main"}),
    )
    uv_install(venv, build_wheel(root, "gate-bad", "1.0", BAD), build_wheel(root, "gate-bare", "1.0", BARE))
    (venv.site_packages / "gate_bad/__init__.py").write_bytes(b"OK = None\n")
    (venv.dist_info("gate-bare") / "RECORD").unlink()
    return venv


@pytest.fixture
def on_path(venv: Venv, monkeypatch: pytest.MonkeyPatch) -> Iterator[Venv]:
    """The venv's site-packages first on sys.path; the global gate forgotten before and after."""
    monkeypatch.setattr(sys, "path", [str(venv.site_packages), *sys.path])
    wheeldoctor.is_intact.cache_clear()
    yield venv
    wheeldoctor.is_intact.cache_clear()


@pytest.mark.parametrize(
    ("name", "answer"),
    [
        ("Gate.Good", True),
        ("gate-good", True),
        ("GATE_GOOD", True),
        ("gate.good", True),
        ("gate-bad", False),
        ("gate-bare", False),
        ("gate-absent", False),
        ("", False),
    ],
)
def test_answers(on_path: Venv, name: str, answer: bool) -> None:
    assert wheeldoctor.is_intact(name) is answer


def test_not_a_string_is_a_type_error(on_path: Venv) -> None:
    with pytest.raises(TypeError, match="distribution name"):
        wheeldoctor.is_intact(b"gate-good")  # type: ignore[arg-type]


def test_answer_is_cached_until_cache_clear(on_path: Venv) -> None:
    gate = IntactGate()
    victim = on_path.site_packages / "gate_good/data.txt"
    original = victim.read_bytes()
    try:
        assert gate("gate-good") is True
        victim.write_bytes(b"tampered")
        assert gate("gate-good") is True  # still the cached answer
        gate.cache_clear()
        assert gate("gate-good") is False
        victim.write_bytes(original)
        assert gate("gate-good") is False  # cached again
        gate.cache_clear()
        assert gate("gate-good") is True
    finally:
        victim.write_bytes(original)


def test_sys_path_change_gets_a_fresh_answer(venv: Venv, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = IntactGate()
    without = [p for p in sys.path if p != str(venv.site_packages)]
    monkeypatch.setattr(sys, "path", without)
    assert gate("gate-good") is False  # not installed here
    monkeypatch.setattr(sys, "path", [str(venv.site_packages), *without])
    assert gate("gate-good") is True
    monkeypatch.setattr(sys, "path", without)
    assert gate("gate-good") is False


def test_sixteen_threads_compute_once(on_path: Venv, monkeypatch: pytest.MonkeyPatch) -> None:
    real = wheeldoctor.gate.predicate._check
    calls: list[str] = []
    release = threading.Event()

    def counting(key: str, search_path: tuple[str, ...]) -> bool:
        calls.append(key)
        release.wait(30)  # hold the computation open until every thread is waiting on it
        return real(key, search_path)

    monkeypatch.setattr(wheeldoctor.gate.predicate, "_check", counting)
    gate = IntactGate()
    barrier = threading.Barrier(17)
    answers: list[bool] = []

    def ask() -> None:
        barrier.wait()
        answers.append(gate("gate-good"))

    threads = [threading.Thread(target=ask) for _ in range(16)]
    for thread in threads:
        thread.start()
    barrier.wait()
    release.set()
    for thread in threads:
        thread.join(60)
    assert answers == [True] * 16
    assert calls == ["gate_good"]


def test_one_name_does_not_block_another(on_path: Venv, monkeypatch: pytest.MonkeyPatch) -> None:
    real = wheeldoctor.gate.predicate._check
    calls: list[str] = []

    def counting(key: str, search_path: tuple[str, ...]) -> bool:
        calls.append(key)
        return real(key, search_path)

    monkeypatch.setattr(wheeldoctor.gate.predicate, "_check", counting)
    gate = IntactGate()
    assert [gate(n) for n in ("gate-good", "gate-bad", "gate_good", "Gate-Bad")] == [True, False, True, False]
    assert calls == ["gate_good", "gate_bad"]


def test_gate_leaves_no_threads(on_path: Venv) -> None:
    before = threading.active_count()
    assert IntactGate()("gate-good") is True
    assert threading.active_count() == before


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts the kernel's threads through /proc")
def test_gate_leaves_no_os_threads(on_path: Venv) -> None:
    before = os_threads()
    assert IntactGate()("gate-good") is True
    assert settled_threads(before) == before


# --------------------------------------------------------------------------
# another interpreter, and the cost of `import wheeldoctor`
# --------------------------------------------------------------------------


def _run(
    python: Path | str, code: str, env: dict[str, str] | None = None, flags: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    argv = [str(python), *flags, "-c", code]
    return subprocess.run(argv, capture_output=True, text=True, env=full, timeout=120, check=False)


def test_gate_in_the_venvs_own_interpreter(venv: Venv) -> None:
    code = (
        "import wheeldoctor; "
        "print(*(wheeldoctor.is_intact(n) for n in ('gate-good', 'gate-bad', 'gate-bare', 'gate-absent')))"
    )
    done = _run(venv.python, code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False", "False", "False"]
    assert done.stderr == ""


HEAVY = {"rich", "typer", "click", "pydantic", "packaging", "concurrent.futures", "asyncio", "multiprocessing"}


def _importtime() -> tuple[set[str], int]:
    """Modules ``import wheeldoctor`` loaded, and its cumulative import time in microseconds."""
    done = _run(sys.executable, "import wheeldoctor", flags=("-X", "importtime"))
    assert done.returncode == 0, done.stderr
    loaded: set[str] = set()
    block: set[str] = set()
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.split("|")
        module = name.strip()
        block.add(module)
        if not name.startswith("  "):  # a top-level import closes its subtree
            if module == "wheeldoctor":
                return block, int(cumulative)
            loaded |= block
            block = set()
    raise AssertionError(f"no wheeldoctor line in:\n{done.stderr}")


def test_import_loads_nothing_heavy() -> None:
    modules, _ = _importtime()
    assert "wheeldoctor" in modules
    heavy = {m for m in modules if m.split(".")[0] in HEAVY or m in HEAVY}
    assert heavy == set()


def test_import_time_budget() -> None:
    # A measured budget the issue sets (15 ms); the minimum of 5 runs, to discount noise.
    times = [_importtime()[1] for _ in range(5)]
    assert min(times) < 15_000, times


def test_import_and_gate_have_no_side_effects(tmp_path: Path, venv: Venv) -> None:
    home, cache = tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    cache.mkdir()
    code = f"""
import json, sys, threading
before_threads = threading.active_count()
before = set(sys.modules)
import wheeldoctor
imported = sorted(set(sys.modules) - before)
after_import = threading.active_count()
sys.path.insert(0, {str(venv.site_packages)!r})
answer = wheeldoctor.is_intact("gate-good")
print(json.dumps([before_threads, after_import, threading.active_count(), answer, imported]))
"""
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(cache), "PYTHONDONTWRITEBYTECODE": "1"}
    done = _run(sys.executable, code, env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    before_threads, after_import, after_call, answer, imported = json.loads(done.stdout)
    assert answer is True
    assert before_threads == after_import == after_call
    assert {m for m in imported if m.split(".")[0] in HEAVY} == set()
    assert list(home.iterdir()) == []
    # The gate's one write: its verification cache, inside $XDG_CACHE_HOME/wheeldoctor (issue 5).
    written = [p.relative_to(cache) for p in cache.rglob("*")]
    assert all(p.parts[0] == "wheeldoctor" for p in written), written


# --------------------------------------------------------------------------
# regressions found in review
# --------------------------------------------------------------------------


def test_egg_info_file_is_not_intact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A distutils-style install: one PKG-INFO file, no RECORD, so nothing can vouch for it.
    (tmp_path / "legacyfoo-1.0-py3.11.egg-info").write_text("Metadata-Version: 1.0\nName: legacyfoo\nVersion: 1.0\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert IntactGate()("legacyfoo") is False


def test_record_fifo_does_not_hang_the_gate(tmp_path: Path, venv: Venv) -> None:
    site = tmp_path / "site"
    site.mkdir()
    info = site / "fifo_dist-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fifo-dist\nVersion: 1.0\n")
    os.mkfifo(info / "RECORD")
    code = (
        f"import sys; sys.path.insert(0, {str(site)!r}); import wheeldoctor; print(wheeldoctor.is_intact('fifo-dist'))"
    )
    done = _run(sys.executable, code, env={"WHEELDOCTOR_CACHE_DIR": str(tmp_path / "cache")})
    assert (done.returncode, done.stdout.strip()) == (0, "False"), done.stderr


def test_symlinked_site_packages(tmp_path: Path, uv_bin: Path) -> None:
    # Homebrew-style: site-packages is a link. pip writes ../../../bin paths from the link's name.
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    real = tmp_path / "elsewhere" / "site-packages"
    real.parent.mkdir()
    venv.site_packages.rename(real)
    venv.site_packages.symlink_to(real)
    wheel = build_wheel(
        tmp_path / "w", "linked", "1.0", {"linked/__init__.py": b"X = 1\n"}, console_scripts={"linked": "linked:main"}
    )
    pip_install(venv, "--no-index", "--no-deps", wheel)
    done = _run(venv.python, "import wheeldoctor; print(wheeldoctor.is_intact('linked'))")
    assert done.stdout.strip() == "True", done.stderr
    check = subprocess.run(
        [sys.executable, "-m", "wheeldoctor", "check", "linked", "--python", str(venv.python)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_relative_sys_path_entries_follow_the_working_directory(
    tmp_path: Path, venv: Venv, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setattr(sys, "path", ["", *sys.path])
    gate = IntactGate()
    monkeypatch.chdir(venv.site_packages)
    assert gate("gate-good") is True
    monkeypatch.chdir(empty)  # same sys.path, another directory: another environment
    monkeypatch.setattr(sys, "path", ["", *[p for p in sys.path if p != str(venv.site_packages)]])
    assert gate("gate-good") is False


def test_cache_clear_during_a_check_is_not_undone(on_path: Venv, monkeypatch: pytest.MonkeyPatch) -> None:
    real = wheeldoctor.gate.predicate._check
    calls: list[str] = []
    gate = IntactGate()

    def clearing(key: str, search_path: tuple[str, ...]) -> bool:
        calls.append(key)
        if len(calls) == 1:
            gate.cache_clear()  # as another thread would, mid-check
        return real(key, search_path)

    monkeypatch.setattr(wheeldoctor.gate.predicate, "_check", clearing)
    assert gate("gate-good") is True
    assert gate("gate-good") is True
    assert calls == ["gate_good", "gate_good"]  # the first answer was not kept past the clear

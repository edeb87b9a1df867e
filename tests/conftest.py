"""Shared fixtures: the uv binary, an isolated uv cache, venv and wheel factories."""

from __future__ import annotations

import compileall
import os
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

import wheeldoctor

_TESTS_DIR = str(Path(__file__).resolve().parent)
if _TESTS_DIR not in sys.path:  # make `import helpers` work under any --import-mode
    sys.path.insert(0, _TESTS_DIR)

from helpers import (  # noqa: E402
    UV_CACHE_ENV,
    Venv,
    VenvFactory,
    WheelFactory,
    build_wheel,
    find_uv,
    make_venv,
)
from variants import Wheels, build_variant_wheels  # noqa: E402


@pytest.fixture(scope="session")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Wheels:
    """The base and overlay variant wheels of tests/variants.py, built once."""
    return build_variant_wheels(tmp_path_factory.mktemp("variant-wheels"))


def pytest_configure(config: pytest.Config) -> None:
    """Register custom markers."""
    config.addinivalue_line("markers", "network: test downloads from PyPI (needs network access)")
    config.addinivalue_line("markers", "slow: starts heavy machinery (a local Ray cluster); -m 'not slow' skips it")
    config.addinivalue_line(
        "markers", "unit: pure and fast (judgement, parsing, planning on data): no venv, no subprocess, no fork"
    )


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (pyproject's addopts): none for ``-m unit``, else pytest-xdist's own count.

    The unit tests start no process; workers would only collect the suite again.
    """
    return 0 if config.getoption("markexpr") == "unit" else None


@pytest.fixture(scope="session")
def uv_bin() -> Path:
    """Path of the ``uv`` binary (from the ``uv`` PyPI package, else ``$PATH``)."""
    return find_uv()


@pytest.fixture(scope="session", autouse=True)
def uv_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Per-session uv cache dir, exported as ``UV_CACHE_DIR`` for the whole session.

    Autouse so no test (or wheeldoctor subprocess) ever touches the user's cache.
    """
    cache = tmp_path_factory.mktemp("uv-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(UV_CACHE_ENV, str(cache))
        yield cache


@pytest.fixture(scope="session", autouse=True)
def wheeldoctor_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Per-session ``WHEELDOCTOR_CACHE_DIR``: no test (or subprocess) writes the user's cache."""
    cache = tmp_path_factory.mktemp("wheeldoctor-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WHEELDOCTOR_CACHE_DIR", str(cache))
        mp.delenv("WHEELDOCTOR_NO_CACHE", raising=False)
        yield cache


@pytest.fixture(scope="session", autouse=True)
def bytecode() -> None:
    """wheeldoctor's modules compiled once per session, beside their sources as any import writes them.

    The suite starts ``python -m wheeldoctor`` many times. Where ``PYTHONDONTWRITEBYTECODE`` is
    set (some machines set it), each of those would compile every module it imports from source
    again; existing byte-code is still read. The installers and the environments the tests
    inspect are left as they are (their byte-code is part of what is tested).
    """
    compileall.compile_dir(Path(wheeldoctor.__file__).parent, quiet=1)


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh cache directory of this test's own (not created yet), for this process and the runs it starts."""
    directory = tmp_path / "wd-cache"
    monkeypatch.setenv("WHEELDOCTOR_CACHE_DIR", str(directory))
    return directory


@pytest.fixture
def venv_factory(tmp_path: Path, uv_bin: Path, uv_cache: Path) -> VenvFactory:
    """Callable ``(name="venv", python=sys.executable) -> Venv`` creating ``tmp_path/name``."""

    def factory(name: str = "venv", python: str | Path = sys.executable) -> Venv:
        return make_venv(tmp_path / name, python, uv_bin=uv_bin, cache_dir=uv_cache)

    return factory


@pytest.fixture
def wheel_factory(tmp_path: Path) -> WheelFactory:
    """:func:`helpers.build_wheel` writing into ``tmp_path / "wheels"``."""
    factory: WheelFactory = partial(build_wheel, tmp_path / "wheels")
    return factory


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pids of the children ``os.fork`` makes during the test (it forks as ever)."""
    made: list[int] = []
    real_fork = os.fork

    def counting_fork() -> int:
        pid = real_fork()
        if pid:
            made.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counting_fork)
    return made

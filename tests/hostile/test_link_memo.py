"""WD008 with the link memo: a directory turned into a link out of the environment after a warm run is found.

The memo keeps "no directory on the recorded paths is a link" with the fingerprints of
the directories holding them (``wheeldoctor.engine.verify._link_memo``). The attack moves a
recorded directory out of the environment and links it back: every file keeps its
inode, bytes and times, so the cache's verdicts all hold, and only the directories'
check can see the link.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from helpers import VenvFactory, WheelFactory, uv_install

from wheeldoctor.engine import verify
from wheeldoctor.engine.verify import Verification, verify_environment
from wheeldoctor.model.fingerprint import SETTLE_NS
from wheeldoctor.where import links
from wheeldoctor.where.environment import load_environment

DEEP = {
    "deep/__init__.py": b"",
    "deep/sub/__init__.py": b"A = 1\n",
    "deep/sub/inner/b.py": b"B = 2\n",
    "deep/other/c.py": b"C = 3\n",
}


def _verify(site: Path, prefix: Path, cache_dir: Path, processes: bool) -> Verification:
    env = load_environment("test", [str(site)], [str(prefix)])
    return verify_environment(env.active(), env.active(), jobs=2, processes=processes, cache_dir=str(cache_dir))


def _found(verification: Verification) -> set[tuple[str, str]]:
    return {(f.code.value, f.path) for r in verification.reports for f in r.findings}


def _settle() -> None:
    """Wait until just-written files and directories are old enough to be kept (see ``SETTLE_NS``)."""
    time.sleep(2 * SETTLE_NS / 1e9)


@pytest.mark.parametrize("processes", [False, True], ids=["threads", "workers"])
def test_a_directory_linked_out_after_a_warm_run_is_reported(
    venv_factory: VenvFactory,
    wheel_factory: WheelFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    processes: bool,
) -> None:
    if processes:
        if not sys.platform.startswith("linux"):
            pytest.skip("forked workers are Linux-only")
        monkeypatch.setattr(verify, "PROCESS_MIN_FILES", 1)
    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel_factory("deep", "1.0", DEEP))
    site, cache_dir = venv.site_packages, tmp_path / "cache"
    _settle()
    assert _found(_verify(site, venv.prefix, cache_dir, processes)) == set()
    assert list(cache_dir.glob("*.links"))  # nothing was a link: kept

    looked: list[str] = []
    real = links._is_link
    monkeypatch.setattr(links, "_is_link", lambda path: looked.append(path) or real(path))
    assert _found(_verify(site, venv.prefix, cache_dir, processes)) == set()
    directories = {str(site / d) for d in ("deep", "deep/sub", "deep/sub/inner", "deep/other")}
    assert not directories & set(looked)  # the memo held: no directory was lstat-ed again

    outside = tmp_path / "outside"
    outside.mkdir()
    os.rename(site / "deep/sub", outside / "sub")  # same inodes: every file's fingerprint is unchanged
    (site / "deep/sub").symlink_to(outside / "sub")
    looked.clear()
    found = _found(_verify(site, venv.prefix, cache_dir, processes))
    assert found == {("WD008", "deep/sub/__init__.py"), ("WD008", "deep/sub/inner/b.py")}
    assert str(site / "deep/sub") in looked


def test_no_memo_without_a_cache_or_with_an_unsettled_record(
    venv_factory: VenvFactory, wheel_factory: WheelFactory
) -> None:
    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel_factory("deep", "1.0", DEEP))
    env = load_environment("test", [str(venv.site_packages)], [str(venv.prefix)])
    [dist] = env.active()
    assert verify._link_memo(None, [(dist, (1, 2, 3, 4, 5))]) is None
    assert verify._link_memo("/nonexistent", [(dist, None)]) is None

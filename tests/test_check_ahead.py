"""The biggest files proved while ``check --all`` starts: the same verification, whatever the child did."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import VenvFactory, WheelFactory, uv_install

from wheeldoctor.checks import ahead, files, spread, spread_worker
from wheeldoctor.checks.files import Verification, verify_environment
from wheeldoctor.disk import hashing, proof_workers
from wheeldoctor.where import plain_rows
from wheeldoctor.where.environment import load_environment

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked workers are Linux-only")

#: Files of 1 MiB or more: big enough to be proved ahead once EARLY is lowered to 1 MiB.
BIG = {f"big/b{i:02d}.so": bytes([65 + i]) * ((1 << 20) + i) for i in range(8)}
SMALL = {f"big/s{i:02d}.py": f"VALUE = {i}\n".encode() * 50 for i in range(20)}


def _comparable(verification: Verification) -> tuple[object, ...]:
    reports = [(r.name, r.status, r.findings) for r in verification.reports]
    return reports, dict(verification.states), {p: [c.row for c in cs] for p, cs in verification.owners.items()}


@pytest.mark.parametrize("case", ["done", "in flight", "dies", "at once"])
def test_files_proved_ahead_give_the_same_verification(
    venv_factory: VenvFactory,
    wheel_factory: WheelFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    forks: list[int],
    case: str,
) -> None:
    """The child proves the big files before the verification starts, or is still hashing one when it does,
    or dies on one, or is stopped before it has started any: the verification is the exact path's every time,
    and a file is proved once, by the child where it could, else by a worker."""
    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel_factory("big", "1.0", {**BIG, **SMALL}))
    site = venv.site_packages
    (site / "big/b01.so").write_bytes(b"X" * len(BIG["big/b01.so"]))  # same size, other bytes
    (site / "big/b02.so").unlink()
    os.mkfifo(site / "big/b02.so")
    (site / "big/b03.so").unlink()
    (site / "big/b03.so").symlink_to(site / "big/b04.so")  # another file's bytes, through a link
    env = load_environment("test", [str(site)], [str(venv.prefix)], defer_records=True)
    exact = verify_environment(env.active(), env.active(), jobs=2, processes=False)

    monkeypatch.setattr(plain_rows, "EARLY", 1 << 20)
    monkeypatch.setattr(spread_worker, "EARLY", 1 << 20)
    monkeypatch.setattr(hashing, "PROCESS_MIN_FILES", 1)
    slow = str(site / "big/b07.so")
    real_prove = proof_workers.prove_file

    def child_prove(path: str, *args: object) -> object:  # the child's (it forks with this in place)
        if path == slow and case == "in flight":
            time.sleep(1.0)
        if path == slow and case == "dies":
            os._exit(3)
        return real_prove(path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(proof_workers, "prove_file", child_prove)
    ahead.start(str(venv.python), 4, True)
    monkeypatch.setattr(proof_workers, "prove_file", real_prove)  # the workers' own
    stops: list[tuple[object, ...]] = []
    real_stop = ahead.Ahead.stop
    monkeypatch.setattr(ahead.Ahead, "stop", lambda self: stops.append(real_stop(self)) or stops[-1])
    sent: list[tuple[object, ...]] = []
    real_write = spread._write
    monkeypatch.setattr(spread, "_write", lambda fd, task: sent.append(task) or real_write(fd, task))
    judged_here: list[str] = []
    real_hash = files.hash_claims
    monkeypatch.setattr(files, "hash_claims", lambda exact, **kw: judged_here.extend(exact) or real_hash(exact, **kw))
    if case != "at once":
        time.sleep({"done": 2.0, "in flight": 0.5, "dies": 1.0}[case])

    proven = verify_environment(env.active(), env.active(), jobs=4, processes=True)
    assert _comparable(proven) == _comparable(exact)
    assert {(f.code.value, f.path) for r in proven.reports for f in r.findings} == {
        ("WD001", "big/b01.so"),
        ("WD004", "big/b02.so"),
        ("WD002", "big/b03.so"),
    }
    assert ahead.take() is None  # taken by the verification, and ended
    assert len(stops) == 1
    done, in_flight, _ = stops[0]  # type: ignore[misc]
    by_child = {key[0] for key, (proof, _) in done.items() if proof is not None}
    by_workers = {str(task[3]) for task in sent if task[0] == "early"}
    by_workers |= {path for task in sent if task[0] == "prove" for path in task[3]}  # type: ignore[attr-defined]
    intact = {str(site / f"big/b{i:02d}.so") for i in (0, 4, 5, 6, 7)}
    assert intact.isdisjoint(judged_here)  # every intact big file was proved, by the child or a worker
    assert not by_child & by_workers  # and only once
    if case == "done":
        assert intact <= by_child
    elif case == "in flight":
        assert {key[0] for key in in_flight} == {slow}
        assert slow not in by_workers  # the child's result came after the verification began
    elif case == "dies":
        assert slow in by_workers
    child_pids = [pid for pid in forks if pid not in {0}]
    for pid in child_pids:  # the child and every worker are reaped
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_a_check_started_from_the_command_line_proves_ahead_and_says_the_same(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, tmp_path: Path
) -> None:
    """``check --all`` as a user runs it (the child forked before the app is imported, ``--jobs 4``) against
    ``--jobs 1`` (no child): the same JSON, findings included."""
    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel_factory("big", "1.0", {"big/huge.so": b"H" * (17 << 20), **SMALL}))
    (venv.site_packages / "big/s01.py").write_bytes(b"changed\n")

    def check(*extra: str) -> dict[str, object]:
        done = subprocess.run(
            [sys.executable, "-m", "wheeldoctor", "check", "--all", "--python", str(venv.python), "--json", *extra],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd=tmp_path,
            env={**os.environ, "WHEELDOCTOR_CACHE_DIR": str(tmp_path / "cache")},
        )
        assert done.returncode == 1, done.stderr
        report: dict[str, object] = json.loads(done.stdout)
        report.pop("generated", None)
        return report

    assert check("--no-cache", "--jobs", "4") == check("--no-cache", "--jobs", "1")
    first = check("--jobs", "4")  # an empty cache: proved ahead, then kept
    assert first == check("--jobs", "4") == check("--no-cache", "--jobs", "1")


def test_a_file_the_child_proved_just_after_it_changed_is_not_cached(
    venv_factory: VenvFactory,
    wheel_factory: WheelFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    forks: list[int],
) -> None:
    """The child's proofs are kept in the cache by the workers' rule: not a file changed in the tick it was read."""
    from wheeldoctor.disk import cache

    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel_factory("big", "1.0", {**BIG, **SMALL}))
    site = venv.site_packages
    time.sleep(0.1)  # past the settle window: only what changes from now on is too recent
    cache_dir = str(tmp_path / "cache")
    monkeypatch.setenv("WHEELDOCTOR_CACHE_DIR", cache_dir)
    monkeypatch.setattr(plain_rows, "EARLY", 1 << 20)
    monkeypatch.setattr(spread_worker, "EARLY", 1 << 20)
    monkeypatch.setattr(hashing, "PROCESS_MIN_FILES", 1)
    touched = str(site / "big/b00.so")
    real_prove = proof_workers.prove_file

    def child_prove(path: str, *args: object) -> object:  # the child's: the same bytes, written again now
        if path == touched:
            Path(path).write_bytes(BIG["big/b00.so"])
        return real_prove(path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(proof_workers, "prove_file", child_prove)
    ahead.start(str(venv.python), 4, False)
    monkeypatch.setattr(proof_workers, "prove_file", real_prove)
    stops: list[tuple[object, ...]] = []
    real_stop = ahead.Ahead.stop
    monkeypatch.setattr(ahead.Ahead, "stop", lambda self: stops.append(real_stop(self)) or stops[-1])
    time.sleep(1.5)
    env = load_environment("test", [str(site)], [str(venv.prefix)], defer_records=True)
    proven = verify_environment(env.active(), env.active(), jobs=4, cache_dir=cache_dir, processes=True)
    assert [r.findings for r in proven.reports] == [()]
    done = stops[0][0]
    assert {key[0] for key in done} == {str(site / name) for name in BIG}  # type: ignore[attr-defined]
    dist_path = str(venv.dist_info("big"))
    entry = cache.load(cache_dir, dist_path, cache.record_identity(dist_path))  # type: ignore[arg-type]
    assert entry is not None
    kept = {path for path, _, _ in entry.files}
    assert touched not in kept
    assert {str(site / name) for name in BIG} - {touched} <= kept

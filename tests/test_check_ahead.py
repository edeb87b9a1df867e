"""The biggest files proved while ``check --all`` starts: the same verification, whatever the child did."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import VenvFactory, WheelFactory, uv_install

from wheeldoctor.engine import ahead, hashing, proof_workers, spread, spread_worker
from wheeldoctor.engine import verify as files
from wheeldoctor.engine.verify import Verification, verify_environment
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
    time.sleep(0.1)  # past the settle window: a file the child reads sooner is proved again (tested below)
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


Between = Callable[[Path], None]


def _with_a_child(
    venv_factory: VenvFactory,
    wheel_factory: WheelFactory,
    monkeypatch: pytest.MonkeyPatch,
    child_prove: Callable[..., object] | None = None,
    between: Between | None = None,
    cache_dir: str | None = None,
) -> tuple[Verification, Verification, list[tuple[object, ...]], Path]:
    """(exact path, forked workers with the child, the tasks sent to workers, the site dir) over BIG and
    SMALL: ``child_prove`` is the child's ``prove_file``; ``between(site)`` runs once the child is done."""
    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel_factory("big", "1.0", {**BIG, **SMALL}))
    site = venv.site_packages
    time.sleep(0.1)  # past the settle window: only what changes from now on is too recent
    monkeypatch.setattr(plain_rows, "EARLY", 1 << 20)
    monkeypatch.setattr(spread_worker, "EARLY", 1 << 20)
    monkeypatch.setattr(hashing, "PROCESS_MIN_FILES", 1)
    real_prove = proof_workers.prove_file
    if child_prove is not None:
        monkeypatch.setattr(proof_workers, "prove_file", child_prove)
    ahead.start(str(venv.python), 4, cache_dir is None)
    monkeypatch.setattr(proof_workers, "prove_file", real_prove)
    sent: list[tuple[object, ...]] = []
    real_write = spread._write
    monkeypatch.setattr(spread, "_write", lambda fd, task: sent.append(task) or real_write(fd, task))
    time.sleep(1.5)
    if between is not None:
        between(site)
    env = load_environment("test", [str(site)], [str(venv.prefix)], defer_records=True)
    proven = verify_environment(env.active(), env.active(), jobs=4, cache_dir=cache_dir, processes=True)
    exact = verify_environment(env.active(), env.active(), jobs=2, processes=False)  # after: it ends a child
    return exact, proven, sent, site


def _early_tasks(sent: list[tuple[object, ...]]) -> set[str]:
    return {str(task[3]) for task in sent if task[0] == "early"}


def test_a_file_changed_after_the_child_proved_it_is_proved_again(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, monkeypatch: pytest.MonkeyPatch, forks: list[int]
) -> None:
    """The child's proof is older than the verification: a file changed since (here: other bytes of the same
    size) has another fingerprint, so a worker proves it again, and it is found altered."""

    def alter(site: Path) -> None:
        path = site / "big/b05.so"
        path.write_bytes(b"Z" * path.stat().st_size)

    exact, proven, sent, site = _with_a_child(venv_factory, wheel_factory, monkeypatch, between=alter)
    assert _comparable(proven) == _comparable(exact)
    assert [(f.code.value, f.path) for r in proven.reports for f in r.findings] == [("WD001", "big/b05.so")]
    assert _early_tasks(sent) == {str(site / "big/b05.so")}  # every other big file: the child's proof


def test_a_file_the_child_read_just_after_it_changed_is_proved_again_and_then_cached(
    venv_factory: VenvFactory,
    wheel_factory: WheelFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    forks: list[int],
) -> None:
    """A file changed in the tick the child read it could change again unseen (the cache's rule): its proof
    is not taken; a worker proves it again, and the cache keeps what the workers and the child proved."""
    from wheeldoctor.engine import cache

    touched: list[str] = []
    real_prove = proof_workers.prove_file

    def child_prove(path: str, *args: object) -> object:  # the child's: the same bytes, written again now
        if path.endswith("big/b00.so"):
            touched.append(path)
            Path(path).write_bytes(BIG["big/b00.so"])
        return real_prove(path, *args)  # type: ignore[arg-type]

    cache_dir = str(tmp_path / "cache")
    monkeypatch.setenv("WHEELDOCTOR_CACHE_DIR", cache_dir)
    exact, proven, sent, site = _with_a_child(
        venv_factory, wheel_factory, monkeypatch, child_prove=child_prove, cache_dir=cache_dir
    )
    assert [r.findings for r in proven.reports] == [()]
    assert _comparable(proven) == _comparable(exact)
    assert _early_tasks(sent) == {str(site / "big/b00.so")}
    dist_path = str(site / "big-1.0.dist-info")
    entry = cache.load(cache_dir, dist_path, cache.record_identity(dist_path))  # type: ignore[arg-type]
    assert entry is not None
    kept = {path: identity for path, identity, _ in entry.files}
    assert {str(site / name) for name in BIG} <= set(kept)
    assert kept[str(site / "big/b00.so")] == cache.identity(os.stat(site / "big/b00.so"))


def _frame(value: object) -> bytes:
    import marshal

    payload = marshal.dumps(value)
    return len(payload).to_bytes(4, "big") + payload


def test_what_the_child_sends_with_stopped_is_taken(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, monkeypatch: pytest.MonkeyPatch, forks: list[int]
) -> None:
    """A file the child finishes as it stops comes in the same read as "stopped": its proof is taken at once,
    not left unread in the buffer (a worker proving the file again, after waiting for the child's exit)."""
    from wheeldoctor.engine.digests import BUFFER_SIZE
    from wheeldoctor.where.plain_rows import biggest_rows

    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel_factory("big", "1.0", {"big/b00.so": BIG["big/b00.so"], **SMALL}))
    site = venv.site_packages
    time.sleep(0.1)
    monkeypatch.setattr(spread_worker, "EARLY", 1 << 20)
    monkeypatch.setattr(hashing, "PROCESS_MIN_FILES", 1)
    record = (venv.dist_info("big") / "RECORD").read_text()
    (key,) = biggest_rows(record, str(site), str(venv.prefix), 1 << 20)
    control_read, control_write = os.pipe()
    results_read, results_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # a child speaking the real one's protocol, its last proof in one write with "stopped"
        os.close(control_write)
        os.close(results_read)
        proved = proof_workers.prove_file(
            *key[:1], key[3], key[1], key[2], None, memoryview(bytearray(BUFFER_SIZE)), {}
        )
        os.read(control_read, 1)
        assert proved is not None
        os.write(results_write, _frame(("stopped", [key])) + _frame(("proved ahead", *key, proved[0], True)))
        time.sleep(3)
        os._exit(0)
    os.close(control_read)
    os.close(results_write)
    ahead._running.append(ahead.Ahead(pid, control_write, results_read))
    sent: list[tuple[object, ...]] = []
    real_write = spread._write
    monkeypatch.setattr(spread, "_write", lambda fd, task: sent.append(task) or real_write(fd, task))
    env = load_environment("test", [str(site)], [str(venv.prefix)], defer_records=True)
    began = time.monotonic()
    proven = verify_environment(env.active(), env.active(), jobs=4, processes=True)
    assert time.monotonic() - began < 2  # not waiting for the child's exit
    assert [r.findings for r in proven.reports] == [()]
    assert not _early_tasks(sent)
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # ended and reaped


def test_a_verification_that_reads_every_file_itself_ends_the_child(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, monkeypatch: pytest.MonkeyPatch, forks: list[int]
) -> None:
    """Too few files for workers: the exact path reads them all, and the child (which would read the big
    ones a second time) is ended at once, with its probe."""
    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel_factory("big", "1.0", {**BIG, **SMALL}))
    ahead.start(str(venv.python), 4, True)
    (child,) = ahead._running
    monkeypatch.setattr(hashing, "PROCESS_MIN_FILES", 10**9)
    env = load_environment("test", [str(venv.site_packages)], [str(venv.prefix)], defer_records=True)
    proven = verify_environment(env.active(), env.active(), jobs=4, processes=True)
    assert [r.findings for r in proven.reports] == [()]
    assert ahead.take() is None
    with pytest.raises(ChildProcessError):
        os.waitpid(child.pid, os.WNOHANG)


def test_ending_the_child_ends_its_probe(tmp_path: Path) -> None:
    """A ``--python`` that never answers: the command, ending (exit 2 or done), ends the child and its probe."""
    hanging = tmp_path / "python"
    hanging.write_text("#!/bin/sh\nexec sleep 60\n")
    hanging.chmod(0o755)
    ahead.start(str(hanging), 4, True)
    child = ahead.take()
    assert child is not None
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(_group(child.pid)) < 2:
        time.sleep(0.05)  # the child, then its probe
    assert len(_group(child.pid)) == 2
    child.close()
    assert _group(child.pid) == []


def _group(pgid: int) -> list[int]:
    """The live processes of process group ``pgid`` (zombies left out)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rpartition(")")[2].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.append(int(entry))
    return found

"""The one verification pipeline: forked workers and threads find the same; the heaviest work first."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from helpers import Venv, VenvFactory, WheelFactory, uv_install

from wheeldoctor.engine import tasks, verify
from wheeldoctor.engine.executors import Workers
from wheeldoctor.engine.schedule import Schedule, look_batches
from wheeldoctor.engine.tasks import Context, rows_estimate
from wheeldoctor.engine.verify import Verification, repeated, verify_environment
from wheeldoctor.judge.claims import resolve
from wheeldoctor.where.environment import Reading, load_environment

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked workers are Linux-only")

FILES = {f"proven/m{i:02d}.py": (f"VALUE = {i}\n" * (i * 700 + 1)).encode() for i in range(30)}
SHARED = {"proven/shared.txt": b"first\n"}


def _verify(site: Path, prefix: Path, processes: bool, jobs: int = 2) -> Verification:
    env = load_environment("test", [str(site)], [str(prefix)])
    return verify_environment(env.active(), env.active(), jobs=jobs, processes=processes)


def _damage(site: Path, files: dict[str, bytes], name: str, tmp_path: Path, loop: bool = True) -> None:
    """The files ``name`` numbers 1 to 9: other bytes of the same size, shorter, missing, a FIFO, another
    file's bytes through a link, a directory, a symlink loop (where ``loop``), the right bytes through a link."""
    path = [site / name.format(i) for i in range(10)]
    path[1].write_bytes(b"X" * len(files[name.format(1)]))
    path[2].write_bytes(files[name.format(2)][:-1])
    path[3].unlink()
    path[4].unlink()
    os.mkfifo(path[4])
    path[5].unlink()
    path[5].symlink_to(path[6])
    path[7].unlink()
    path[7].mkdir()
    if loop:
        path[8].unlink()
        path[8].symlink_to(path[8].name)
    (tmp_path / "outside").write_bytes(files[name.format(9)])
    path[9].unlink()
    path[9].symlink_to(tmp_path / "outside")


def _comparable(verification: Verification) -> tuple[object, ...]:
    reports = [(r.name, r.status, r.findings) for r in verification.reports]
    return reports, dict(verification.states), {p: [c.row for c in cs] for p, cs in verification.owners.items()}


@pytest.mark.parametrize("jobs", [2, 1])
def test_proofs_give_the_verification_the_exact_path_gives(
    venv_factory: VenvFactory,
    wheel_factory: WheelFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    forks: list[int],
    jobs: int,
) -> None:
    """The same with one job: a command spreads over one worker (a 1-CPU machine's default)."""
    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel_factory("proven", "1.0", {**FILES, **SHARED}))
    uv_install(venv, "--no-deps", wheel_factory("rival", "1.0", {"proven/shared.txt": b"second\n"}))
    site = venv.site_packages
    _damage(site, FILES, "proven/m{:02d}.py", tmp_path)
    exact = _verify(site, venv.prefix, processes=False)

    monkeypatch.setattr(verify, "PROCESS_MIN_FILES", 1)
    proven = _verify(site, venv.prefix, processes=True, jobs=jobs)
    assert len(forks) == jobs  # the workers ran, one a job
    assert _comparable(proven) == _comparable(exact)
    assert {(f.code.value, f.path, f.content_from) for r in proven.reports for f in r.findings} == {
        ("WD001", "proven/m01.py", None),
        ("WD002", "proven/m02.py", None),
        ("WD003", "proven/m03.py", None),
        ("WD004", "proven/m04.py", None),
        ("WD002", "proven/m05.py", None),
        ("WD004", "proven/m07.py", None),
        ("WD005", "proven/m08.py", None),
        ("WD008", "proven/m09.py", None),  # the right bytes, through a link out of the environment
        ("WD002", "proven/shared.txt", "rival"),
    }


@pytest.mark.parametrize("fault", ["look", "parse", "prove", "both"])
def test_a_worker_that_dies_leaves_its_work_to_the_parent(
    venv_factory: VenvFactory,
    wheel_factory: WheelFactory,
    monkeypatch: pytest.MonkeyPatch,
    forks: list[int],
    fault: str,
) -> None:
    """Workers that die looking at a distribution, reading a RECORD or proving a piece: the parent does that work."""
    parent = os.getpid()
    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel_factory("proven", "1.0", {**FILES, **SHARED}))
    uv_install(venv, "--no-deps", wheel_factory("rival", "1.0", {"proven/shared.txt": b"second\n"}))
    site = venv.site_packages
    (site / "proven/m01.py").write_bytes(b"X" * len(FILES["proven/m01.py"]))
    (site / "proven/m03.py").unlink()
    exact = _verify(site, venv.prefix, processes=False)

    real_look, real_parse, real_prove = Context.look, Context.parse, Context.prove

    def dying_look(self: Context, indices: list[int]) -> object:
        if os.getpid() != parent and any(self.dists[i].name == "proven" for i in indices):
            os._exit(3)
        return real_look(self, indices)

    def dying_parse(self: Context, index: int, **kwargs: bool) -> object:
        if os.getpid() != parent and self.dists[index].name == "proven":
            os._exit(3)  # the worker dies, as a crash or the OOM killer would end it
        return real_parse(self, index, **kwargs)

    def dying_prove(self: Context, *args: object) -> object:
        if os.getpid() != parent:
            os._exit(3)
        return real_prove(self, *args)  # type: ignore[arg-type]

    if fault == "look":
        monkeypatch.setattr(Context, "look", dying_look)
    if fault in ("parse", "both"):
        monkeypatch.setattr(Context, "parse", dying_parse)
    if fault in ("prove", "both"):
        monkeypatch.setattr(Context, "prove", dying_prove)
    monkeypatch.setattr(verify, "PROCESS_MIN_FILES", 1)
    proven = _verify(site, venv.prefix, processes=True)
    assert forks  # the workers ran (and died)
    assert _comparable(proven) == _comparable(exact)
    assert {(f.code.value, f.path) for r in proven.reports for f in r.findings} == {
        ("WD001", "proven/m01.py"),
        ("WD003", "proven/m03.py"),
        ("WD002", "proven/shared.txt"),
    }


def test_owners_hold_the_shared_paths_with_every_claimant(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, monkeypatch: pytest.MonkeyPatch, forks: list[int]
) -> None:
    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel_factory("proven", "1.0", {**FILES, **SHARED}))
    uv_install(venv, "--no-deps", wheel_factory("rival", "1.0", {"proven/shared.txt": b"second\n"}))
    monkeypatch.setattr(verify, "PROCESS_MIN_FILES", 1)
    env = load_environment("test", [str(venv.site_packages)], [str(venv.prefix)])
    recorded = {claim.path for dist in env.active() for claim in resolve(dist)[0]}
    for processes in (False, True):
        verification = _verify(venv.site_packages, venv.prefix, processes=processes)
        shared = str(venv.site_packages / "proven/shared.txt")
        assert list(verification.owners) == [shared]
        assert sorted(c.dist.name for c in verification.owners[shared]) == ["proven", "rival"]
        assert set(verification.states) == recorded  # every recorded path has its state


@pytest.mark.parametrize("warm", [False, True])
def test_progress_ends_where_it_said_it_would(
    venv_factory: VenvFactory,
    wheel_factory: WheelFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    forks: list[int],
    warm: bool,
) -> None:
    """The work announced once the RECORDs are read is the work the pieces (and the cache's lstats) report."""
    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel_factory("proven", "1.0", FILES))
    monkeypatch.setattr(verify, "PROCESS_MIN_FILES", 1)
    time.sleep(0.1)  # past the settle window: files (and RECORDs) changed just now are never cached
    env = load_environment("test", [str(venv.site_packages)], [str(venv.prefix)])
    cache_dir = str(tmp_path / "cache")
    if warm:
        verify_environment(env.active(), env.active(), jobs=2, cache_dir=cache_dir, processes=True)

    class Sink:
        def __init__(self) -> None:
            self.begun: list[tuple[int, int]] = []
            self.done = [0, 0]

        def begin(self, files: int, total_bytes: int) -> None:
            self.begun.append((files, total_bytes))

        def advance(self, files: int, done_bytes: int) -> None:
            self.done[0] += files
            self.done[1] += done_bytes

    sink = Sink()
    verification = verify_environment(
        env.active(), env.active(), jobs=2, cache_dir=cache_dir, processes=True, progress=sink
    )
    assert all(r.status.value == "intact" for r in verification.reports)
    assert forks
    assert len(sink.begun) == 1
    assert tuple(sink.done) == sink.begun[0]
    assert sink.begun[0][0] >= len(FILES)
    assert any(s.cached for s in verification.states.values()) is warm


def test_the_heaviest_work_is_handed_out_first(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The RECORD behind the biggest file is parsed first and that file proved next, before a long RECORD is parsed.

    One worker, so the order it is handed its tasks in is the order it logs them in.
    """
    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel_factory("huge", "1.0", {"huge/blob.bin": os.urandom(3 << 20)}))
    uv_install(venv, "--no-deps", wheel_factory("many", "1.0", {f"many/m{i:03d}.py": b"x = 1\n" for i in range(300)}))
    uv_install(venv, "--no-deps", wheel_factory("tiny", "1.0", {"tiny/__init__.py": b""}))
    log = tmp_path / "log"
    site = str(venv.site_packages) + os.sep
    real_parse, real_prove = Context.parse, Context.prove

    def parse(self: Context, index: int, **kwargs: bool) -> object:
        with open(log, "a") as out:
            out.write(f"parse {self.dists[index].name}\n")
        return real_parse(self, index, **kwargs)

    def prove(self: Context, task: tasks.Prove, scratch: tasks.Scratch) -> object:
        with open(log, "a") as out:
            out.write(f"prove {task.paths[0].removeprefix(site)}\n")
        return real_prove(self, task, scratch)

    monkeypatch.setattr(Context, "parse", parse)
    monkeypatch.setattr(Context, "prove", prove)
    dists = load_environment(
        "test", [str(venv.site_packages)], [str(venv.prefix)], reading=Reading(defer_records=True)
    ).active()
    assert sorted(d.name for d in dists) == ["huge", "many", "tiny"]
    context = Context(dists=dists, checked=[True] * 3, cache_dir=None, usable=False, started=time.time_ns(), links=True)
    schedule = Schedule(context.checked, look_batches([rows_estimate(d) for d in dists], range(3), 1), {})
    Workers(1).run(schedule, context.run)
    assert not schedule.adopt()  # nothing left undone
    for learnt in schedule.learnt:  # every row with a digest proved
        assert learnt is not None and learnt.rows is not None
        assert len(learnt.proofs) == sum(row.digest is not None for row in learnt.rows) > 0
    order = log.read_text().splitlines()
    assert order[:2] == ["parse huge", "prove huge/blob.bin"]
    first_of_many = next(i for i, task in enumerate(order) if task.startswith("prove many"))
    assert order.index("parse many") < first_of_many < order.index("parse tiny")


def test_the_heaviest_distribution_is_looked_at_first_and_alone() -> None:
    # Rows of a GPU stack in miniature: torch's 12,000 among many small ones.
    estimates = [12, 40, 11846, 3, 0, 700, 5043, 25, 9, 180, 64, 2, 1290, 33, 7, 0, 410, 18]
    batches = look_batches(estimates, range(len(estimates)), 2)
    assert batches[-1] == [2]  # pop() takes it first
    assert batches[-2] == [6]
    assert sorted(i for batch in batches for i in batch) == list(range(len(estimates)))
    cap = -(-len(estimates) // 4)
    assert all(0 < len(batch) <= cap for batch in batches)
    # Popped in order, the batches come heaviest first.
    weights = [sum(estimates[i] for i in batch) for batch in reversed(batches)]
    assert weights[:3] == sorted(weights, reverse=True)[:3]
    assert look_batches([], [], 4) == []
    assert look_batches([0, 0, 0], range(3), 16) == [[2], [1], [0]]  # nothing to weigh: one each
    assert look_batches(estimates, [0, 1, 3], 2) == [[3], [0], [1]]  # only those asked for


def test_the_paths_several_rows_claim_are_found_across_and_within_records() -> None:
    assert repeated([["/a", "/b"], ["/c"], []]) == set()
    assert repeated([["/a", "/b"], ["/c", "/b"], ["/d"]]) == {"/b"}
    assert repeated([["/a", "/x", "/a"], ["/c"]]) == {"/a"}  # a RECORD that lists a path twice


def _subpackage(venv_factory: VenvFactory, wheel_factory: WheelFactory) -> tuple[Venv, dict[str, bytes]]:
    """A venv holding ``proven`` with a dozen files in ``proven/sub``, and those files."""
    files = {f"proven/sub/m{i:02d}.py": f"VALUE = {i}\n".encode() for i in range(12)}
    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel_factory("proven", "1.0", {"proven/__init__.py": b"", **files}))
    return venv, files


def test_a_directory_moved_out_behind_a_link_is_wd008_while_the_cache_vouches_for_its_files(
    venv_factory: VenvFactory,
    wheel_factory: WheelFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    forks: list[int],
) -> None:
    """Each file under the link is still a regular file with its fingerprint (an lstat follows the
    directory link): only the directory's own lstat tells that the path leaves the environment."""
    venv, files = _subpackage(venv_factory, wheel_factory)
    site = venv.site_packages
    monkeypatch.setattr(verify, "PROCESS_MIN_FILES", 1)
    store = tmp_path / "cache"
    store.mkdir(mode=0o700)
    env = load_environment("test", [str(site)], [str(venv.prefix)])
    time.sleep(0.2)  # the files settle: the cache keeps them
    warm = verify_environment(env.active(), env.active(), jobs=2, processes=True, cache_dir=str(store))
    assert forks
    assert [r.findings for r in warm.reports] == [()]
    moved = tmp_path / "moved"
    os.rename(site / "proven/sub", moved)  # the files keep their inodes and ctimes
    (site / "proven/sub").symlink_to(moved)
    for cache_dir in (str(store), None):
        env = load_environment("test", [str(site)], [str(venv.prefix)])
        done = verify_environment(env.active(), env.active(), jobs=2, processes=True, cache_dir=cache_dir)
        found = {(f.code.value, f.path) for r in done.reports for f in r.findings}
        assert found == {("WD008", name) for name in files}, cache_dir
        assert all(str(moved) in f.message for r in done.reports for f in r.findings)


def test_without_a_cache_the_workers_look_for_directory_links_and_the_parent_does_not(
    venv_factory: VenvFactory,
    wheel_factory: WheelFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    forks: list[int],
) -> None:
    """No memo keeps the link check's answer without a cache: each RECORD's worker climbs its
    directories while the files hash, and the parent, once they are proved, looks at none. With
    a cache the parent climbs them itself, noting what it stats for the memo."""
    from wheeldoctor.where import links

    venv, files = _subpackage(venv_factory, wheel_factory)
    site = venv.site_packages
    moved = tmp_path / "moved"
    os.rename(site / "proven/sub", moved)
    (site / "proven/sub").symlink_to(moved)
    monkeypatch.setattr(verify, "PROCESS_MIN_FILES", 1)
    climbed: list[str] = []  # the parent's own: a forked worker appends to its copy
    real_below = links._below_link

    def counted_below(directory: str, *args: object) -> bool:
        climbed.append(directory)
        return real_below(directory, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(links, "_below_link", counted_below)
    store = tmp_path / "cache"
    store.mkdir(mode=0o700)
    for cache_dir in (None, str(store)):
        climbed.clear()
        env = load_environment("test", [str(site)], [str(venv.prefix)])
        done = verify_environment(env.active(), env.active(), jobs=2, processes=True, cache_dir=cache_dir)
        assert forks
        found = {(f.code.value, f.path) for r in done.reports for f in r.findings}
        assert found == {("WD008", name) for name in files}, cache_dir
        assert all(str(moved) in f.message for r in done.reports for f in r.findings)
        assert bool(climbed) is (cache_dir is not None), climbed

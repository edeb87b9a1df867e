"""The verification cache: reused only while fingerprints hold, and harmless when it is broken."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import Venv, build_wheel, make_venv, uv_install

import wheeldoctor
from wheeldoctor.engine import cache, verify
from wheeldoctor.engine.store import directory as cache_directory
from wheeldoctor.engine.verify import Verification, verify_environment
from wheeldoctor.gate import predicate as gate
from wheeldoctor.gate.predicate import IntactGate
from wheeldoctor.judge.files import Status
from wheeldoctor.model.environment import InstalledDistribution
from wheeldoctor.model.findings import Code
from wheeldoctor.model.record_fields import encode_digest
from wheeldoctor.model.sitedirs import lookup_key
from wheeldoctor.where.environment import load_environment, scan_location

REPO = Path(wheeldoctor.__file__).resolve().parent.parent
BIG = bytes(range(256)) * 6000  # over the small-file threshold
FILES = {
    "cachedemo/__init__.py": b"VALUE = 1\n",
    "cachedemo/data.bin": BIG,
    "cachedemo/sub/leaf.txt": b"leaf\n",
}
OTHER = {"otherdemo/__init__.py": b"OTHER = 2\n"}
ROOT_AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _settle() -> None:
    """Wait until just-written files are old enough to be cached (see cache.SETTLE_NS)."""
    time.sleep(2 * cache.SETTLE_NS / 1e9)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory, uv_bin: Path) -> Venv:
    """A venv read (never modified) by the tests: cachedemo and otherdemo, intact."""
    root = tmp_path_factory.mktemp("cache-shared")
    venv = make_venv(root / "venv", uv_bin=uv_bin)
    uv_install(venv, build_wheel(root, "cachedemo", "1.0", FILES), build_wheel(root, "otherdemo", "1.0", OTHER))
    _settle()
    return venv


@pytest.fixture
def own(tmp_path: Path, uv_bin: Path) -> Venv:
    """A venv of this test's own, free to modify."""
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    uv_install(venv, build_wheel(tmp_path, "cachedemo", "1.0", FILES), build_wheel(tmp_path, "otherdemo", "1.0", OTHER))
    _settle()
    return venv


@pytest.fixture(params=["threads", "workers"])
def processes(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, forks: list[int]) -> Iterator[bool]:
    """Verify with threads (as the gate does) or forked workers (as the command line does)."""
    if request.param == "threads":
        yield False
        return
    if not sys.platform.startswith("linux"):
        pytest.skip("forked workers are Linux-only")
    monkeypatch.setattr(verify, "PROCESS_MIN_FILES", 1)  # these venvs hold a handful of files
    yield True
    assert forks, "the workers never ran"


def check(
    venv: Venv, cache_dir: Path | None, name: str = "cachedemo", processes: bool = False, jobs: int = 2
) -> tuple[InstalledDistribution, Verification]:
    """Verify one distribution in-process, as ``wheeldoctor check`` does."""
    env = load_environment("test", [str(venv.site_packages)], [str(venv.prefix)])
    dist = env.find(name)
    assert dist is not None
    cache_path = None if cache_dir is None else str(cache_dir)
    return dist, verify_environment([dist], env.active(), jobs=jobs, cache_dir=cache_path, processes=processes)


def entry_file(cache_dir: Path, dist: InstalledDistribution) -> Path:
    return Path(cache.entry_path(str(cache_dir), dist.path))


def read_entry(cache_dir: Path, dist: InstalledDistribution) -> cache.Entry:
    entry = cache.decode(entry_file(cache_dir, dist).read_bytes())
    assert entry is not None
    return entry


GATE = """
import json, sys
import wheeldoctor
answers = [wheeldoctor.is_intact(n) for n in sys.argv[1:]]
heavy = ("wheeldoctor.gate.quick", "wheeldoctor.judge.files", "wheeldoctor.where.environment")
loaded = [m for m in heavy if m in sys.modules]
print(json.dumps([answers, loaded]))
"""


#: What a cold gate loads for a plain RECORD: its stdlib-only path, never the verifier.
COLD = ["wheeldoctor.gate.quick"]


def gate_process(venv: Venv, env: dict[str, str], *names: str, cwd: Path | None = None) -> tuple[list[bool], list[str]]:
    """``is_intact`` in a new process of the venv's own interpreter: answers, heavy modules loaded.

    Nothing may appear on stdout but the answer, nor anything on stderr.
    """
    full = {**os.environ, "PYTHONPATH": str(REPO), **env}
    argv = [str(venv.python), "-c", GATE, *names]
    done = subprocess.run(argv, capture_output=True, text=True, env=full, cwd=cwd, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    answers, loaded = json.loads(done.stdout)
    return answers, loaded


# --------------------------------------------------------------------------
# location and format
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"WHEELDOCTOR_NO_CACHE": "1", "WHEELDOCTOR_CACHE_DIR": "/c"}, None),
        ({"WHEELDOCTOR_NO_CACHE": "yes"}, None),
        ({"WHEELDOCTOR_NO_CACHE": "0", "WHEELDOCTOR_CACHE_DIR": "/c"}, "/c"),
        ({"WHEELDOCTOR_NO_CACHE": "", "WHEELDOCTOR_CACHE_DIR": "/c"}, "/c"),
        ({"WHEELDOCTOR_CACHE_DIR": "/c", "XDG_CACHE_HOME": "/x"}, "/c"),
        ({"XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/x/wheeldoctor"),
        ({"XDG_CACHE_HOME": "relative/x", "HOME": "/h"}, "/h/.cache/wheeldoctor"),
        ({"HOME": "/h"}, "/h/.cache/wheeldoctor"),
    ],
)
def test_directory(environ: dict[str, str], expected: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("WHEELDOCTOR_NO_CACHE", "WHEELDOCTOR_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    assert cache_directory() == expected


def test_relative_cache_dir_is_made_absolute(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WHEELDOCTOR_CACHE_DIR", "rel")
    assert cache_directory() == str(tmp_path / "rel")


def _entry() -> cache.Entry:
    fingerprint = (5, 10**18, 10**18 + 1, 42, 7)
    return cache.Entry(
        "/site/x-1.dist-info", (100, 1, 2, 3, 4), "/", (("/site/x/a.py", fingerprint, (("sha256", b"\x01" * 32),)),)
    )


def test_encode_decode_round_trip() -> None:
    entry = _entry()
    assert cache.decode(cache.encode(entry)) == entry


def test_truncated_entries_are_misses() -> None:
    data = cache.encode(_entry())
    assert all(cache.decode(data[:cut]) is None for cut in range(len(data)))


def test_any_flipped_byte_is_a_miss() -> None:
    data = bytearray(cache.encode(_entry()))
    for i in range(len(data)):
        flipped = bytearray(data)
        flipped[i] ^= 0x10
        assert cache.decode(bytes(flipped)) is None, i


@pytest.mark.parametrize(
    "header",
    [
        b"wheeldoctor-cache %d %s\n" % (cache.FORMAT + 1, sys.implementation.cache_tag.encode()),  # another format
        b"wheeldoctor-cache 1 cpython-299\n",  # another Python's marshal
        b"wheeldoctor-cache %d %s\n" % (cache.FORMAT, sys.implementation.cache_tag.encode()),  # no code named
        b"wheeldoctor-cache %d %s 0123456789abcdef\n" % (cache.FORMAT, sys.implementation.cache_tag.encode()),
        b"",
    ],
)
def test_foreign_entries_are_misses(header: bytes) -> None:
    data = cache.encode(_entry())
    ours = data.index(b"\n") + 1
    assert data[:ours] != header
    assert cache.decode(header + data[ours:]) is None


def test_the_code_that_judged_an_entry_is_in_its_header_and_changes_with_any_source_of_the_judging_stages(
    tmp_path: Path,
) -> None:
    """Another version's verdicts are misses: a rule it lacked (a link out, say) must see every file again.

    The code is a digest of the judging stages' sources: any change to their bytes, even of the
    same size, is another code; a change outside those stages (the command line), or of an mtime
    alone, is not; two installs of the same bytes are one code (the command line's venv and a
    project's gate share a cache). It is kept in the cache directory under the sources' stats.
    """
    first_copy, second_copy, store = tmp_path / "one", tmp_path / "two", tmp_path / "cache"
    for copy in (first_copy, second_copy):
        shutil.copytree(REPO / "wheeldoctor", copy / "wheeldoctor", ignore=shutil.ignore_patterns("__pycache__"))

    def code(copy: Path = first_copy, cache_dir: Path | None = store) -> str:
        argv = [sys.executable, "-c", "from wheeldoctor.engine import cache; print(cache.code().decode())"]
        env = {**os.environ, "PYTHONPATH": str(copy), "WHEELDOCTOR_CACHE_DIR": str(cache_dir or "")}
        if cache_dir is None:
            env["WHEELDOCTOR_NO_CACHE"] = "1"
        return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=copy, check=True).stdout.strip()

    first = code(cache_dir=None)
    assert len(first) == 16 and code() == first and code(second_copy) == first
    assert not store.exists()  # asking writes nothing: the digest is kept with the run's first write
    assert cache.encode(_entry()).startswith(b"wheeldoctor-cache %d %s %s\n" % (cache.FORMAT, cache.TAG, cache.code()))
    rule = first_copy / "wheeldoctor/judge/files.py"
    text = rule.read_text()
    rule.write_text(text.replace("\n", "\n ", 1)[:-1])  # the same size, other bytes
    assert rule.stat().st_size == len(text.encode())
    second = code()
    assert second != first and code(second_copy) == first
    st = rule.stat()
    os.utime(rule, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert code() == second
    command = first_copy / "wheeldoctor/cli/app.py"
    command.write_text(command.read_text() + "\n")
    assert code() == second
    # Kept under the stats, the digest is read, not computed: a digest planted there is believed.
    from wheeldoctor.engine.store import seal, unseal

    store.mkdir(mode=0o700)
    argv = [
        sys.executable,
        "-c",
        "from wheeldoctor.engine import store; store.code(); d = store.directory(); store.write(d, d + '/x', b'')",
    ]
    env = {**os.environ, "PYTHONPATH": str(first_copy), "WHEELDOCTOR_CACHE_DIR": str(store)}
    subprocess.run(argv, env=env, cwd=first_copy, check=True)
    (kept,) = store.glob("*.code")
    head = b"wheeldoctor-code 1 %s\n" % cache.TAG
    value = unseal(head, kept.read_bytes())
    assert isinstance(value, tuple) and value[4] == second.encode()
    kept.write_bytes(seal(head, (*value[:4], b"0123456789abcdef")))
    assert code() == "0123456789abcdef" and code(cache_dir=None) == second


def _signed(head: object, digests: object = ()) -> bytes:
    """Entry bytes for any marshal-able first and second payloads, with a valid header and checksum."""
    import marshal
    import zlib

    first = marshal.dumps(head)
    payload = len(first).to_bytes(4, "big") + first + marshal.dumps(digests)
    header = cache.encode(_entry())[: cache.encode(_entry()).index(b"\n") + 1]
    return header + zlib.crc32(payload).to_bytes(4, "big") + payload


def test_signed_builds_entries_as_encode_does() -> None:
    entry = _entry()
    (path, fingerprint, digests) = entry.files[0]
    head = (entry.dist_path, entry.record, entry.verdict_root, (path,), (fingerprint,), None)
    assert cache.decode(_signed(head, (digests,))) == entry
    assert cache.decode(_signed((*head[:2], None, *head[3:]), (digests,))) != entry


@pytest.mark.parametrize(
    ("head", "digests"),
    [
        ({"not": "a tuple"}, ()),
        (("path", (1, 2, 3), None, (), (), None), ()),  # RECORD's identity too short
        (("p", (1, 2, 3, 4, 5), 7, (), (), None), ()),  # a verdict root that is no path
        (("p", (1, 2, 3, 4, 5), None, ("a",), (), None), ()),  # a path without its fingerprint
        (("p", (1, 2, 3, 4, 5), None, ("a",), ((1, 2, 3, 4, 5),), None), ()),  # a file without digests
        (("p", (1, 2, 3, 4, 5), None, [], [], None), ()),  # lists, which we never write
        (("p", (1, 2, 3, 4, 5), None, (), (), None, "more"), ()),  # another layout
        (("p", (1, 2, 3, 4, 5), None, (), ()), ()),  # the layout before judged files were kept
        (("p", (1, 2, 3, 4, 5), "/", (), (), ("/", ())), ()),  # an intact verdict with judged files
        (("p", (1, 2, 3, 4, 5), None, (), (), ("/", (), None)), ()),  # judged files of another layout
        (("p", (1, 2, 3, 4, 5), None, (), (), ("/", [])), ()),  # judged files in a list
        (("p", (1, 2, 3, 4, 5), None, (), (), (7, ())), ()),  # judged under no root
    ],
)
def test_well_formed_but_wrong_shape_is_a_miss(head: object, digests: object) -> None:
    assert cache.decode(_signed(head, digests)) is None


def test_malformed_file_records_are_not_used(
    shared: Venv, cache_dir: Path, monkeypatch: pytest.MonkeyPatch, processes: bool
) -> None:
    dist, _ = check(shared, cache_dir, processes=processes)
    entry = read_entry(cache_dir, dist)
    paths, fingerprints, digests = zip(*entry.files, strict=True)
    head = (entry.dist_path, entry.record, entry.verdict_root, (*paths, "p"), (*fingerprints, (1, 2)), None)
    bad = _signed(head, (*digests, "not digests"))
    entry_file(cache_dir, dist).write_bytes(bad)
    monkeypatch.setattr(sys, "path", [str(shared.site_packages), *sys.path])
    assert IntactGate()("cachedemo") is True  # the verdict was not believed: the full check ran
    entry_file(cache_dir, dist).write_bytes(bad)
    _, verification = check(shared, cache_dir, processes=processes)
    assert verification.reports[0].status is Status.INTACT
    assert not any(s.cached for s in verification.states.values())


# --------------------------------------------------------------------------
# the check reuses what the cache holds, only while fingerprints hold
# --------------------------------------------------------------------------


def test_check_fills_then_reuses(shared: Venv, cache_dir: Path, processes: bool) -> None:
    dist, first = check(shared, cache_dir, processes=processes)
    assert first.reports[0].status is Status.INTACT
    assert not any(s.cached for s in first.states.values())
    entry = read_entry(cache_dir, dist)
    assert entry.verdict_root == dist.root
    assert {path for path, _, _ in entry.files} == set(first.states)
    _, second = check(shared, cache_dir, processes=processes)
    assert second.reports[0].status is Status.INTACT
    assert all(s.cached for s in second.states.values())
    assert read_entry(cache_dir, dist) == entry


def test_an_unchanged_fingerprint_is_trusted(own: Venv, cache_dir: Path, processes: bool) -> None:
    """A wrong digest planted in the cache is believed: proof that the cache answered."""
    dist, _ = check(own, cache_dir, processes=processes)
    entry = read_entry(cache_dir, dist)
    target = str(own.site_packages / "cachedemo/data.bin")
    planted = tuple(
        (path, fp, (("sha256", b"\x00" * 32),) if path == target else digests) for path, fp, digests in entry.files
    )
    entry_file(cache_dir, dist).write_bytes(cache.encode(cache.Entry(entry.dist_path, entry.record, None, planted)))
    _, warm = check(own, cache_dir, processes=processes)
    assert warm.states[target].cached
    assert [f.code for f in warm.reports[0].findings] == [Code.HASH_MISMATCH]
    # Without the cache, the same bytes are intact.
    _, fresh = check(own, None, processes=processes)
    assert fresh.reports[0].status is Status.INTACT


def test_a_changed_ctime_is_hashed_again(own: Venv, cache_dir: Path, processes: bool) -> None:
    dist, _ = check(own, cache_dir, processes=processes)
    entry = read_entry(cache_dir, dist)
    target = own.site_packages / "cachedemo/data.bin"
    planted = tuple(
        (path, fp, (("sha256", b"\x00" * 32),) if path == str(target) else digests) for path, fp, digests in entry.files
    )
    entry_file(cache_dir, dist).write_bytes(cache.encode(cache.Entry(entry.dist_path, entry.record, None, planted)))
    target.chmod(target.stat().st_mode)  # same mode, same bytes, same mtime: only ctime moves
    _, warm = check(own, cache_dir, processes=processes)
    assert not warm.states[str(target)].cached
    assert warm.reports[0].status is Status.INTACT
    assert all(s.cached for p, s in warm.states.items() if p != str(target))


def test_with_one_file_changed_the_entry_keeps_every_other_file_whoever_judged_them(
    own: Venv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forks: list[int]
) -> None:
    """The workers write the records of the files they proved and the parent those of the files it
    judged (a link to the right bytes is one: no worker follows a link): the entry is the one the
    threads write, and the next run reads only the changed file."""
    monkeypatch.setattr(verify, "PROCESS_MIN_FILES", 1)
    stores = {processes: tmp_path / f"cache-{processes}" for processes in (False, True)}
    for processes, store in stores.items():
        store.mkdir(mode=0o700)
        check(own, store, processes=processes)
    victim = own.site_packages / "cachedemo/data.bin"
    victim.write_bytes(BIG[::-1])  # same size, other bytes
    linked = own.site_packages / "cachedemo/__init__.py"  # RECORD's first row: its record is not last
    os.rename(linked, linked.with_name("real.py"))
    linked.symlink_to("real.py")
    _settle()
    entries = {}
    for processes, store in stores.items():
        dist, warm = check(own, store, processes=processes)
        assert [(f.code, f.path) for f in warm.reports[0].findings] == [(Code.HASH_MISMATCH, "cachedemo/data.bin")]
        entries[processes] = read_entry(store, dist)
    assert forks
    threads, workers = entries[False], entries[True]
    assert (workers.verdict_root, workers.files) == (threads.verdict_root, threads.files)  # in RECORD's order
    assert workers.judged == threads.judged and workers.judged is not None  # the changed file, as judged
    kept = {path for path, _, _ in workers.files}
    assert str(victim) not in kept
    assert kept >= {str(own.site_packages / p) for p in FILES} - {str(victim)}  # the link's path too
    _, again = check(own, stores[True], processes=True)
    assert [p for p, s in again.states.items() if not s.cached] == [str(victim)]


def test_changed_bytes_are_found_and_a_repair_is_seen_at_once(own: Venv, cache_dir: Path) -> None:
    env = {"WHEELDOCTOR_CACHE_DIR": str(cache_dir)}
    assert gate_process(own, env, "cachedemo")[0] == [True]
    victim = own.site_packages / "cachedemo/__init__.py"
    original = victim.read_bytes()
    victim.write_bytes(original.replace(b"1", b"2"))  # same size
    assert gate_process(own, env, "cachedemo")[0] == [False]
    _, verification = check(own, cache_dir)
    assert [f.code for f in verification.reports[0].findings] == [Code.HASH_MISMATCH]
    victim.write_bytes(original)
    assert gate_process(own, env, "cachedemo")[0] == [True]


def test_a_file_changed_just_now_is_not_cached(own: Venv, cache_dir: Path, processes: bool) -> None:
    victim = own.site_packages / "cachedemo/sub/leaf.txt"
    victim.write_bytes(victim.read_bytes())  # same bytes, fresh ctime
    dist, first = check(own, cache_dir, processes=processes)
    assert first.reports[0].status is Status.INTACT
    entry = read_entry(cache_dir, dist)
    assert str(victim) not in {path for path, _, _ in entry.files}
    assert entry.verdict_root is None  # not every file could be vouched for
    _settle()
    _, second = check(own, cache_dir, processes=processes)
    assert not second.states[str(victim)].cached
    assert read_entry(cache_dir, dist).verdict_root == dist.root


def test_a_new_record_is_a_new_key(own: Venv, cache_dir: Path, tmp_path: Path, processes: bool) -> None:
    dist, _ = check(own, cache_dir, processes=processes)
    changed = {**FILES, "cachedemo/__init__.py": b"VALUE = 2\n"}
    uv_install(own, "--reinstall", build_wheel(tmp_path / "v2", "cachedemo", "1.0", changed))
    _settle()
    again, verification = check(own, cache_dir, processes=processes)
    assert again.record_identity != dist.record_identity
    assert verification.reports[0].status is Status.INTACT
    assert not any(s.cached for s in verification.states.values())
    assert read_entry(cache_dir, again).record == again.record_identity


# --------------------------------------------------------------------------
# forked workers settle a distribution on the cache's verdict
# --------------------------------------------------------------------------


@pytest.fixture
def workers(monkeypatch: pytest.MonkeyPatch, forks: list[int]) -> Iterator[None]:
    """The command line's forked workers, even for these few files."""
    if not sys.platform.startswith("linux"):
        pytest.skip("forked workers are Linux-only")
    monkeypatch.setattr(verify, "PROCESS_MIN_FILES", 1)
    yield
    assert forks, "the workers never ran"


def _judged(verification: Verification) -> list[tuple[str, Status, tuple[object, ...]]]:
    return [(r.name, r.status, r.findings) for r in verification.reports]


@pytest.mark.parametrize("jobs", [2, 1])
def test_a_holding_verdict_answers_without_the_digests(
    own: Venv, cache_dir: Path, workers: None, forks: list[int], jobs: int
) -> None:
    """Digests planted wrong under an intact verdict are never read: proof that the verdict answered.

    With one job (a 1-CPU machine's default) one worker settles it, as two do.
    """
    dist, _ = check(own, cache_dir, processes=True, jobs=jobs)
    assert len(forks) == jobs
    entry = read_entry(cache_dir, dist)
    assert entry.verdict_root == dist.root
    planted = tuple((path, fp, (("sha256", b"\x00" * 32),)) for path, fp, _ in entry.files)
    entry_file(cache_dir, dist).write_bytes(
        cache.encode(cache.Entry(entry.dist_path, entry.record, entry.verdict_root, planted))
    )
    _, warm = check(own, cache_dir, processes=True, jobs=jobs)
    assert warm.reports[0].status is Status.INTACT
    assert set(warm.states) == {path for path, _, _ in entry.files}
    assert all(state.cached for state in warm.states.values())
    # Without the verdict, the same entry's digests are believed file by file.
    entry_file(cache_dir, dist).write_bytes(cache.encode(cache.Entry(entry.dist_path, entry.record, None, planted)))
    _, slow = check(own, cache_dir, processes=True, jobs=jobs)
    assert {f.code for f in slow.reports[0].findings} == {Code.HASH_MISMATCH}


def _same_bytes_by_symlink(path: Path) -> None:
    copy = path.with_name(path.name + ".copy")
    copy.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(copy.name)


SETTLED_DAMAGE = {
    "other bytes, same size": lambda p: p.write_bytes(p.read_bytes().replace(b"1", b"2")),
    "truncated": lambda p: p.write_bytes(b""),
    "deleted": lambda p: p.unlink(),
    "a symlink to the same bytes": _same_bytes_by_symlink,
    "only its ctime moved": lambda p: p.chmod(p.stat().st_mode),
}


@pytest.mark.parametrize("damage", SETTLED_DAMAGE)
@pytest.mark.parametrize("victim", ["cachedemo/__init__.py", "cachedemo/data.bin"])
def test_a_verdict_that_no_longer_holds_is_judged_as_without_a_cache(
    own: Venv, cache_dir: Path, workers: None, damage: str, victim: str
) -> None:
    dist, _ = check(own, cache_dir, processes=True)
    assert read_entry(cache_dir, dist).verdict_root == dist.root
    SETTLED_DAMAGE[damage](own.site_packages / victim)
    _, warm = check(own, cache_dir, processes=True)
    _, fresh = check(own, None, processes=True)
    assert _judged(warm) == _judged(fresh)
    assert (warm.reports[0].status is Status.INTACT) == (
        damage in ("only its ctime moved", "a symlink to the same bytes")
    )


@pytest.mark.parametrize("writer", ["threads", "workers"])
def test_a_distribution_whose_findings_are_its_files_alone_is_settled_on_them_as_judged(
    own: Venv, cache_dir: Path, workers: None, writer: str
) -> None:
    """A CA bundle with a certificate appended fails every check: while every fingerprint holds,
    a warm check judges it again from the states kept with its verdict, without reading RECORD."""
    appended = own.site_packages / "cachedemo/data.bin"
    appended.write_bytes(BIG + b"-----BEGIN CERTIFICATE-----\n")
    patched = own.site_packages / "cachedemo/__init__.py"
    patched.write_bytes(b"VALUE = 2\n")  # same size
    _settle()
    dist, cold = check(own, cache_dir, processes=writer == "workers")
    assert [(f.code, f.path) for f in cold.reports[0].findings] == [
        (Code.HASH_MISMATCH, "cachedemo/__init__.py"),
        (Code.SIZE_MISMATCH, "cachedemo/data.bin"),
    ]
    assert "appended" in cold.reports[0].findings[1].message  # read as evidence: its prefix's digest
    entry = read_entry(cache_dir, dist)
    assert entry.verdict_root is None and entry.judged is not None
    root, judged = entry.judged
    assert (root, [kept[0] for kept in judged]) == (dist.root, [str(patched), str(appended)])
    kept_files = {path for path, _, _ in entry.files}
    assert kept_files.isdisjoint({str(patched), str(appended)}) and len(kept_files) + 2 == len(cold.states)
    _, warm = check(own, cache_dir, processes=True)
    _, fresh = check(own, None, processes=True)
    assert _judged(warm) == _judged(cold) == _judged(fresh)
    assert warm.states[str(appended)].cached and warm.states[str(appended)].prefixes
    assert read_entry(cache_dir, dist) == entry  # nothing rewritten
    # Proof that the kept states answered: another digest planted in one is what the warm check reports.
    planted = tuple(
        (*kept[:4], (("sha256", b"\x00" * 32),), *kept[5:]) if kept[0] == str(patched) else kept for kept in judged
    )
    entry_file(cache_dir, dist).write_bytes(
        cache.encode(cache.Entry(entry.dist_path, entry.record, None, entry.files, (root, planted)))
    )
    _, believed = check(own, cache_dir, processes=True)
    assert believed.reports[0].findings[0].found == "sha256=" + encode_digest(b"\x00" * 32)
    # The gate takes no verdict with findings, and keeps it where it writes the same files.
    assert not cache.verdict_holds(str(cache_dir), dist.path, dist.root)
    entry_file(cache_dir, dist).write_bytes(cache.encode(entry))
    assert gate_process(own, {"WHEELDOCTOR_CACHE_DIR": str(cache_dir)}, "cachedemo")[0] == [False]
    assert read_entry(cache_dir, dist) == entry
    # One of them changed again: judged again, as without a cache.
    appended.write_bytes(BIG + b"-----BEGIN CERTIFICATE-----\nMORE\n")
    _, changed = check(own, cache_dir, processes=True)
    _, fresh = check(own, None, processes=True)
    assert _judged(changed) == _judged(fresh) != _judged(cold)


@pytest.mark.parametrize(
    "damage",
    [
        "a file is missing",
        "a RECORD row that is no row",
        "a RECORD row outside the root",
    ],
)
def test_no_verdict_is_kept_where_a_finding_is_not_a_files_bytes(
    own: Venv, cache_dir: Path, processes: bool, damage: str
) -> None:
    (own.site_packages / "cachedemo/__init__.py").write_bytes(b"VALUE = 2\n")  # kept as judged, alone
    leaf = own.site_packages / "cachedemo/sub/leaf.txt"
    record = own.dist_info("cachedemo") / "RECORD"
    if damage == "a file is missing":
        leaf.unlink()
    elif damage == "a RECORD row that is no row":
        record.write_text(record.read_text() + "cachedemo/extra.txt,sha256=not!base64,5\n")
    else:
        digest = encode_digest(hashlib.sha256(b"x").digest())
        record.write_text(record.read_text() + f"{'../' * 12}outside.txt,sha256={digest},1\n")
    _settle()
    dist, cold = check(own, cache_dir, processes=processes)
    assert cold.reports[0].status is Status.BROKEN
    entry = read_entry(cache_dir, dist)
    assert (entry.verdict_root, entry.judged) == (None, None)
    _, warm = check(own, cache_dir, processes=processes)
    assert _judged(warm) == _judged(cold)


def test_a_file_changed_just_now_is_not_kept_as_judged(own: Venv, cache_dir: Path, processes: bool) -> None:
    victim = own.site_packages / "cachedemo/__init__.py"
    victim.write_bytes(b"VALUE = 2\n")  # just now: it could change again unseen in the same tick
    dist, cold = check(own, cache_dir, processes=processes)
    assert read_entry(cache_dir, dist).judged is None
    _settle()
    _, later = check(own, cache_dir, processes=processes)
    judged = read_entry(cache_dir, dist).judged
    assert judged is not None and [kept[0] for kept in judged[1]] == [str(victim)]
    assert _judged(later) == _judged(cold)


def test_a_warm_check_gives_the_link_check_the_judged_paths_in_records_order(
    own: Venv, cache_dir: Path, tmp_path: Path, workers: None
) -> None:
    """A package moved out of the environment and linked back: WD008 for each file, in RECORD's order."""
    package = own.site_packages / "cachedemo"
    moved = tmp_path / "elsewhere"
    shutil.move(package, moved)
    package.symlink_to(moved)
    (moved / "__init__.py").write_bytes(b"VALUE = 2\n")  # RECORD's first row: judged, kept apart
    _settle()
    dist, cold = check(own, cache_dir, processes=True)
    assert read_entry(cache_dir, dist).judged is not None
    _, warm = check(own, cache_dir, processes=True)
    _, fresh = check(own, None, processes=True)
    assert _judged(warm) == _judged(cold) == _judged(fresh)
    codes = [f.code for f in warm.reports[0].findings]
    assert Code.HASH_MISMATCH in codes and codes.count(Code.LINK_OUTSIDE) >= len(FILES)


def test_judged_files_of_another_shape_are_not_believed(own: Venv, cache_dir: Path, workers: None) -> None:
    (own.site_packages / "cachedemo/__init__.py").write_bytes(b"VALUE = 2\n")
    _settle()
    dist, cold = check(own, cache_dir, processes=True)
    entry = read_entry(cache_dir, dist)
    assert entry.judged is not None
    root, (kept,) = entry.judged
    record = entry.record
    for bad in [
        (*kept[:3], "missing", *kept[4:]),  # a state with no fingerprint to prove
        (*kept[:1], kept[1][:4], *kept[2:]),  # a row without its line
        (*kept[:1], (kept[1][0], None, *kept[1][2:]), *kept[2:]),  # a row without a hash: none is judged
        (*kept[:5], "1", *kept[6:]),  # links that are no number
        (*kept[:6], ((1, (("sha256", "text"),)),), kept[7]),  # a prefix digest that is no bytes
        (*kept[:7], 10**6),  # a row's place past the last row
        (*kept[:7], -1),
        kept[:7],
    ]:
        entry_file(cache_dir, dist).write_bytes(
            cache.encode(cache.Entry(entry.dist_path, record, None, entry.files, (root, (bad,))))
        )
        assert cache.load_verdict(str(cache_dir), dist.path, record, dist.root, judged=True) is None
        _, warm = check(own, cache_dir, processes=True)
        assert _judged(warm) == _judged(cold)
        assert not warm.states[str(own.site_packages / "cachedemo/__init__.py")].cached  # hashed again


def test_a_settled_distribution_with_a_shared_path_is_judged_with_its_rivals(
    tmp_path: Path, uv_bin: Path, cache_dir: Path, workers: None
) -> None:
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    common = {"common/shared.py": b"SHARED = 1\n"}
    wheels = [
        build_wheel(tmp_path, "twina", "1.0", {**common, "twina/__init__.py": b"A = 1\n"}),
        build_wheel(tmp_path, "twinb", "1.0", {**common, "twinb/__init__.py": b"B = 1\n"}),
    ]
    uv_install(venv, *wheels)
    _settle()
    env = load_environment("test", [str(venv.site_packages)], [str(venv.prefix)])

    def verify(cache_path: Path | None) -> Verification:
        directory = None if cache_path is None else str(cache_path)
        return verify_environment(env.active(), env.active(), jobs=2, cache_dir=directory, processes=True)

    cold = verify(cache_dir)
    assert [r.status for r in cold.reports] == [Status.INTACT, Status.INTACT]
    warm = verify(cache_dir)
    shared_path = str(venv.site_packages / "common/shared.py")
    assert set(warm.owners) == set(cold.owners) == {shared_path}
    assert [c.dist.name for c in warm.owners[shared_path]] == ["twina", "twinb"]
    assert _judged(warm) == _judged(cold)
    assert all(state.cached for state in warm.states.values())
    # One side's bytes of the shared path changed: the same verdicts as with no cache at all.
    (venv.site_packages / "common/shared.py").write_bytes(b"SHARED = 2\n")
    _settle()
    assert _judged(verify(cache_dir)) == _judged(verify(None))
    assert Status.BROKEN in {status for _, status, _ in _judged(verify(cache_dir))}
    # A shared path is judged with its rivals' rows: never kept as judged with one verdict.
    for dist in env.active():
        entry = cache.decode(Path(cache.entry_path(str(cache_dir), dist.path)).read_bytes())
        assert entry is not None and entry.judged is None and entry.verdict_root is None


# --------------------------------------------------------------------------
# the gate: warm path without the verifier, never a cached False
# --------------------------------------------------------------------------


def test_gate_warm_path_skips_the_verifier(shared: Venv, cache_dir: Path) -> None:
    env = {"WHEELDOCTOR_CACHE_DIR": str(cache_dir)}
    assert gate_process(shared, env, "cachedemo") == ([True], COLD)
    assert gate_process(shared, env, "cachedemo") == ([True], [])


def test_gate_hands_an_unusual_record_to_the_verifier(own: Venv, cache_dir: Path) -> None:
    record = own.dist_info("cachedemo") / "RECORD"
    record.write_text(record.read_text().replace("cachedemo/sub/leaf.txt", '"cachedemo/sub/leaf.txt"'))  # valid CSV
    _settle()
    env = {"WHEELDOCTOR_CACHE_DIR": str(cache_dir)}
    verifier = ["wheeldoctor.gate.quick", "wheeldoctor.judge.files", "wheeldoctor.where.environment"]
    assert gate_process(own, env, "cachedemo") == ([True], verifier)
    assert gate_process(own, env, "cachedemo") == ([True], [])  # the verifier's verdict serves the warm path
    (own.site_packages / "cachedemo/sub/leaf.txt").write_bytes(b"LEAF\n")
    assert gate_process(own, env, "cachedemo") == ([False], verifier)


def test_gate_answers_follow_the_cache_verdict(shared: Venv, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "path", [str(shared.site_packages), *sys.path])
    dist, _ = check(shared, cache_dir)
    assert IntactGate()("cachedemo") is True
    entry = read_entry(cache_dir, dist)
    # A verdict listing a file whose fingerprint no longer holds is not believed.
    stale = tuple((p, (fp[0] + 1, *fp[1:]), d) for p, fp, d in entry.files)
    entry_file(cache_dir, dist).write_bytes(
        cache.encode(cache.Entry(entry.dist_path, entry.record, entry.verdict_root, stale))
    )
    assert not cache.verdict_holds(str(cache_dir), dist.path, dist.root)
    assert IntactGate()("cachedemo") is True  # the full check answered, and rewrote the entry
    assert cache.verdict_holds(str(cache_dir), dist.path, dist.root)


def test_the_warm_verdict_sees_any_one_changed_or_missing_file(shared: Venv, cache_dir: Path) -> None:
    dist, _ = check(shared, cache_dir)
    assert cache.verdict_holds(str(cache_dir), dist.path, dist.root)
    entry = read_entry(cache_dir, dist)
    for index in (0, len(entry.files) // 2, len(entry.files) - 1):
        files = list(entry.files)
        path, fingerprint, digests = files[index]
        files[index] = (path, (*fingerprint[:2], fingerprint[2] + 1, *fingerprint[3:]), digests)  # another ctime
        entry_file(cache_dir, dist).write_bytes(
            cache.encode(cache.Entry(entry.dist_path, entry.record, entry.verdict_root, tuple(files)))
        )
        assert not cache.verdict_holds(str(cache_dir), dist.path, dist.root)
        files[index] = ("/no/such/file", fingerprint, digests)
        entry_file(cache_dir, dist).write_bytes(
            cache.encode(cache.Entry(entry.dist_path, entry.record, entry.verdict_root, tuple(files)))
        )
        assert not cache.verdict_holds(str(cache_dir), dist.path, dist.root)
    entry_file(cache_dir, dist).write_bytes(cache.encode(entry))
    assert cache.verdict_holds(str(cache_dir), dist.path, dist.root)


@pytest.mark.unit
@pytest.mark.parametrize("follow", [True, False])
def test_every_file_is_proved_by_its_name_in_its_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, follow: bool
) -> None:
    """Each directory is opened once for its run of files, and any change is seen."""
    files = [tmp_path / "long" / f"f{i:02}" for i in range(12)]
    files += [tmp_path / "short" / "a", tmp_path / "short" / "b", tmp_path / "alone"]
    for f in files:
        f.parent.mkdir(exist_ok=True)
        f.write_bytes(f.name.encode())
    paths = [str(f) for f in files]
    fingerprints = [cache.identity(os.stat(p)) for p in paths]
    opened: list[str] = []
    real_open = os.open

    def counting_open(path: str, flags: int, *args: object, **kwargs: object) -> int:
        opened.append(path)
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", counting_open)
    assert cache.all_unchanged(paths, fingerprints, follow=follow)
    if cache._STAT_DIR_FD:
        assert opened == [str(tmp_path / "long"), str(tmp_path / "short"), str(tmp_path)]
    for i in (0, 7, 11, len(files) - 2, len(files) - 1):
        changed = list(fingerprints)
        changed[i] = (*fingerprints[i][:2], fingerprints[i][2] + 1, *fingerprints[i][3:])  # another ctime
        assert not cache.all_unchanged(paths, changed, follow=follow), i
    monkeypatch.undo()
    for i in (3, len(files) - 2):  # each file swapped for a link to a copy of its bytes
        victim = files[i]
        copy = victim.with_name(victim.name + ".copy")
        os.rename(victim, copy)
        victim.symlink_to(copy.name)
        fingerprints[i] = cache.identity(os.stat(victim))  # what a stat through the link sees
        assert cache.all_unchanged(paths, fingerprints, follow=True)
        assert not cache.all_unchanged(paths, fingerprints, follow=False)
        victim.unlink()
        os.rename(copy, victim)
        fingerprints[i] = cache.identity(os.stat(victim))


def test_gate_never_writes_a_false_verdict(own: Venv, cache_dir: Path) -> None:
    victim = own.site_packages / "cachedemo/data.bin"
    victim.write_bytes(b"x" * len(BIG))
    _settle()
    env = {"WHEELDOCTOR_CACHE_DIR": str(cache_dir)}
    assert gate_process(own, env, "cachedemo")[0] == [False]
    dist, _ = check(own, None)
    entry = read_entry(cache_dir, dist)
    assert entry.verdict_root is None
    assert str(victim) not in {p for p, _, _ in entry.files}


# --------------------------------------------------------------------------
# turning it off
# --------------------------------------------------------------------------


def test_no_cache_environment_variable(shared: Venv, tmp_path: Path) -> None:
    directory = tmp_path / "never"
    env = {"WHEELDOCTOR_CACHE_DIR": str(directory), "WHEELDOCTOR_NO_CACHE": "1"}
    assert gate_process(shared, env, "cachedemo", "otherdemo") == ([True, True], COLD)
    done = subprocess.run(
        [sys.executable, "-m", "wheeldoctor", "check", "--all", "--path", str(shared.site_packages)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert not directory.exists()


def test_cli_no_cache_hashes_everything_and_writes_nothing(own: Venv, cache_dir: Path) -> None:
    def cli(*extra: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "wheeldoctor", "check", "cachedemo", "--path", str(own.site_packages), *extra]
        return subprocess.run(argv, capture_output=True, text=True, check=False)

    assert cli("--no-cache").returncode == 0
    assert not cache_dir.exists()
    assert cli().returncode == 0
    dist, _ = check(own, None)
    entry = read_entry(cache_dir, dist)
    planted = tuple((p, fp, (("sha256", b"\x00" * 32),)) for p, fp, _ in entry.files)
    entry_file(cache_dir, dist).write_bytes(cache.encode(cache.Entry(entry.dist_path, entry.record, None, planted)))
    assert cli().returncode == 1  # the planted digests were believed
    assert cli("--no-cache").returncode == 0  # and --no-cache did not look at them


# --------------------------------------------------------------------------
# faults: ignored, rebuilt or skipped, without a word
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: b"", id="empty"),
        pytest.param(lambda data: data[: len(data) // 2], id="truncated"),
        pytest.param(lambda data: data[:-1] + bytes([data[-1] ^ 1]), id="corrupt"),
        pytest.param(lambda data: os.urandom(len(data)), id="garbage"),
        pytest.param(lambda data: data.replace(b"wheeldoctor-cache 1", b"wheeldoctor-cache 9", 1), id="other-format"),
        pytest.param(
            lambda data: data.replace(sys.implementation.cache_tag.encode(), b"cpython-299", 1), id="other-python"
        ),
    ],
)
def test_broken_entries_are_ignored_and_rebuilt(shared: Venv, cache_dir: Path, damage: object) -> None:
    env = {"WHEELDOCTOR_CACHE_DIR": str(cache_dir)}
    dist, _ = check(shared, cache_dir)
    path = entry_file(cache_dir, dist)
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]
    assert gate_process(shared, env, "cachedemo")[0] == [True]
    assert read_entry(cache_dir, dist).verdict_root == dist.root  # rebuilt
    assert gate_process(shared, env, "cachedemo") == ([True], [])


def test_an_entry_that_is_a_directory_or_a_fifo_is_ignored(shared: Venv, cache_dir: Path) -> None:
    env = {"WHEELDOCTOR_CACHE_DIR": str(cache_dir)}
    dist, _ = check(shared, None)
    cache_dir.mkdir()
    entry_file(cache_dir, dist).mkdir()
    assert gate_process(shared, env, "cachedemo")[0] == [True]
    entry_file(cache_dir, dist).rmdir()
    os.mkfifo(entry_file(cache_dir, dist))
    assert gate_process(shared, env, "cachedemo")[0] == [True]


@pytest.mark.skipif(ROOT_AS_ROOT, reason="running as root: a read-only directory is still writable")
def test_read_only_cache_dir(shared: Venv, cache_dir: Path) -> None:
    cache_dir.mkdir()
    cache_dir.chmod(0o500)
    try:
        assert gate_process(shared, {"WHEELDOCTOR_CACHE_DIR": str(cache_dir)}, "cachedemo")[0] == [True]
        assert list(cache_dir.iterdir()) == []
    finally:
        cache_dir.chmod(0o700)


def test_cache_dir_that_cannot_be_created(shared: Venv, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_bytes(b"")
    env = {"WHEELDOCTOR_CACHE_DIR": str(blocker / "cache")}
    assert gate_process(shared, env, "cachedemo", "otherdemo")[0] == [True, True]
    assert blocker.read_bytes() == b""


def test_a_world_writable_cache_dir_is_not_trusted(shared: Venv, cache_dir: Path) -> None:
    env = {"WHEELDOCTOR_CACHE_DIR": str(cache_dir)}
    dist, _ = check(shared, cache_dir)
    written = sorted(p.name for p in cache_dir.iterdir())
    assert entry_file(cache_dir, dist).name in written
    cache_dir.chmod(0o777)
    # Anyone could have planted a verdict: the gate does not read it, nor write there.
    assert gate_process(shared, env, "cachedemo") == ([True], COLD)
    assert sorted(p.name for p in cache_dir.iterdir()) == written


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_mtime_ns, p.stat().st_size) for p in root.rglob("*") if not p.is_symlink()}


def test_nothing_is_written_outside_the_cache_dir(shared: Venv, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "WHEELDOCTOR_CACHE_DIR": "", "XDG_CACHE_HOME": "", "PYTHONDONTWRITEBYTECODE": "1"}
    before = _tree(shared.prefix)
    work = tmp_path / "cwd"
    work.mkdir()
    assert gate_process(shared, env, "cachedemo", "otherdemo", cwd=work)[0] == [True, True]
    cli = subprocess.run(
        [sys.executable, "-m", "wheeldoctor", "check", "--all", "--python", str(shared.python)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=work,
        check=False,
    )
    assert cli.returncode == 0, cli.stderr
    assert _tree(shared.prefix) == before
    assert list(work.iterdir()) == []
    written = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    assert written[:2] == [".cache", ".cache/wheeldoctor"]
    # The verification's entries, the metadata memo of the site directory, the audit memo, the link
    # check's memo, the native libraries' memo and the code's digest (``store.code``), nothing else.
    assert all(w.startswith(".cache/wheeldoctor/") for w in written[2:]), written
    kinds = {"entry", "metadata", "audit", "links", "native", "code"}
    assert {w.rpartition(".")[2] for w in written[2:]} == kinds, written


def test_sixty_four_processes_against_one_cold_cache(own: Venv, cache_dir: Path) -> None:
    """All start at once (held at a barrier), half asking about a broken distribution."""
    (own.site_packages / "otherdemo/__init__.py").write_bytes(b"OTHER = 3\n")
    _settle()
    full = {**os.environ, "PYTHONPATH": str(REPO), "WHEELDOCTOR_CACHE_DIR": str(cache_dir)}
    procs = [
        subprocess.Popen(
            [str(own.python), "-c", "import sys; sys.stdin.read()\n" + GATE, "cachedemo" if i % 2 else "otherdemo"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=full,
        )
        for i in range(64)
    ]
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.close()  # release the barrier
        proc.stdin = None
    results = []
    for i, proc in enumerate(procs):
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and err == ""
        results.append((i % 2 == 1, json.loads(out)[0][0]))
    assert all(expected == answer for expected, answer in results)
    names = [p.name for p in cache_dir.iterdir()]
    # Two entries and the code's digest (see ``store.code``), no temporary file left.
    assert sorted(n.rpartition(".")[2] for n in names) == ["code", "entry", "entry"], names
    env = load_environment("test", [str(own.site_packages)], [str(own.prefix)])
    good, bad = env.find("cachedemo"), env.find("otherdemo")
    assert good is not None and bad is not None
    assert read_entry(cache_dir, good).verdict_root == good.root
    assert read_entry(cache_dir, bad).verdict_root is None


# --------------------------------------------------------------------------
# the gate's lookup agrees with the inventory's
# --------------------------------------------------------------------------


def test_lookup_key_matches_importlib_on_random_names() -> None:
    # The gate's lookup rule is written without re; importlib.metadata's is the reference.
    normalize = importlib.metadata.Prepared.normalize  # type: ignore[attr-defined]
    rng = random.Random(5)
    alphabet = "aZ9-_.-_.ßİǅ\u0130\u212a"
    for _ in range(2000):
        name = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert lookup_key(name) == normalize(name), name


def test_locate_matches_scan_location(shared: Venv, tmp_path: Path) -> None:
    # Two dist-infos of one name in one directory: both must pick the same (directory order).
    site = tmp_path / "site"
    shutil.copytree(shared.site_packages, site, symlinks=True)
    shutil.copytree(next(site.glob("cachedemo-*.dist-info")), site / "CacheDemo-0.9.dist-info")
    for key in ("cachedemo", "otherdemo", "missing"):
        expected = next((f.path for f in scan_location(str(site)) if f.key == key), None)
        found = gate.locate(key, (str(site),))
        assert (found[1] if found else None) == expected

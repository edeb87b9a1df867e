"""The gate's stdlib-only cold path: where it answers, it says what the verifier says.

Every case installs a real wheel, damages it (or its RECORD) one way, and asks both
:func:`wheeldoctor.gate.quick.check` and the full verifier. The quick path may step aside
(None) on anything unusual; it must decide every plain RECORD, and never disagree.
"""

from __future__ import annotations

import hashlib
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import (
    Venv,
    build_wheel,
    copy_venv,
    make_venv,
    os_threads,
    pip_install,
    read_record,
    settled_threads,
    uv_install,
)

from wheeldoctor.engine import cache
from wheeldoctor.engine.verify import verify
from wheeldoctor.gate import quick, reading
from wheeldoctor.judge.files import Status
from wheeldoctor.model.environment import MetadataDir
from wheeldoctor.model.record_fields import encode_digest
from wheeldoctor.model.sitedirs import lookup_key
from wheeldoctor.where.environment import load_distribution

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and symlinks as POSIX has them")

BIG = os.urandom(40 << 20)  # over the read-ahead threshold: a reader thread of its own
BIG2 = os.urandom(20 << 20)  # over it too: both are started before RECORD is parsed
FILES = {
    "qdemo/__init__.py": b"VALUE = 1\n",
    "qdemo/data.bin": bytes(range(256)) * 1000,
    "qdemo/sub/leaf.txt": b"leaf\n",
}

Damage = Callable[[Venv, Path], None]


def _verifier_says(venv: Venv, name: str = "qdemo", cache_dir: str | None = None) -> bool:
    dist_info = venv.dist_info(name)
    found = MetadataDir(str(dist_info), str(venv.site_packages), lookup_key(name))
    dist = load_distribution(found, str(venv.prefix), read_metadata=False)
    return verify([dist], cache_dir=cache_dir)[0].status is Status.INTACT


def _quick_says(venv: Venv, name: str = "qdemo", cache_dir: str | None = None) -> bool | None:
    return quick.check(str(venv.dist_info(name)), str(venv.site_packages), str(venv.prefix), cache_dir)


def _record(venv: Venv) -> Path:
    return venv.dist_info("qdemo") / "RECORD"


def _edit_record(edit: Callable[[str], str]) -> Damage:
    def damage(venv: Venv, _: Path) -> None:
        record = _record(venv)
        record.write_text(edit(record.read_text()))

    return damage


def _edit_file(path: str, edit: Callable[[Path], None]) -> Damage:
    return lambda venv, _: edit(venv.site_packages / path)


def _replace(path: Path, make: Callable[[Path], None]) -> None:
    path.unlink()
    make(path)


def _relink(path: Path, data: bytes) -> None:
    """Replace ``path`` by a symlink to a copy of ``data`` beside it."""
    target = path.with_name(path.name + ".real")
    target.write_bytes(data)
    _replace(path, lambda p: p.symlink_to(target.name))


def _sha512_rows(text: str) -> str:
    return text.replace("qdemo/sub/leaf.txt,sha256=", "qdemo/sub/leaf.txt,sha512=").replace(
        _digest_of(b"leaf\n", "sha256"), _digest_of(b"leaf\n", "sha512")
    )


def _digest_of(data: bytes, algorithm: str) -> str:
    return encode_digest(hashlib.new(algorithm, data).digest())


EMPTY = "sha256=" + encode_digest(hashlib.sha256(b"").digest())

#: name -> (damage, whether quick must decide, the verifier's answer)
CASES: dict[str, tuple[Damage, bool, bool]] = {
    "intact": (lambda venv, _: None, True, True),
    "flipped byte": (_edit_file("qdemo/__init__.py", lambda p: p.write_bytes(b"VALUE = 2\n")), True, False),
    "truncated": (_edit_file("qdemo/data.bin", lambda p: p.write_bytes(p.read_bytes()[:-1])), True, False),
    "grown": (_edit_file("qdemo/data.bin", lambda p: p.write_bytes(p.read_bytes() + b"!")), True, False),
    "deleted": (_edit_file("qdemo/sub/leaf.txt", Path.unlink), True, False),
    "fifo": (_edit_file("qdemo/sub/leaf.txt", lambda p: _replace(p, os.mkfifo)), True, False),
    "directory": (_edit_file("qdemo/sub/leaf.txt", lambda p: _replace(p, Path.mkdir)), True, False),
    "symlink loop": (_edit_file("qdemo/sub/leaf.txt", lambda p: _replace(p, lambda q: q.symlink_to(q))), True, False),
    "symlink to the same bytes": (_edit_file("qdemo/sub/leaf.txt", lambda p: _relink(p, b"leaf\n")), True, True),
    "big file intact": (lambda venv, _: None, True, True),  # the "bigdemo" variant, see below
    "crlf record": (_edit_record(lambda t: t.replace("\n", "\r\n")), True, True),
    "sha512 row": (_edit_record(_sha512_rows), True, True),
    "upper-case algorithm": (_edit_record(lambda t: t.replace("sha256=", "SHA256=", 1)), True, True),
    "padded digest": (_edit_record(lambda t: t.replace(",10\n", "=,10\n", 1)), True, True),
    "empty record": (_edit_record(lambda t: ""), True, True),
    "unhashed pyc row": (_edit_record(lambda t: t + "qdemo/__pycache__/x.cpython-311.pyc,,\n"), True, True),
    "quoted path": (_edit_record(lambda t: t.replace("qdemo/sub/leaf.txt", '"qdemo/sub/leaf.txt"')), False, True),
    "lone carriage return": (_edit_record(lambda t: t + "qdemo/a\rb,,\n"), False, False),
    "row climbing out": (_edit_record(lambda t: t + f"../../../../../../../../../x,{EMPTY},0\n"), False, False),
    "absolute path": (_edit_record(lambda t: t + f"/x,{EMPTY},0\n"), False, False),
    "md5 row": (_edit_record(lambda t: t.replace("sha256=", "md5=", 1)), False, False),
    "unknown algorithm": (_edit_record(lambda t: t.replace("sha256=", "blake3=", 1)), False, False),
    "short digest": (_edit_record(lambda t: t.replace("sha256=", "sha256=AAAA", 1)), False, False),
    "two fields": (_edit_record(lambda t: t + "qdemo/x.py,sha256=abc\n"), False, False),
    "duplicate row": (_edit_record(lambda t: t + t.splitlines()[0] + "\n"), False, False),
    "unhashed payload": (_edit_record(lambda t: t + "qdemo/extra.py,,\n"), False, False),
    "no size": (_edit_record(lambda t: t.replace(",10\n", ",\n", 1)), False, True),
    "bad size": (_edit_record(lambda t: t.replace(",10\n", ",ten\n", 1)), False, False),
    "size past csv's field limit": (_edit_record(lambda t: t + f"qdemo/x.py,{EMPTY},{'1' * 200_000}\n"), False, False),
    "size of 4301 digits": (_edit_record(lambda t: t + f"qdemo/x.py,{EMPTY},{'1' * 4301}\n"), False, False),
    "nul byte": (_edit_record(lambda t: t + "qdemo/\x00,,\n"), False, False),
}


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory, uv_bin: Path) -> dict[str, Venv]:
    """qdemo installed by pip (which adds hashed .pyc rows) and by uv, and a big variant; copied per case."""
    root = tmp_path_factory.mktemp("quick-templates")
    wheel = build_wheel(root / "wheels", "qdemo", "1.0", FILES, console_scripts={"qdemo": "qdemo:main"})
    big = build_wheel(root / "big-wheel", "qdemo", "1.0", {**FILES, "qdemo/big.bin": BIG})
    bigs = build_wheel(root / "bigs-wheel", "qdemo", "1.0", {**FILES, "qdemo/big.bin": BIG, "qdemo/big2.bin": BIG2})
    made = {name: make_venv(root / f"{name}-venv", uv_bin=uv_bin) for name in ("pip", "uv", "big", "bigs")}
    pip_install(made["pip"], "--no-index", "--no-deps", wheel)
    uv_install(made["uv"], wheel)
    uv_install(made["big"], big)
    uv_install(made["bigs"], bigs)
    return made


@pytest.mark.parametrize(
    ("case", "installer"),
    [(case, "uv") for case in CASES] + [(case, "pip") for case in ("intact", "flipped byte", "crlf record")],
)
def test_quick_agrees_with_the_verifier(case: str, installer: str, templates: dict[str, Venv], tmp_path: Path) -> None:
    damage, decides, intact = CASES[case]
    venv = copy_venv(templates["big" if case == "big file intact" else installer], tmp_path / "venv")
    damage(venv, tmp_path)
    assert _verifier_says(venv) is intact
    assert _quick_says(venv) is (intact if decides else None)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts the kernel's threads through /proc")
def test_big_file_reader_thread_leaves_nothing_behind(templates: dict[str, Venv]) -> None:
    before = os_threads()
    assert _quick_says(templates["big"]) is True
    assert settled_threads(before) == before


@pytest.fixture
def installed(templates: dict[str, Venv], tmp_path: Path) -> Venv:
    """An intact copy of qdemo installed by uv, this test's own."""
    return copy_venv(templates["uv"], tmp_path / "venv")


def test_random_record_damage_never_disagrees(installed: Venv) -> None:
    """Random edits to RECORD's text: the quick path steps aside or agrees, never differs."""
    record = _record(installed)
    original = record.read_text()
    pieces = [",", '"', "\n", "\r", "=", "/", "..", "sha256=", "sha512=", "0", "A", "-", "_", " ", ".pyc", "RECORD"]
    rng = random.Random(20261122)
    decided = 0
    try:
        for _ in range(300):
            text = original
            for _ in range(rng.randint(1, 3)):
                at = rng.randrange(len(text) + 1)
                cut = rng.choice([0, 0, 1, 2])
                text = text[:at] + rng.choice(pieces) + text[at + cut :]
            record.write_text(text)
            answer = _quick_says(installed)
            if answer is not None:
                decided += 1
                assert answer is _verifier_says(installed), text
    finally:
        record.write_text(original)
    assert decided > 20  # it did decide often enough for the comparison to mean something


# --------------------------------------------------------------------------
# the cache: read and written as the verifier does
# --------------------------------------------------------------------------


def test_writes_the_entry_the_verifier_writes(installed: Venv, tmp_path: Path) -> None:
    by_quick, by_verifier = tmp_path / "quick", tmp_path / "verifier"
    _settle_now()
    assert _quick_says(installed, cache_dir=str(by_quick)) is True
    assert _verifier_says(installed, cache_dir=str(by_verifier)) is True
    (entry_q,) = by_quick.iterdir()  # the gate writes its entry and nothing else
    (entry_v,) = by_verifier.glob("*.entry")  # beside the verifier's memos (its link check's)
    assert entry_q.name == entry_v.name
    assert cache.decode(entry_q.read_bytes()) == cache.decode(entry_v.read_bytes())
    decoded = cache.decode(entry_q.read_bytes())
    assert decoded is not None and decoded.verdict_root == str(installed.prefix)


def test_uses_cached_digests_while_fingerprints_hold(installed: Venv, tmp_path: Path) -> None:
    """A wrong digest planted for an unchanged file is believed, as the verifier believes it."""
    directory = tmp_path / "cache"
    _settle_now()
    assert _quick_says(installed, cache_dir=str(directory)) is True
    (entry_file,) = directory.iterdir()
    entry = cache.decode(entry_file.read_bytes())
    assert entry is not None
    target = str(installed.site_packages / "qdemo/data.bin")
    planted = tuple((p, fp, (("sha256", b"\0" * 32),) if p == target else d) for p, fp, d in entry.files)
    lie = cache.encode(cache.Entry(entry.dist_path, entry.record, None, planted))
    entry_file.write_bytes(lie)
    assert _quick_says(installed, cache_dir=str(directory)) is False
    entry_file.write_bytes(lie)  # each rewrites the entry with what matched, so plant it again
    assert _verifier_says(installed, cache_dir=str(directory)) is False
    assert _quick_says(installed) is True  # without the cache the bytes are intact


def test_a_broken_install_caches_what_matched_and_no_verdict(installed: Venv, tmp_path: Path) -> None:
    victim = installed.site_packages / "qdemo/__init__.py"
    victim.write_bytes(b"VALUE = 2\n")
    _settle_now()
    directory = tmp_path / "cache"
    assert _quick_says(installed, cache_dir=str(directory)) is False
    (entry_file,) = directory.iterdir()
    entry = cache.decode(entry_file.read_bytes())
    assert entry is not None and entry.verdict_root is None
    hashed = [row[0] for row in read_record(_record(installed)) if row[1]]
    recorded = {os.path.normpath(installed.site_packages / path) for path in hashed}
    assert {p for p, _, _ in entry.files} == recorded - {str(victim)}


# --------------------------------------------------------------------------
# the hashing itself
# --------------------------------------------------------------------------


@pytest.mark.parametrize("read_ahead", [False, True])
def test_hash_with_and_without_a_reader_thread(tmp_path: Path, read_ahead: bool) -> None:
    path = tmp_path / "big.bin"
    path.write_bytes(BIG)
    st = os.stat(path)
    hashed = reading.hash_regular(str(path), st, "sha256", [], read_ahead)
    assert hashed == (cache.identity(st), hashlib.sha256(BIG).digest())
    # Another file at the path since the stat (a new inode) is refused, not hashed.
    path.rename(tmp_path / "old.bin")
    path.write_bytes(BIG)
    assert reading.hash_regular(str(path), st, "sha256", [], read_ahead) is None


def test_a_touch_between_stat_and_open_is_no_change(tmp_path: Path) -> None:
    """As the verifier: the fingerprint is the open file's, so a touch just before reading is harmless."""
    path = tmp_path / "big.bin"
    path.write_bytes(BIG)
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    hashed = reading.hash_regular(str(path), st, "sha256", [], False)
    assert hashed == (cache.identity(os.stat(path)), hashlib.sha256(BIG).digest())


def test_a_reader_that_fails_stops_the_hash(tmp_path: Path) -> None:
    path = tmp_path / "dir"
    path.mkdir()
    fd = os.open(path, os.O_RDONLY)
    try:
        with pytest.raises(OSError):
            reading._feed_read_ahead(fd, 1 << 20, lambda _: None)  # reading a directory fails: EISDIR
    finally:
        os.close(fd)


def _settle_now() -> None:
    """Let just-installed files age past the cache's settle window (see cache.SETTLE_NS)."""
    time.sleep(2 * cache.SETTLE_NS / 1e9)


@pytest.mark.parametrize("small_threads", [1, 2, 3])
def test_threads_past_the_small_file_limit_leave_no_file_unchecked(
    installed: Venv, monkeypatch: pytest.MonkeyPatch, small_threads: int
) -> None:
    """More threads than may take small files: those that stop early (the caller's too) leave them to the rest."""
    monkeypatch.setattr(quick, "_cpus", lambda: 6)
    monkeypatch.setattr(quick, "_SMALL_THREADS", small_threads)
    monkeypatch.setattr(quick, "_SMALL_FILE", 64)  # data.bin and the dist-info's bigger files are "big"
    real = quick._examine

    def slow_on_small_files(row: tuple[str, str, bytes, int], *rest: object) -> object:
        if row[3] < 64:  # the small files' threads are still busy when the others run out of big ones
            time.sleep(0.02)
        return real(row, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(quick, "_examine", slow_on_small_files)
    for attempt in range(5):
        assert _quick_says(installed) is True, attempt
    victim = installed.site_packages / "qdemo/sub/leaf.txt"  # small: the last to be taken
    victim.write_bytes(b"LEAF\n")
    assert _quick_says(installed) is False
    assert _verifier_says(installed) is False


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts the kernel's threads through /proc")
@pytest.mark.parametrize(
    "damage",
    ["intact", "flipped byte in the biggest", "biggest truncated", "biggest gone", "record not plain", "cached"],
)
def test_the_biggest_file_started_early_agrees_with_the_verifier(
    templates: dict[str, Venv], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    """The biggest file is examined while RECORD is parsed: the same answers, and no thread left behind."""
    monkeypatch.setattr(quick, "_cpus", lambda: 4)
    venv = copy_venv(templates["big"], tmp_path / "venv")
    big = venv.site_packages / "qdemo/big.bin"
    cache_dir = None
    if damage == "flipped byte in the biggest":
        data = bytearray(big.read_bytes())
        data[len(data) // 2] ^= 1
        big.write_bytes(bytes(data))
    elif damage == "biggest truncated":
        big.write_bytes(big.read_bytes()[:-1])
    elif damage == "biggest gone":
        big.unlink()
    elif damage == "record not plain":
        _record(venv).write_text(_record(venv).read_text().replace("qdemo/sub/leaf.txt", '"qdemo/sub/leaf.txt"'))
    elif damage == "cached":
        cache_dir = str(tmp_path / "cache")
        _settle_now()
        assert _quick_says(venv, cache_dir=cache_dir) is True  # fills the cache: big.bin is known next time
    before = settled_threads(1)  # earlier threads (the cache fill's) have exited
    started: list[list[quick.Head]] = []
    real = quick._heads_start
    monkeypatch.setattr(quick, "_heads_start", lambda *args: started.append(real(*args)) or started[-1])
    answer = _quick_says(venv, cache_dir=cache_dir)
    assert settled_threads(before) == before
    if damage == "record not plain":
        assert answer is None  # the verifier decides
    else:
        assert answer is _verifier_says(venv, cache_dir=cache_dir) is (damage in ("intact", "cached"))
    # The biggest file starts early, unless the cache knows it (or it is gone: it still starts).
    assert len(started[0]) == (0 if damage == "cached" else 1)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts the kernel's threads through /proc")
@pytest.mark.parametrize(
    ("damage", "cpus"),
    [
        ("intact", 4),
        ("intact", 2),
        ("second flipped", 4),
        ("second truncated", 4),
        ("second grown", 4),
        ("second gone", 4),
        ("second flipped", 2),
        ("second cached", 4),
        ("small file flipped", 4),
    ],
)
def test_every_big_file_starts_early_while_cores_allow(
    templates: dict[str, Venv], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str, cpus: int
) -> None:
    """Each big file the cache does not know starts before RECORD is parsed (one core is kept for the
    parse): the same answers as the verifier, and no thread left behind."""
    monkeypatch.setattr(quick, "_cpus", lambda: cpus)
    venv = copy_venv(templates["bigs"], tmp_path / "venv")
    second = venv.site_packages / "qdemo/big2.bin"
    cache_dir = None
    if damage == "second cached":
        cache_dir = str(tmp_path / "cache")
        _settle_now()
        assert _quick_says(venv, cache_dir=cache_dir) is True
        entry = cache.load(cache_dir, str(venv.dist_info("qdemo")), cache.record_identity(str(venv.dist_info("qdemo"))))
        assert entry is not None
        # Only big2.bin stays known: the entry is rewritten without the others.
        kept = tuple(f for f in entry.files if f[0] == str(second))
        assert cache.store(cache_dir, cache.Entry(entry.dist_path, entry.record, None, kept))
    elif damage == "second flipped":
        data = bytearray(second.read_bytes())
        data[-1] ^= 1
        second.write_bytes(bytes(data))
    elif damage == "second truncated":
        second.write_bytes(second.read_bytes()[:-1])
    elif damage == "second grown":
        second.write_bytes(second.read_bytes() + b"!")
    elif damage == "second gone":
        second.unlink()
    elif damage == "small file flipped":
        (venv.site_packages / "qdemo/__init__.py").write_bytes(b"VALUE = 2\n")
    before = settled_threads(1)  # earlier threads (the cache fill's) have exited
    started: list[list[quick.Head]] = []
    real = quick._heads_start
    monkeypatch.setattr(quick, "_heads_start", lambda *args: started.append(real(*args)) or started[-1])
    hashed: list[str] = []
    real_hash = quick.hash_regular
    monkeypatch.setattr(quick, "hash_regular", lambda path, *rest: hashed.append(path) or real_hash(path, *rest))
    answer = _quick_says(venv, cache_dir=cache_dir)
    assert settled_threads(before) == before
    assert sorted(hashed) == sorted(set(hashed))  # a file started early is not examined again
    assert answer is _verifier_says(venv, cache_dir=cache_dir) is (damage in ("intact", "second cached"))
    names = [os.path.basename(row[0]) for row, _, _ in started[0]]
    if damage == "second cached":
        assert names == ["big.bin"]
    elif cpus == 2:
        assert names == ["big.bin"]  # one core for the parse, one for the biggest: no room for more
    else:
        assert names == ["big.bin", "big2.bin"]  # biggest first


@pytest.mark.parametrize("holds", [True, False])
def test_entry_encoded_while_the_last_big_file_hashes_is_written_only_if_it_holds(
    templates: dict[str, Venv], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, holds: bool
) -> None:
    """The entry is encoded ahead while big.bin still hashes, assuming it matches as it is; those bytes are
    written only if it did, else the entry is encoded again from what was found."""
    monkeypatch.setattr(quick, "_cpus", lambda: 4)
    venv = copy_venv(templates["big"], tmp_path / "venv")
    cache_dir = str(tmp_path / "cache")
    _settle_now()
    real = quick._examine

    def slow_big(row: tuple[str, str, bytes, int], *rest: object) -> object:
        if row[0].endswith("big.bin"):
            time.sleep(0.3)  # still hashing once every other file is done
            found = real(row, *rest)  # type: ignore[arg-type]
            return found if holds else True  # True: it matched, but too recently to be cached
        return real(row, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(quick, "_examine", slow_big)
    ahead: list[object] = []
    real_ahead = quick._encode_ahead
    monkeypatch.setattr(quick, "_encode_ahead", lambda *args: ahead.append(real_ahead(*args)) or ahead[-1])
    stored: list[cache.Entry] = []
    real_store = cache.store
    monkeypatch.setattr(cache, "store", lambda directory, entry: stored.append(entry) or real_store(directory, entry))
    assert _quick_says(venv, cache_dir=cache_dir) is True
    assert len(ahead) == 1 and ahead[0] is not None  # encoded while big.bin hashed
    dist_info = str(venv.dist_info("qdemo"))
    entry = cache.load(cache_dir, dist_info, cache.record_identity(dist_info))  # type: ignore[arg-type]
    assert entry is not None
    big = str(venv.site_packages / "qdemo/big.bin")
    cached = {path: identity for path, identity, _ in entry.files}
    if holds:
        assert stored == []  # the bytes encoded ahead were written as they were
        assert entry.verdict_root == str(venv.prefix)
        assert cached[big] == cache.identity(os.stat(big))
        rows = quick.plain_rows(_record(venv).read_text(), str(venv.site_packages), str(venv.prefix))
        assert rows is not None and sorted(cached) == sorted(row[0] for row in rows)
    else:
        assert len(stored) == 1  # encoded again: the assumption did not hold
        assert entry.verdict_root is None
        assert big not in cached


@pytest.mark.unit
def test_the_gates_copy_of_the_match_rule_is_the_judges() -> None:
    """Whether bytes are a row's is decided in model/record.py; the stdlib-only gate keeps a copy: same answers."""
    from wheeldoctor.model.record import bytes_match

    digest, other = b"\x01" * 32, b"\x02" * 32
    sizes = (0, 5, 6)
    for row_size in sizes:
        for size in sizes:
            for seen in (digest, other, None):
                assert quick.bytes_match(digest, row_size, size, seen) is bytes_match(digest, row_size, size, seen)

"""The memo of RECORD digests: kept by RECORD's fingerprint; worthless once RECORD changes or the memo is damaged."""

from __future__ import annotations

import os
import time
from pathlib import Path

from wheeldoctor.engine import cache
from wheeldoctor.engine.record_digests import RecordDigests
from wheeldoctor.model import fingerprint


def dist_info(site: Path, rows: bytes = b"a.py,sha256=x,1\n") -> Path:
    path = site / "a-1.0.dist-info"
    path.mkdir(parents=True, exist_ok=True)
    (path / "RECORD").write_bytes(rows)
    time.sleep(2 * cache.SETTLE_NS / 1e9)  # settled: a later write would move the ctime
    return path


def test_a_kept_digest_is_found_while_record_keeps_its_fingerprint(tmp_path: Path) -> None:
    site, store = tmp_path / "site", str(tmp_path / "cache")
    os.makedirs(store, mode=0o700)
    path = dist_info(site)
    identity = fingerprint.settled_record_identity(str(path))
    assert identity is not None
    memo = RecordDigests(store, str(site))
    assert memo.get(str(path), identity) is None
    memo.keep(str(path), identity, "d" * 64)
    memo.save()
    assert RecordDigests(store, str(site)).get(str(path), identity) == "d" * 64
    assert RecordDigests(store, str(tmp_path / "elsewhere")).get(str(path), identity) is None
    time.sleep(0.01)
    (path / "RECORD").write_bytes(b"a.py,sha256=y,1\n")  # rewritten: another ctime, another fingerprint
    assert RecordDigests(store, str(site)).get(str(path), fingerprint.record_identity(str(path))) is None


def test_a_damaged_memo_is_not_used(tmp_path: Path) -> None:
    site, store = tmp_path / "site", str(tmp_path / "cache")
    os.makedirs(store, mode=0o700)
    path = dist_info(site)
    identity = fingerprint.settled_record_identity(str(path))
    memo = RecordDigests(store, str(site))
    memo.keep(str(path), identity, "d" * 64)
    memo.save()
    (written,) = Path(store).glob("*.records")
    data = bytearray(written.read_bytes())
    data[-1] ^= 0xFF
    written.write_bytes(bytes(data))
    assert RecordDigests(store, str(site)).get(str(path), identity) is None


def test_a_record_changed_just_now_is_not_kept(tmp_path: Path) -> None:
    site, store = tmp_path / "site", str(tmp_path / "cache")
    os.makedirs(store, mode=0o700)
    path = dist_info(site)
    (path / "RECORD").write_bytes(b"fresh\n")
    fresh = fingerprint.record_identity(str(path))
    memo = RecordDigests(store, str(site))
    memo.keep(str(path), fresh, "d" * 64)
    memo.save()
    assert RecordDigests(store, str(site)).get(str(path), fresh) is None

"""The memo of RECORD digests: kept by RECORD's fingerprint; worthless once RECORD changes or the memo is damaged."""

from __future__ import annotations

import os
import time
from pathlib import Path

from wheeldoctor.engine import cache
from wheeldoctor.engine.distinfo_memo import record_digests


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
    memo = record_digests(store, str(site))
    seen = memo.fingerprints(str(path))
    assert seen is not None
    assert memo.get(path.name, seen) is None
    memo.keep(str(path), seen, "d" * 64)
    memo.save()
    assert record_digests(store, str(site)).get(path.name, seen) == "d" * 64
    assert record_digests(store, str(tmp_path / "elsewhere")).get(path.name, seen) is None
    time.sleep(0.01)
    (path / "RECORD").write_bytes(b"a.py,sha256=y,1\n")  # rewritten: another ctime, another fingerprint
    again = record_digests(store, str(site))
    assert again.get(path.name, again.fingerprints(str(path))) is None


def test_a_damaged_memo_is_not_used(tmp_path: Path) -> None:
    site, store = tmp_path / "site", str(tmp_path / "cache")
    os.makedirs(store, mode=0o700)
    path = dist_info(site)
    memo = record_digests(store, str(site))
    seen = memo.fingerprints(str(path))
    memo.keep(str(path), seen, "d" * 64)
    memo.save()
    (written,) = Path(store).glob("*.records")
    data = bytearray(written.read_bytes())
    data[-1] ^= 0xFF
    written.write_bytes(bytes(data))
    assert record_digests(store, str(site)).get(path.name, seen) is None


def test_a_record_changed_just_now_is_not_kept(tmp_path: Path) -> None:
    site, store = tmp_path / "site", str(tmp_path / "cache")
    os.makedirs(store, mode=0o700)
    path = dist_info(site)
    (path / "RECORD").write_bytes(b"fresh\n")
    memo = record_digests(store, str(site))
    fresh = memo.fingerprints(str(path))
    memo.keep(str(path), fresh, "d" * 64)
    memo.save()
    assert record_digests(store, str(site)).get(path.name, fresh) is None

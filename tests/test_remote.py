"""Locked wheels' RECORDs fetched from a local index on 127.0.0.1: ranges, the cache, fallbacks, failures."""

from __future__ import annotations

import hashlib
import os
import zipfile
from pathlib import Path

import pytest
from helpers import WheelFactory, build_wheel
from range_server import range_index

from wheeldoctor.fetch.remote import TAIL_BYTES, Fetcher
from wheeldoctor.fetch.wheel_read import FetchError
from wheeldoctor.formats.lock_model import LockedWheel, locked_wheel
from wheeldoctor.formats.record import decode_record
from wheeldoctor.model.credentials import redact
from wheeldoctor.model.findings import Code

BIG = 24 << 20


def _locked(wheel: Path, url: str | None, *, sha256: str | None = None, size: bool = True) -> LockedWheel:
    data = wheel.read_bytes()
    return locked_wheel(
        "k",
        filename=wheel.name,
        url=url,
        path=None,
        sha256=sha256 or hashlib.sha256(data).hexdigest(),
        size=len(data) if size else None,
        base="/",
    )


@pytest.fixture
def big_wheel(tmp_path: Path) -> Path:
    files = {f"big/part{i}.bin": os.urandom(BIG // 4) for i in range(4)}
    files["big/__init__.py"] = b"VERSION = 1\n"
    return build_wheel(tmp_path / "index", "big", "1.0", files, requires=["small"])


def test_only_the_tail_and_the_record_are_fetched_then_the_cache_serves(big_wheel: Path, tmp_path: Path) -> None:
    with range_index(big_wheel.parent) as index:
        wheel = _locked(big_wheel, index.file_url(big_wheel.name))
        fetcher = Fetcher(cache_dir=str(tmp_path / "cache"))
        (first,) = fetcher.fetch_all([wheel])
        served = index.wheel_requests()
        assert first.source == "range" and not first.verified and first.findings == ()
        assert all(s.status == 206 and s.range for s in served)
        sent = sum(s.sent for s in served)
        assert sent == first.fetched
        assert sent < 0.05 * big_wheel.stat().st_size
        with zipfile.ZipFile(big_wheel) as archive:
            assert first.record == archive.read("big-1.0.dist-info/RECORD")
            assert first.metadata == archive.read("big-1.0.dist-info/METADATA")
        assert {r.path for r in decode_record(first.record).rows} >= {"big/part0.bin", "big/__init__.py"}
        index.clear()
        (again,) = Fetcher(cache_dir=str(tmp_path / "cache")).fetch_all([wheel])
        assert index.log == []
        assert again.source == "cache" and again.record == first.record


def test_a_warm_cache_works_offline_and_a_cold_one_names_the_host(big_wheel: Path, tmp_path: Path) -> None:
    with range_index(big_wheel.parent) as index:
        wheel = _locked(big_wheel, index.file_url(big_wheel.name))
        Fetcher(cache_dir=str(tmp_path / "cache")).fetch_all([wheel])
    # The server is gone: nothing listens on its port any more.
    (cached,) = Fetcher(cache_dir=str(tmp_path / "cache")).fetch_all([wheel])
    assert cached.source == "cache"
    with pytest.raises(FetchError) as caught:
        Fetcher(cache_dir=None).fetch_all([wheel])
    assert str(caught.value) == f"cannot reach 127.0.0.1:{index.port}: connection failed"


def test_a_server_that_ignores_range_sends_the_whole_wheel_and_it_is_said(
    wheel_factory: WheelFactory, tmp_path: Path
) -> None:
    built = wheel_factory("plain", "1.0", {"plain/__init__.py": b"x = 1\n"})
    with range_index(built.parent) as index:
        index.ignore_range = True
        (fetched,) = Fetcher(cache_dir=None).fetch_all([_locked(built, index.file_url(built.name))])
    assert fetched.source == "download" and fetched.verified
    assert fetched.note is not None and "ignored Range" in fetched.note
    assert fetched.fetched == built.stat().st_size


def test_a_404_is_one_line_naming_the_url_without_its_credentials(wheel_factory: WheelFactory) -> None:
    built = wheel_factory("gone", "1.0", {"gone/__init__.py": b""})
    with range_index(built.parent) as index:
        index.missing.add(built.name)
        url = index.file_url(built.name).replace("http://", "http://user:s3cret@")
        with pytest.raises(FetchError) as caught:
            Fetcher(cache_dir=None).fetch_all([_locked(built, url)])
    message = str(caught.value)
    assert message == f"{redact(url)}: not found (404)"
    assert "s3cret" not in message and "***@" in message


def test_5xx_answers_are_retried(wheel_factory: WheelFactory) -> None:
    built = wheel_factory("flaky", "1.0", {"flaky/__init__.py": b""})
    with range_index(built.parent) as index:
        index.fail_next = 2
        (fetched,) = Fetcher(cache_dir=None).fetch_all([_locked(built, index.file_url(built.name))])
        assert [s.status for s in index.wheel_requests()][:3] == [503, 503, 206]
    assert fetched.record is not None


def test_a_wheel_without_a_record_member_is_a_finding(tmp_path: Path) -> None:
    (tmp_path / "index").mkdir()
    bare = tmp_path / "index" / "norecord-1.0-py3-none-any.whl"
    with zipfile.ZipFile(bare, "w") as archive:
        archive.writestr("norecord/__init__.py", b"")
        archive.writestr("norecord-1.0.dist-info/METADATA", b"Name: norecord\n")
    with range_index(bare.parent) as index:
        (fetched,) = Fetcher(cache_dir=str(tmp_path / "cache")).fetch_all([_locked(bare, index.file_url(bare.name))])
    assert fetched.record is None
    assert [f.code for f in fetched.findings] == [Code.NO_RECORD]
    assert not (tmp_path / "cache" / "records").exists() or not os.listdir(tmp_path / "cache" / "records")


def test_a_local_wheel_is_trusted_only_when_its_hash_is_the_locks(wheel_factory: WheelFactory, tmp_path: Path) -> None:
    built = wheel_factory("local", "1.0", {"local/__init__.py": b"x = 1\n"})
    good = _locked(built, "https://unreachable.invalid/" + built.name)
    (fetched,) = Fetcher(cache_dir=None, find_links=[str(built.parent)]).fetch_all([good])
    assert fetched.source == "local" and fetched.verified and fetched.record is not None
    bad = _locked(built, "https://unreachable.invalid/" + built.name, sha256="0" * 64)
    (refused,) = Fetcher(cache_dir=None, find_links=[str(built.parent)]).fetch_all([bad])
    assert refused.record is None
    (finding,) = refused.findings
    assert finding.code is Code.LOCK_HASH_MISMATCH and finding.expected == "sha256:" + "0" * 64


def test_verify_wheels_downloads_and_checks_the_hash(wheel_factory: WheelFactory, tmp_path: Path) -> None:
    built = wheel_factory("checked", "1.0", {"checked/__init__.py": b"x = 1\n"})
    with range_index(built.parent) as index:
        url = index.file_url(built.name)
        (ok,) = Fetcher(cache_dir=None, verify_wheels=True).fetch_all([_locked(built, url)])
        assert [s.range for s in index.wheel_requests()] == [None]
        (wrong,) = Fetcher(cache_dir=None, verify_wheels=True).fetch_all([_locked(built, url, sha256="1" * 64)])
    assert ok.source == "download" and ok.verified and ok.record is not None
    assert [f.code for f in wrong.findings] == [Code.LOCK_HASH_MISMATCH] and wrong.record is None


def test_a_range_cached_record_does_not_satisfy_verify_wheels(wheel_factory: WheelFactory, tmp_path: Path) -> None:
    # Larger than the first range, so that the range fetch does not see the whole wheel (a small one it hashes).
    built = wheel_factory("twice", "1.0", {"twice/__init__.py": b"", "twice/data.bin": os.urandom(TAIL_BYTES * 2)})
    with range_index(built.parent) as index:
        wheel = _locked(built, index.file_url(built.name))
        (ranged,) = Fetcher(cache_dir=str(tmp_path / "c")).fetch_all([wheel])
        assert ranged.source == "range" and not ranged.verified
        index.clear()
        (again,) = Fetcher(cache_dir=str(tmp_path / "c"), verify_wheels=True).fetch_all([wheel])
        assert len(index.wheel_requests()) == 1
    assert again.source == "download" and again.verified


def test_a_small_wheel_that_comes_whole_by_range_is_hashed(wheel_factory: WheelFactory) -> None:
    built = wheel_factory("small", "1.0", {"small/__init__.py": b"x = 1\n"})
    assert built.stat().st_size < TAIL_BYTES
    with range_index(built.parent) as index:
        url = index.file_url(built.name)
        (ok,) = Fetcher(cache_dir=None).fetch_all([_locked(built, url)])
        (wrong,) = Fetcher(cache_dir=None).fetch_all([_locked(built, url, sha256="2" * 64)])
        assert [s.status for s in index.wheel_requests()] == [206, 206]
    assert ok.source == "range" and ok.verified and ok.record is not None
    assert [f.code for f in wrong.findings] == [Code.LOCK_HASH_MISMATCH] and wrong.record is None


def test_parallel_fetches_report_progress(wheel_factory: WheelFactory) -> None:
    built = [wheel_factory(f"p{i}", "1.0", {f"p{i}/__init__.py": b""}) for i in range(12)]
    seen: list[tuple[int, int]] = []
    with range_index(built[0].parent) as index:
        wheels = [_locked(b, index.file_url(b.name)) for b in built]
        fetched = Fetcher(cache_dir=None, jobs=4).fetch_all(wheels, lambda done, total, _w: seen.append((done, total)))
    assert [f.wheel for f in fetched] == wheels
    assert sorted(seen) == [(i, 12) for i in range(1, 13)]


def test_credentials_come_from_the_url_or_netrc_and_proxies_from_the_environment(
    wheel_factory: WheelFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import base64

    built = wheel_factory("secret", "1.0", {"secret/__init__.py": b""})
    netrc = tmp_path / ".netrc"
    netrc.write_text("machine 127.0.0.1 login fromnetrc password pw2\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("HOME", str(tmp_path))
    basic = lambda text: "Basic " + base64.b64encode(text.encode()).decode()  # noqa: E731
    with range_index(built.parent) as index:
        url = index.file_url(built.name)
        Fetcher(cache_dir=None).fetch_all([_locked(built, url.replace("http://", "http://me:pw1@"))])
        Fetcher(cache_dir=None).fetch_all([_locked(built, url)])
        assert [s.authorization for s in index.wheel_requests()] == [basic("me:pw1"), basic("fromnetrc:pw2")]
        with range_index(built.parent) as proxy:
            monkeypatch.setenv("HTTP_PROXY", f"http://puser:ppw@127.0.0.1:{proxy.port}")
            monkeypatch.setenv("NO_PROXY", "")
            index.clear()
            (fetched,) = Fetcher(cache_dir=None).fetch_all([_locked(built, url)])
            assert fetched.record is not None and index.log == []
            assert [s.path for s in proxy.wheel_requests()] == [url]
            assert proxy.wheel_requests()[0].proxy_authorization == basic("puser:ppw")


def test_a_malformed_record_member_becomes_a_finding_of_the_locked_wheel(tmp_path: Path) -> None:
    from wheeldoctor.formats.lock_model import LockedPackage
    from wheeldoctor.judge.locked import locked_wheel_files

    (tmp_path / "index").mkdir()
    bad = tmp_path / "index" / "badrecord-1.0-py3-none-any.whl"
    with zipfile.ZipFile(bad, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("badrecord/__init__.py", b"")
        archive.writestr("badrecord-1.0.dist-info/METADATA", b"Name: badrecord\nRequires-Dist: other\n")
        archive.writestr("badrecord-1.0.dist-info/RECORD", b"badrecord/__init__.py,sha256=\xff\xfe,0\n")
    with range_index(bad.parent) as index:
        wheel = _locked(bad, index.file_url(bad.name))
        (fetched,) = Fetcher(cache_dir=None).fetch_all([wheel])
    package = LockedPackage(name="badrecord", version="1.0", wheels=(wheel,), selected=wheel)  # type: ignore[arg-type]
    (read,) = locked_wheel_files([fetched], [package])
    assert read.requires_dist == ("other",)
    assert [f.code for f in read.findings] == [Code.RECORD_UNDECODABLE]
    assert read.members == ()

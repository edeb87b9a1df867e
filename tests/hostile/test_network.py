"""An index that lies (issue #49): every network read has a byte cap and a deadline.

Each attack is a real server on 127.0.0.1 (:mod:`range_server`'s lies) against the real
fetcher. Deadlines are shortened here (``Fetcher(seconds=...)``) so the tests run in
seconds; ``bench/hostile_index.py`` runs the same attacks through the command line with
the shipped bounds and reports their time and peak memory.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pytest
from helpers import WheelFactory
from range_server import answer, drip, endless, range_index, redirect

from wheeldoctor.fetch import remote, wheel_read
from wheeldoctor.fetch.remote import Fetcher
from wheeldoctor.fetch.wheel_read import FetchError
from wheeldoctor.formats.lock_model import LockedWheel, locked_wheel
from wheeldoctor.model.findings import Code


def _locked(wheel: Path, url: str, *, size: bool = True) -> LockedWheel:
    data = wheel.read_bytes()
    return locked_wheel(
        "k",
        filename=wheel.name,
        url=url,
        path=None,
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data) if size else None,
        base="/",
    )


@pytest.fixture
def built(wheel_factory: WheelFactory) -> Path:
    return wheel_factory("lied", "1.0", {"lied/__init__.py": b"x = 1\n" * 1000})


def test_endless_bodies_for_wheels_without_size_stop_at_the_runs_cap(
    wheel_factory: WheelFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Range ignored, no Content-Length, no end, eight wheels at once: cut at the run's cap (shrunk here), on disk."""
    monkeypatch.setattr(remote, "UNASKED_LIMIT", 8 << 20)
    wheels = [wheel_factory(f"e{i}", "1.0", {f"e{i}/__init__.py": b""}) for i in range(8)]
    with range_index(wheels[0].parent) as index:
        index.lie = endless
        with pytest.raises(FetchError) as caught:
            Fetcher(cache_dir=None).fetch_all([_locked(w, index.file_url(w.name), size=False) for w in wheels])
    assert "the index ignores Range, and more than 8 MiB of whole wheels came this run" in str(caught.value)
    assert caught.value.tip == "--verify-wheels downloads whole wheels on purpose (up to the sizes the lock gives)"


def test_an_endless_body_asked_for_without_a_size_stops_at_the_wheels_cap(
    built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wheel_read, "UNSIZED_LIMIT", 8 << 20)
    with range_index(built.parent) as index:
        index.lie = endless
        with pytest.raises(FetchError) as caught:
            Fetcher(cache_dir=None, verify_wheels=True).fetch_all(
                [_locked(built, index.file_url(built.name), size=False)]
            )
    assert str(caught.value) == f"{index.file_url(built.name)}: more than {8 << 20} bytes"


def test_an_endless_body_for_a_sized_wheel_stops_at_its_size(built: Path) -> None:
    with range_index(built.parent) as index:
        index.lie = endless
        with pytest.raises(FetchError) as caught:
            Fetcher(cache_dir=None).fetch_all([_locked(built, index.file_url(built.name))])
    assert str(caught.value) == f"{index.file_url(built.name)}: more than {built.stat().st_size} bytes"


@pytest.mark.parametrize("headers", [False, True], ids=["body", "headers"])
def test_a_server_that_drips_is_cut_off_at_the_wheels_deadline(built: Path, headers: bool) -> None:
    """One byte every 0.2 s never trips the 30 s per-read timeout; the wheel's deadline (2 s here) ends it."""
    with range_index(built.parent) as index:
        index.lie = drip(0.2, headers=headers)
        started = time.monotonic()
        with pytest.raises(FetchError) as caught:
            Fetcher(cache_dir=None, seconds=2).fetch_all([_locked(built, index.file_url(built.name))])
        took = time.monotonic() - started
    assert "no complete answer within 2 s (the wheel's deadline)" in str(caught.value)
    assert took < 10, took  # the deadline, not the drip's end (it would take minutes)


def test_retry_after_is_bounded_and_so_are_the_retries(built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("wheeldoctor.fetch.http.RETRY_AFTER_MAX", 0.2)
    with range_index(built.parent) as index:
        index.lie = answer(503, {"Retry-After": "999999"})
        started = time.monotonic()
        with pytest.raises(FetchError) as caught:
            Fetcher(cache_dir=None).fetch_all([_locked(built, index.file_url(built.name))])
        took = time.monotonic() - started
        assert len(index.wheel_requests()) == 4  # the first and three retries
    assert str(caught.value) == f"{index.file_url(built.name)}: HTTP 503"
    assert took < 5, took  # urllib3 would have slept for 999999 s (6 hours with its own cap)


def test_a_206_must_be_the_range_asked_for(built: Path) -> None:
    data = built.read_bytes()
    size = len(data)
    lies = {
        "another range": answer(206, {"Content-Range": f"bytes 0-99/{size}"}, data[:100]),
        "no Content-Range": answer(206, {}, data[-1000:]),
        "a huge number": answer(206, {"Content-Range": "bytes 0-1/" + "9" * 5000}, data[:2]),
        "a body longer than the range": answer(
            206, {"Content-Range": f"bytes {size - 100}-{size - 1}/{size}", "Content-Length": "200"}, b"x" * 200
        ),
    }
    with range_index(built.parent) as index:
        for why, lie in lies.items():
            index.lie = lie
            with pytest.raises(FetchError) as caught:
                Fetcher(cache_dir=None).fetch_all([_locked(built, index.file_url(built.name))])
            message = str(caught.value)
            assert message.startswith(index.file_url(built.name) + ": "), (why, message)
            assert "internal error" not in message and len(message.splitlines()) == 1


@pytest.mark.parametrize(
    "headers",
    [
        {"Content-Length": "99999999999999999999999"},
        {"Content-Length": "1_000"},
        {"Content-Length": "-5"},
        {"Content-Encoding": "gzip"},
    ],
    ids=["huge length", "underscored length", "negative length", "an encoding not asked for"],
)
def test_header_numbers_and_encodings_are_parsed_with_a_limit(built: Path, headers: dict[str, str]) -> None:
    with range_index(built.parent) as index:
        index.lie = answer(200, headers, b"PK")
        with pytest.raises(FetchError) as caught:
            Fetcher(cache_dir=None).fetch_all([_locked(built, index.file_url(built.name), size=False)])
    assert len(str(caught.value).splitlines()) == 1


def test_a_redirect_to_another_host_is_said_and_carries_no_credentials(built: Path) -> None:
    with range_index(built.parent) as index, range_index(built.parent) as other:
        index.lie = redirect(lambda name: other.file_url(name).replace("127.0.0.1", "localhost"))
        url = index.file_url(built.name).replace("http://", "http://user:pw@")
        (fetched,) = Fetcher(cache_dir=None).fetch_all([_locked(built, url)])
        assert other.wheel_requests() and all(s.authorization is None for s in other.wheel_requests())
    assert fetched.record is not None
    assert fetched.note == f"{url.replace('user:pw@', '***@')}: redirected to another host, localhost:{other.port}"


def test_redirects_are_few_and_never_leave_https_or_http(built: Path) -> None:
    with range_index(built.parent) as index:
        index.lie = redirect(index.file_url)  # to itself, for ever
        with pytest.raises(FetchError) as caught:
            Fetcher(cache_dir=None).fetch_all([_locked(built, index.file_url(built.name))])
        assert str(caught.value) == f"{index.file_url(built.name)}: more than 5 redirects"
        assert len(index.wheel_requests()) == 6
        index.lie = redirect(lambda name: f"file:///etc/{name}")
        with pytest.raises(FetchError) as caught:
            Fetcher(cache_dir=None).fetch_all([_locked(built, index.file_url(built.name))])
        assert "redirected to a URL that is not http(s)" in str(caught.value)


def test_a_failed_wheel_ends_the_others_in_flight(wheel_factory: WheelFactory) -> None:
    """One wheel is missing (404) while seven drip: the run ends with the 404 at once, not at their deadlines."""
    wheels = [wheel_factory(f"w{i}", "1.0", {f"w{i}/__init__.py": b""}) for i in range(8)]
    slow = drip(0.5)
    with range_index(wheels[0].parent) as index:

        def lie(handler: object, data: bytes) -> bool:
            if "w0-" in getattr(handler, "path", ""):
                answer(404, {}, b"gone")(handler, data)  # type: ignore[arg-type]
                return True
            return slow(handler, data)  # type: ignore[arg-type]

        index.lie = lie
        started = time.monotonic()
        with pytest.raises(FetchError) as caught:
            Fetcher(cache_dir=None, seconds=30).fetch_all([_locked(w, index.file_url(w.name)) for w in wheels])
        took = time.monotonic() - started
    assert "HTTP 404" in str(caught.value) or "not found (404)" in str(caught.value)
    assert took < 10, took


def test_a_central_directory_larger_than_the_limit_is_a_finding_not_a_download(tmp_path: Path) -> None:
    """The end record says the directory is 4 GiB: refused from the tail alone."""
    import struct

    (tmp_path / "index").mkdir()
    wheel = tmp_path / "index" / "bigdir-1.0-py3-none-any.whl"
    body = b"\0" * 1000
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 1, 1, 0xFFFFFFF0, 0, 0)
    wheel.write_bytes(body + end)
    with range_index(wheel.parent) as index:
        (fetched,) = Fetcher(cache_dir=None).fetch_all([_locked(wheel, index.file_url(wheel.name))])
        assert len(index.wheel_requests()) == 1
    assert [f.code for f in fetched.findings] == [Code.WHEEL_UNREADABLE]
    assert "central directory is 4294967280 bytes" in fetched.findings[0].message

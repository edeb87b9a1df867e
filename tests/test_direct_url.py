"""direct_url.json (PEP 610) read as untrusted input: each kind of source, and what is refused or dropped."""

from __future__ import annotations

import json

import pytest

from wheeldoctor.formats.direct_url import LIMIT, DirectUrl, parse

pytestmark = pytest.mark.unit

DIGEST = "4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274"


def test_an_archive_with_its_digests_old_and_new_spelling() -> None:
    found = parse(
        json.dumps({"url": "file:///w/six.whl", "archive_info": {"hash": f"sha256={DIGEST.upper()}"}}).encode()
    )
    assert found == DirectUrl(kind="archive", url="file:///w/six.whl", hashes=(("sha256", DIGEST),))
    both = {"hash": "md5=" + "0" * 32, "hashes": {"sha256": DIGEST, "sha512": "not hex"}}
    found = parse(json.dumps({"url": "https://x/six.whl", "archive_info": both}).encode())
    assert found is not None and found.hashes == (("md5", "0" * 32), ("sha256", DIGEST))
    assert found.digest("sha256") == DIGEST and found.digest("sha512") is None


def test_a_directory_and_a_vcs_checkout() -> None:
    local = parse(b'{"url": "file:///src/proj", "dir_info": {"editable": true}, "subdirectory": "pkg"}')
    assert local == DirectUrl(kind="directory", url="file:///src/proj", editable=True, subdirectory="pkg")
    vcs = {"vcs": "git", "commit_id": "abc123", "requested_revision": "v1"}
    found = parse(json.dumps({"url": "https://github.com/o/r", "vcs_info": vcs}).encode())
    assert found == DirectUrl(
        kind="vcs", url="https://github.com/o/r", vcs="git", commit_id="abc123", requested_revision="v1"
    )


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        ("https://user:tok3n@git.example.com/r", "https://git.example.com/r"),
        ("https://tok3n@git.example.com:8443/r", "https://git.example.com:8443/r"),
        ("ssh://git@github.com/o/r", "ssh://git@github.com/o/r"),
        ("https://[::1]:9/r", "https://[::1]:9/r"),
    ],
)
def test_credentials_never_come_out(url: str, kept: str) -> None:
    found = parse(json.dumps({"url": url, "dir_info": {}}).encode())
    assert found is not None and found.url == kept


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"[]",
        b'{"url": 3, "dir_info": {}}',
        b'{"url": "file:///x"}',
        b'{"url": "no scheme", "dir_info": {}}',
        b'{"url": "https://x/\\u001b[31m", "dir_info": {}}',
        b'{"url": "https://x:99999/", "dir_info": {}}',
        b'{"url": "file:///x", "vcs_info": {"vcs": "git"}}',
        b'{"url": "file:///x", "dir_info": {}, "deep": ' + b"[" * 100 + b"]" * 100 + b"}",
        b'{"url": "file:///x", "dir_info": {}, "pad": "' + b"x" * LIMIT + b'"}',
        b"\xff\xfe",
    ],
)
def test_anything_else_is_no_source(data: bytes) -> None:
    assert parse(data) is None

"""A lock URL's user:password never reaches a report, in any field of any format (issue #49)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import no_traceback
from helpers import WheelFactory, run_cli
from locks import Entry, write_pylock
from range_server import range_index

SECRET = "s3cretPW"
TARGET = ("--python-version", "3.11", "--platform", "manylinux_2_28_x86_64")


@pytest.mark.parametrize("fmt", ["text", "json", "github", "junit", "sarif"])
def test_wheels_lock_never_writes_the_urls_password(wheel_factory: WheelFactory, tmp_path: Path, fmt: str) -> None:
    good = wheel_factory("alpha", "1.0", {"alpha/__init__.py": b"A = 1\n"})
    broken = wheel_factory("beta", "1.0", {"beta/__init__.py": b"B = 1\n"})
    with range_index(good.parent) as index:
        url = index.file_url(good.name).replace("http://", f"http://user:{SECRET}@")
        bad = index.file_url(broken.name).replace("http://", f"http://user:{SECRET}@")
        # beta's lock hash is wrong: a finding that names the wheel, in every format.
        lock = write_pylock(tmp_path / "pylock.toml", Entry(good, url=url), Entry(broken, url=bad, sha256="0" * 64))
        done = run_cli("wheels", "--lock", lock, "--format", fmt, "--no-cache", "--verify-wheels", *TARGET)
    no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "WD085" in done.stdout
    assert SECRET not in done.stdout + done.stderr
    if fmt == "json":  # the one format that names the wheel by its URL
        assert f'"file": "http://***@127.0.0.1:{index.port}/files/{good.name}"' in done.stdout


@pytest.mark.unit
@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("https://u:pw@host/x.whl", "https://***@host/x.whl"),
        ("https://u:p@ss@host/x@y", "https://***@host/x@y"),  # the password holds an @: urlsplit splits at the last
        ("https://token@host", "https://***@host"),
        ("git+https://u:pw@host/r.git@v1 and https://h/x", "git+https://***@host/r.git@v1 and https://h/x"),
        ("https://u:p\nw@host/", "https://***@host/"),  # a newline, shown escaped, is not where the URL ends
        ("mail me@host, or https://host/x", "mail me@host, or https://host/x"),
    ],
)
def test_every_output_kind_hides_a_urls_credentials(given: str, shown: str) -> None:
    from wheeldoctor.report import inert

    assert inert.text(given) == shown
    assert inert.data(given) == shown
    for out in (inert.text, inert.data, inert.markup, inert.github_property, inert.markdown):
        assert "pw" not in out(given) and "ss@" not in out(given)

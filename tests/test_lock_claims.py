"""The lock's judgement on data: claims from the locked wheel's RECORD, RECORD rewritten, membership."""

from __future__ import annotations

import csv
import io

from helpers import record_hash

from wheeldoctor.formats.lock_fetched import FetchedRecord, summarize
from wheeldoctor.formats.lock_model import Lock, LockedPackage, locked_wheel
from wheeldoctor.formats.record import decode_record
from wheeldoctor.formats.wheelfile import unsafe_path
from wheeldoctor.judge.locked import Installed, lock_claims, membership
from wheeldoctor.model.findings import Code
from wheeldoctor.report.fetch import fetch_json, fetch_lines

DIST_INFO = "demo-1.0.dist-info"
FILES = {"demo/__init__.py": b"x = 1\n", "demo/core.py": b"def f(): pass\n", f"{DIST_INFO}/METADATA": b"Name: demo\n"}


def _record(files: dict[str, bytes], extra: list[list[str]] = ()) -> bytes:  # type: ignore[assignment]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for path, data in files.items():
        writer.writerow([path, record_hash(data), str(len(data))])
    writer.writerows(extra)
    writer.writerow([f"{DIST_INFO}/RECORD", "", ""])
    return out.getvalue().encode()


WHEEL = _record(FILES)


def test_an_installed_record_that_agrees_with_the_wheel_adds_no_finding() -> None:
    installed = decode_record(
        _record(
            FILES,
            [
                [f"{DIST_INFO}/INSTALLER", record_hash(b"uv\n"), "3"],
                ["demo/__pycache__/core.cpython-311.pyc", "", ""],
                ["../../../bin/demo", record_hash(b"#!python\n"), "9"],
            ],
        )
    )
    claims = lock_claims(installed, WHEEL, DIST_INFO)
    assert claims.findings == ()
    paths = {r.path for r in claims.record.rows}
    assert {"demo/__init__.py", "demo/core.py", f"{DIST_INFO}/INSTALLER", "../../../bin/demo"} <= paths


def test_a_rewritten_row_is_found_with_both_digests_and_the_wheel_row_is_the_claim() -> None:
    altered = {**FILES, "demo/core.py": b"import os; os.system('evil')\n"}
    claims = lock_claims(decode_record(_record(altered)), WHEEL, DIST_INFO)
    (finding,) = claims.findings
    assert finding.code is Code.RECORD_REWRITTEN
    assert finding.path == "demo/core.py"
    assert finding.expected is not None and record_hash(FILES["demo/core.py"]) in finding.expected
    assert finding.found is not None and record_hash(altered["demo/core.py"]) in finding.found
    (claim,) = [r for r in claims.record.rows if r.path == "demo/core.py"]
    assert claim.hash_text == record_hash(FILES["demo/core.py"])


def test_an_added_row_and_an_omitted_row_are_rewrites_too() -> None:
    added = _record(
        {k: v for k, v in FILES.items() if k != "demo/core.py"}, [["evil.pth", record_hash(b"import x"), "8"]]
    )
    claims = lock_claims(decode_record(added), WHEEL, DIST_INFO)
    assert sorted((f.code, f.path) for f in claims.findings) == [
        (Code.RECORD_REWRITTEN, "demo/core.py"),
        (Code.RECORD_REWRITTEN, "evil.pth"),
    ]
    # The omitted file is still claimed: its bytes are verified against the wheel's row.
    assert "demo/core.py" in {r.path for r in claims.record.rows}


def test_a_malformed_wheel_record_is_a_finding() -> None:
    claims = lock_claims(decode_record(_record(FILES)), b"\xff\xfe not utf-8", DIST_INFO)
    assert Code.RECORD_UNDECODABLE in {f.code for f in claims.findings}


def _package(name: str, version: str, filename: str) -> LockedPackage:
    wheel = locked_wheel(
        "k", filename=filename, url=f"https://h/{filename}", path=None, sha256=None, size=None, base="/"
    )
    return LockedPackage(name=name, version=version, wheels=(wheel,), selected=wheel)  # type: ignore[arg-type]


def test_membership_names_each_way_an_environment_differs_from_its_lock() -> None:
    lock = Lock(
        path="pylock.toml",
        kind="pylock",
        packages=(
            _package("requests", "2.32.3", "requests-2.32.3-py3-none-any.whl"),
            _package("six", "1.17.0", "six-1.17.0-py2.py3-none-any.whl"),
            _package("numpy", "2.1.0", "numpy-2.1.0-cp311-cp311-manylinux_2_17_x86_64.whl"),
            _package("idna", "3.10", "idna-3.10-py3-none-any.whl"),
            _package("certifi", "2024.8.30", "certifi-2024.8.30-py3-none-any.whl"),
        ),
    )
    installed = [
        Installed(name="requests", version="2.32.3", wheel_tags=("py3-none-any",)),
        Installed(name="six", version="1.16.0", wheel_tags=("py2-none-any", "py3-none-any")),
        Installed(name="numpy", version="2.1.0", wheel_tags=("cp311-cp311-linux_x86_64",)),
        Installed(
            name="certifi",
            version="2024.8.30",
            direct_url="file:///tmp/certifi-2024.8.30-py3-none-any.whl",
            direct_kind="dir_info",
        ),
        Installed(name="tomli", version="2.0.1", wheel_tags=("py3-none-any",)),
    ]
    judged = membership(lock, installed)
    codes = {name: [f.code for f in found] for name, found in judged.findings.items()}
    assert codes == {
        "six": [Code.LOCKED_OTHER_VERSION],
        "numpy": [Code.NOT_FROM_LOCKED_WHEEL],
        "certifi": [Code.NOT_FROM_LOCKED_WHEEL],
        "tomli": [Code.NOT_LOCKED],
    }
    assert [p.name for p in judged.missing] == ["idna"]
    (six,) = judged.findings["six"]
    assert (six.expected, six.found) == ("1.17.0", "1.16.0")


def test_a_locked_wheel_row_that_climbs_out_is_the_wheels_unsafe_path_finding_and_no_claim() -> None:
    wheel = _record(FILES, [["../escape.py", record_hash(b"x"), "1"]])
    claims = lock_claims(decode_record(_record(FILES)), wheel, DIST_INFO)
    (finding,) = claims.findings
    assert finding == unsafe_path("../escape.py", whose="locked wheel")
    assert (finding.code, finding.message) == (
        Code.WHEEL_UNSAFE_PATH,
        "locked wheel would install outside the environment",
    )
    assert "../escape.py" not in {r.path for r in claims.record.rows}


def test_an_installed_package_locked_only_for_another_target_is_worded_so() -> None:
    lock = Lock(path="pylock.toml", kind="pylock", packages=(_package("six", "1.17.0", "six-1.17.0-py3-none-any.whl"),))
    listed = Lock(path="pylock.toml", kind="pylock", packages=lock.packages, listed=frozenset({"six", "colorama"}))  # type: ignore[arg-type]
    installed = [Installed(name="colorama", version="0.4.6"), Installed(name="six", version="1.17.0")]
    for judged_lock, why in [(lock, "does not lock it"), (listed, "locks it only for other markers, extras or groups")]:
        (finding,) = membership(judged_lock, installed).findings["colorama"]
        assert finding.code == Code.NOT_LOCKED
        assert finding.message == f"is installed but pylock.toml {why}"


def _fetched(sha256: str | None, source: str, verified: bool) -> FetchedRecord:
    wheel = locked_wheel(
        "k", filename="demo-1.0-py3-none-any.whl", url=None, path="/w/demo.whl", sha256=sha256, size=None, base="/"
    )
    return FetchedRecord(
        wheel=wheel, record=WHEEL, metadata=None, dist_info=DIST_INFO, source=source, verified=verified
    )


def test_trust_counts_wheels_without_a_hash_apart_from_records_had_by_range() -> None:
    sha = "0" * 64
    local = [_fetched(None, "local", False), _fetched(None, "download", False), _fetched(sha, "local", True)]
    summary = summarize(local)
    assert (summary.unverified, summary.unhashed) == (0, 2)
    lines = fetch_lines(summary, local)
    assert not any("by range" in line or "--verify-wheels downloads" in line for line in lines)
    assert lines[-1].startswith("trust: 2 locked wheel(s) have no sha256 in the lock: nothing ties their RECORD(s)")
    assert fetch_json(summary)["range_only"] == 0 and fetch_json(summary)["no_hash"] == 2
    ranged = [_fetched(sha, "range", False), _fetched(sha, "cache", False), _fetched(sha, "cache", True)]
    summary = summarize(ranged)
    assert (summary.unverified, summary.unhashed) == (2, 0)
    (trust,) = [line for line in fetch_lines(summary, ranged) if line.startswith("trust:")]
    assert trust.startswith("trust: 2 RECORD(s) came from the index by range") and "--verify-wheels" in trust
    assert fetch_json(summary)["range_only"] == 2 and fetch_json(summary)["no_hash"] == 0

"""Drift on data alone: majorities, ties, hostile names in every output, and the document's round trip."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from wheeldoctor.formats.snapshot import SnapshotError, decode, encode
from wheeldoctor.judge.drift import DriftKind, compare
from wheeldoctor.model.snapshot import DistributionState, FileDrift, HookState, Snapshot, UnownedSummary
from wheeldoctor.report import drift_github, drift_json, drift_text

pytestmark = pytest.mark.unit

HOSTILE = "evil\n::warning::owned\x1b[31m%0A\u202e"


def dist(name: str, version: str = "1.0", record: str = "r" * 64, **kw: object) -> DistributionState:
    fields: dict = {"installer": "pip", "status": "intact", "record": record, "disk": record, **kw}
    return DistributionState(name=name, version=version, **fields)


def node(host: str, *dists: DistributionState, hooks: tuple[HookState, ...] = ()) -> Snapshot:
    return Snapshot(
        host=host,
        implementation="cpython",
        python="3.11.7",
        platform="linux/x86_64",
        tags_sha256="t" * 64,
        tags_count=900,
        tags_head=("cp311-cp311-linux_x86_64",),
        distributions=tuple(sorted(dists, key=lambda d: d.name)),
        hooks=hooks,
        unowned=UnownedSummary(files=0, importable=()),
    )


def test_a_snapshot_survives_its_round_trip() -> None:
    drifted = dist(
        HOSTILE,
        disk="d" * 64,
        files=(FileDrift(path=HOSTILE, code="WD001", recorded="sha256=x", found="sha256=y"),),
        files_omitted=3,
    )
    snapshot = node(
        "h\udcff", drifted, dist("b"), hooks=(HookState(path="x.pth", kind="pth", owner=None, sha256=None),)
    )
    text = encode(snapshot)
    assert text.isascii()
    assert decode(text.encode()) == snapshot
    assert encode(decode(text.encode())) == text


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("interpreter"), "malformed snapshot: 'interpreter' is not an object"),
        (lambda d: d["distributions"]["b"].update(version=3), "malformed snapshot: 'version' is not a string"),
        (lambda d: d["tags"].update(count=-1), "malformed snapshot: 'count' is not a count"),
        (lambda d: d.update(version="one"), 'snapshot without a readable "version"'),
        (lambda d: d.update(schema="cyclonedx"), 'not a wheeldoctor snapshot (no "schema": "wheeldoctor-snapshot")'),
    ],
)
def test_a_malformed_snapshot_is_one_line(change: object, message: str) -> None:
    document = json.loads(encode(node("h", dist("b"))))
    change(document)  # type: ignore[operator]
    with pytest.raises(SnapshotError) as raised:
        decode(json.dumps(document).encode())
    assert str(raised.value) == message


def test_a_later_minor_version_is_read_and_its_new_fields_ignored() -> None:
    document = json.loads(encode(node("h", dist("b"))))
    document.update(version="1.7", novelty={"x": [1]})
    assert decode(json.dumps(document).encode()) == node("h", dist("b"))


def test_the_odd_node_is_the_minority_and_a_tie_names_none() -> None:
    same = node("a", dist("x"))
    drift = compare(["a", "b", "c"], [same, replace(same, host="b"), node("c", dist("x", "2.0"))])
    assert drift.odd == (2,)
    assert [d.kind for d in drift.differences] == [DriftKind.DISTRIBUTION]
    tie = compare(["a", "b", "c"], [node("a", dist("x", "1")), node("b", dist("x", "2")), node("c", dist("x", "3"))])
    assert tie.odd == () and not tie.agree
    assert drift_text.render(tie).splitlines()[-1] == "1 difference(s) between 3 snapshots; no majority"


def test_missing_and_extra_distributions_are_told_against_the_majority() -> None:
    full = node("a", dist("x"), dist("y"))
    drift = compare(["a", "b", "c"], [full, replace(full, host="b"), node("c", dist("x"), dist("z"))])
    lines = drift_text.render(drift).splitlines()
    assert "c: missing distribution y 1.0 (the others: installed)" in lines
    assert "c: extra distribution z 1.0 (the others: not installed)" in lines


def test_hostile_names_are_inert_in_every_format() -> None:
    bad = dist(
        HOSTILE, disk="d" * 64, files=(FileDrift(path=HOSTILE, code="WD001", recorded="sha256=a", found="sha256=b"),)
    )
    good = replace(bad, disk=bad.record, files=())
    drift = compare([HOSTILE, "b"], [node(HOSTILE, good), node("b", bad)])
    text = drift_text.render(drift)
    assert "\x1b" not in text and "\u202e" not in text and "\n::" not in text
    assert "evil\\x0a::warning::owned\\x1b[31m%0A\\u202e" in text
    github = drift_github.render(drift)
    assert all(line.startswith(("::error ", "wheeldoctor diff: ")) for line in github.splitlines())
    assert "%250A" in github  # a literal %0A in a name cannot become a line break
    document = json.loads(drift_json.render(drift))
    assert document["differences"][0]["subject"] == HOSTILE  # JSON keeps the value, escaped by JSON


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"[" * 20 + b"]" * 20, "nested deeper than 16 levels: not a snapshot"),
        (b"[" * 100_000 + b"]" * 100_000, "nested deeper than 16 levels: not a snapshot"),
        (b"[" * 16 + b"]" * 16, 'not a wheeldoctor snapshot (no "schema": "wheeldoctor-snapshot")'),
        # Millions of escaped quotes in an unterminated string: read once, not once per quote.
        (
            b'{"schema": "' + b'\\"' * 4_000_000,
            "not JSON (Unterminated string starting at: line 1 column 12 (char 11)): ",
        ),
        (b"\xff\xfe{}", "not JSON ("),
        (b"x" * (32 << 20) + b"x", "larger than 32 MiB: not a snapshot"),
    ],
)
def test_hostile_documents_are_refused_in_one_line(data: bytes, message: str) -> None:
    with pytest.raises(SnapshotError) as raised:
        decode(data)
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)

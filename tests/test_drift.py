"""Drift on data alone: majorities, ties, hostile names in every output, and the document's round trip."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from wheeldoctor.formats.snapshot import SnapshotError, decode, encode
from wheeldoctor.judge.drift import DriftKind, compare, ignore_rule
from wheeldoctor.model.snapshot import DistributionState, FileDrift, HookState, Snapshot, UnownedSummary
from wheeldoctor.report import drift_github, drift_json, drift_text

pytestmark = pytest.mark.unit

HOSTILE = "evil\n::warning::owned\x1b[31m%0A\u202e"


def dist(name: str, version: str = "1.0", record: str = "e" * 64, **kw: object) -> DistributionState:
    fields: dict = {"installer": "pip", "status": "intact", "record": record, "disk": record, **kw}
    return DistributionState(name=name, version=version, **fields)


def node(host: str, *dists: DistributionState, hooks: tuple[HookState, ...] = ()) -> Snapshot:
    return Snapshot(
        host=host,
        implementation="cpython",
        python="3.11.7",
        platform="linux/x86_64",
        tags_sha256="7" * 64,
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
    assert drift_text.render(drift).splitlines() == [
        "c:",
        "  missing distribution y 1.0 (the others: installed)",
        "  extra distribution z 1.0 (the others: not installed)",
        "2 difference(s) between 3 snapshots; odd one(s) out: c",
    ]


def test_hostile_names_are_inert_in_every_format() -> None:
    bad = dist(
        HOSTILE, disk="d" * 64, files=(FileDrift(path=HOSTILE, code="WD001", recorded="sha256=a", found="sha256=b"),)
    )
    good = replace(bad, disk=bad.record, files=())
    drift = compare([HOSTILE, "b"], [node(HOSTILE, good), node("b", bad)])
    text = drift_text.render(drift)
    assert "\x1b" not in text and "\u202e" not in text and "\n::" not in text
    assert "evil\\n::warning::owned\\x1b[31m%0A\\u202e" in text  # report/inert.py's one rule: a newline is \\n
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


SCHEMAS = Path(__file__).resolve().parent.parent / "docs" / "schema"


def schema(name: str) -> jsonschema.Draft202012Validator:
    document = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(document)
    return jsonschema.Draft202012Validator(document)


def on_python(host: str, python: str, *dists: DistributionState) -> Snapshot:
    return replace(node(host, *dists), python=python)


def test_a_node_on_another_python_reads_as_that_not_as_seventeen_other_wheels() -> None:
    """An installer compiles .pyc files for its interpreter: every RECORD differs with the Python."""
    names = [f"d{i:02}" for i in range(17)]
    same = [dist(n, record="a" * 64) for n in names]
    other = [dist(n, record="b" * 64) for n in names]
    drift = compare(
        ["a", "b", "c"],
        [on_python("a", "3.11.7", *same), on_python("b", "3.11.7", *same), on_python("c", "3.12.1", *other)],
    )
    assert {d.kind for d in drift.differences} == {DriftKind.INTERPRETER, DriftKind.PYTHON}
    lines = drift_text.render(drift).splitlines()
    assert lines[:2] == ["c:", "  interpreter: cpython 3.12.1 linux/x86_64 (the others: cpython 3.11.7 linux/x86_64)"]
    assert lines[2].startswith("  RECORD differs with the Python in 17 distribution(s), as an installer compiles")
    assert lines[2].endswith("d00, d01, d02, d03, d04, d05, d06, d07, d08, d09 and 7 more")
    assert "another wheel" not in "\n".join(lines)
    assert len(lines) == 4


def test_another_installer_reads_as_that_and_another_wheel_as_that() -> None:
    pip, uv = dist("x", record="a" * 64), dist("x", record="b" * 64, installer="uv")
    drift = compare(["a", "b", "c"], [node("a", pip), node("b", pip), node("c", uv)])
    (difference,) = drift.differences
    assert (difference.kind, difference.values, difference.odd) == (DriftKind.INSTALLER, ("pip", "pip", "uv"), (2,))
    assert "  x: installed by uv (the others: pip); its RECORD differs with it" in drift_text.render(drift)
    rebuilt = dist("x", record="c" * 64)
    drift = compare(["a", "b", "c"], [node("a", pip), node("b", pip), node("c", rebuilt)])
    assert [d.kind for d in drift.differences] == [DriftKind.RECORD]


def test_a_reference_is_what_every_node_is_compared_with() -> None:
    golden = node("golden", dist("x", "1.0"))
    drifted = [node(h, dist("x", "2.0")) for h in ("a", "b")]
    by_majority = compare(["golden", "a", "b"], [golden, *drifted])
    assert by_majority.odd == (0,)  # two nodes agree: the golden one is the odd one out
    against = compare(["golden", "a", "b"], [golden, *drifted], reference=0)
    assert against.odd == (1, 2)
    assert drift_text.render(against).splitlines() == [
        "a:",
        "  x: version 2.0 (golden: 1.0)",
        "b:",
        "  x: version 2.0 (golden: 1.0)",
        "1 difference(s) between 3 snapshots; unlike the reference golden: a, b",
    ]


def test_ignore_rules_leave_out_a_kind_or_the_names_their_glob_matches() -> None:
    base = node("a", dist("x"), dist("torch"), hooks=(HookState(path="a.pth", kind="pth", owner="x", sha256="s"),))
    other = node(
        "b",
        dist("x", files=(FileDrift(path="x/cache.bin", code="WD001", recorded="sha256=a", found="sha256=b"),)),
        dist("torch", "2.0"),
    )
    assert len(compare(["a", "b"], [base, other]).differences) == 3
    drift = compare(["a", "b"], [base, other], ignore=[ignore_rule("hook"), ignore_rule("file:x/*.bin")])
    assert ([d.kind for d in drift.differences], drift.ignored) == ([DriftKind.DISTRIBUTION], 2)
    assert drift_text.render(drift).splitlines()[-1] == "1 difference(s) (2 ignored) between 2 snapshots"
    with pytest.raises(ValueError, match="KIND one of interpreter, tags, distribution"):
        ignore_rule("files:x")


def test_json_values_are_structured_and_both_documents_follow_their_schemas() -> None:
    hook = HookState(path="h.pth", kind="pth", owner="x", sha256="sha256=abc")
    a = node("a", dist("x"), hooks=(hook,))
    b = replace(node("b", dist("x", "2.0")), unowned=UnownedSummary(files=2, importable=("stray",)), python="3.12.0")
    document = json.loads(drift_json.render(compare(["a.json", "b.json"], [a, b])))
    schema("diff").validate(document)
    by_kind = {d["kind"]: d for d in document["differences"]}
    assert by_kind["hook"]["values"] == {
        "a.json": {"kind": "pth", "owner": "x", "sha256": "sha256=abc"},
        "b.json": None,
    }
    assert by_kind["unowned"]["values"]["b.json"] == {"files": 2, "importable": ["stray"]}
    assert by_kind["interpreter"]["values"]["b.json"]["python"] == "3.12.0"
    (told,) = document["nodes"]
    assert told["file"] == "b.json"
    assert {(c["kind"], c["change"]) for c in told["changes"]} == {
        ("interpreter", "interpreter"),
        ("distribution", "version"),
        ("hook", "missing"),
        ("unowned", "unowned"),
    }
    for snapshot in (
        a,
        b,
        node(HOSTILE, dist(HOSTILE, files=(FileDrift(path="p", code="WD003", recorded=None, found="missing"),))),
    ):
        schema("snapshot").validate(json.loads(encode(snapshot)))

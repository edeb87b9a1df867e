"""``snapshot`` and ``diff`` on real venvs: copies of one environment, one of them drifted.

One venv is built with real pip from wheels with computed RECORDs, then copied as two more
nodes would hold it. On node ``b`` one installed file is altered (its RECORD row untouched)
and an extra distribution (with a start-up hook) is installed; node ``d`` has ``alpha``
reinstalled from a rebuilt wheel, intact against its own RECORD.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import (
    Venv,
    _query_venv,
    build_wheel,
    make_venv,
    pip_install,
    read_record,
    record_hash,
    run_cli,
    uv_install,
)

from wheeldoctor.model.snapshot import rows_digest

ALPHA = {
    "alpha/__init__.py": b"from alpha.core import answer\n",
    "alpha/core.py": b"def answer():\n    return 42\n",
}
PATCHED = b"def answer():\n    return 43\n"  # a hot patch: same size, other bytes
GROWN = b"\n# and a line more\n"


@dataclass(frozen=True)
class Fleet:
    """Four nodes' venvs and their snapshots."""

    a: Venv
    b: Venv
    c: Venv
    d: Venv
    snaps: Path


def _copy(venv: Venv, to: Path) -> Venv:
    shutil.copytree(venv.prefix, to, symlinks=True)
    return _query_venv(to, to / "bin" / "python")


def snapshot(venv: Venv, out: Path, host: str, *more: str) -> Path:
    done = run_cli("snapshot", "--python", venv.python, "--host", host, "-o", out, *more)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return out


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory, uv_bin: Path) -> Fleet:
    root = tmp_path_factory.mktemp("fleet")
    wheels = root / "wheels"
    rebuilt = root / "rebuilt"
    alpha = build_wheel(wheels, "alpha", "1.0", ALPHA, console_scripts={"alpha": "alpha.core:answer"})
    beta = build_wheel(wheels, "beta", "2.0", {"beta.py": b"VALUE = 2\n"}, requires=["alpha"])
    hooked = {"extra.py": b"def start():\n    pass\n", "extra_hook.pth": b"import extra; extra.start()\n"}
    extra = build_wheel(wheels, "extra", "0.1", hooked)
    alpha_rebuilt = build_wheel(
        rebuilt, "alpha", "1.0", {**ALPHA, "alpha/core.py": b"def answer():\n    return 42  # rebuilt\n"}
    )
    a = make_venv(root / "a", uv_bin=uv_bin)
    pip_install(a, "--no-index", "--no-deps", alpha, beta)
    c = _copy(a, root / "c")
    b = _copy(a, root / "b")
    d = _copy(a, root / "d")
    (b.site_packages / "alpha" / "core.py").write_bytes(PATCHED)
    (b.site_packages / "beta.py").write_bytes(b"VALUE = 2\n" + GROWN)
    pip_install(b, "--no-index", "--no-deps", extra)
    pip_install(d, "--no-index", "--no-deps", "--force-reinstall", alpha_rebuilt)
    snaps = root / "snaps"
    snaps.mkdir()
    for name, venv in (("a", a), ("b", b), ("c", c), ("d", d)):
        snapshot(venv, snaps / f"{name}.json", f"node-{name}")
    return Fleet(a, b, c, d, snaps)


def diff(*args: str | Path) -> tuple[int, str, str]:
    done = run_cli("diff", *args)
    assert "Traceback" not in done.stderr
    return done.returncode, done.stdout, done.stderr


def diff_json(*files: str | Path) -> tuple[int, dict]:
    rc, out, err = diff(*files, "--format", "json")
    assert rc in (0, 1), err
    return rc, json.loads(out)


def test_a_drifted_node_is_named_with_the_file_and_the_extra_distribution(fleet: Fleet) -> None:
    a, b = fleet.snaps / "a.json", fleet.snaps / "b.json"
    rc, out, err = diff(a, b)
    assert rc == 1, err
    lines = out.splitlines()
    assert lines[0] == f"{b} (node-b):"  # grouped by node: each of its differences below it
    recorded = record_hash(ALPHA["alpha/core.py"])
    core = f"  alpha: file alpha/core.py changed: {record_hash(PATCHED)} ({a} (node-a): {recorded})"
    assert core in lines
    assert "  extra distribution extra 0.1 (" in out
    assert "  start-up hook extra_hook.pth only here: pth of extra, sha256=" in out
    assert lines[-1] == "4 difference(s) between 2 snapshots"
    rc, doc = diff_json(a, b)
    kinds = {(d["kind"], d["subject"], d["path"]) for d in doc["differences"]}
    assert kinds == {
        ("file", "alpha", "alpha/core.py"),
        ("file", "beta", "beta.py"),
        ("distribution", "extra", None),
        ("hook", "extra_hook.pth", None),
    }
    core = next(d for d in doc["differences"] if d["path"] == "alpha/core.py")
    assert core["values"] == {str(a): record_hash(ALPHA["alpha/core.py"]), str(b): record_hash(PATCHED)}
    grown = next(d for d in doc["differences"] if d["path"] == "beta.py")
    assert grown["values"][str(b)] == record_hash(b"VALUE = 2\n" + GROWN)  # both digests, where the size differs too


def test_a_file_given_twice_is_counted_once(fleet: Fleet, tmp_path: Path) -> None:
    a, b, c = (fleet.snaps / f"{n}.json" for n in "abc")
    rc, out, err = diff(a, a)
    assert (rc, err) == (0, f"note: {a} is a file given before: counted once\n")
    assert out.endswith(": nothing to compare it with\n")  # one snapshot left: a fleet of one node
    (tmp_path / "again.json").symlink_to(b)
    # b given three times would be the majority against a and c; counted once, it is the odd one.
    rc, doc = diff_json(a, b, tmp_path / "again.json", b, c)
    assert rc == 1
    assert [s["file"] for s in doc["snapshots"]] == [str(a), str(b), str(c)]
    assert doc["odd"] == [str(b)]


def test_copies_of_one_environment_agree(fleet: Fleet) -> None:
    rc, out, _ = diff(fleet.snaps / "a.json", fleet.snaps / "c.json")
    assert (rc, out) == (0, "all 2 snapshots agree\n")


def test_of_three_nodes_the_drifted_one_is_the_odd_one(fleet: Fleet) -> None:
    a, b, c = (fleet.snaps / f"{n}.json" for n in "abc")
    rc, doc = diff_json(a, b, c)
    assert rc == 1
    assert doc["odd"] == [str(b)]
    assert all(d["odd"] == [str(b)] for d in doc["differences"])
    rc, out, _ = diff(b, c, a)
    assert out.splitlines()[-1].endswith(f"odd one(s) out: {b} (node-b)")


def test_a_rebuilt_wheel_is_named_though_each_node_is_intact(fleet: Fleet) -> None:
    a, d = fleet.snaps / "a.json", fleet.snaps / "d.json"
    snapped = json.loads(d.read_text())
    assert snapped["distributions"]["alpha"]["status"] == "intact"
    rc, doc = diff_json(a, d)
    assert rc == 1
    assert [(x["kind"], x["subject"]) for x in doc["differences"]] == [("record", "alpha")]
    _, out, _ = diff(a, d)
    assert "alpha: installed from another wheel" in out


def test_the_record_digest_is_over_the_canonical_rows(fleet: Fleet) -> None:
    doc = json.loads((fleet.snaps / "b.json").read_text())
    rows = read_record(fleet.b.dist_info("alpha") / "RECORD")
    canonical = [(p, h or None, int(s) if s else None) for p, h, s in rows]
    alpha = doc["distributions"]["alpha"]
    assert alpha["record"] == rows_digest(canonical)
    on_disk = [(p, record_hash(PATCHED), None) if p == "alpha/core.py" else r for r in canonical for p in [r[0]]]
    assert alpha["disk"] == rows_digest(on_disk)
    assert alpha["files"] == [
        {
            "code": "WD001",
            "found": record_hash(PATCHED),
            "path": "alpha/core.py",
            "recorded": record_hash(ALPHA["alpha/core.py"]),
        }
    ]
    assert "disk" not in doc["distributions"]["extra"]  # intact: the same rows on disk


def test_a_snapshot_is_deterministic_warm_or_cold_and_small(fleet: Fleet, tmp_path: Path) -> None:
    first = (fleet.snaps / "b.json").read_bytes()
    warm = snapshot(fleet.b, tmp_path / "warm.json", "node-b").read_bytes()
    cold = snapshot(fleet.b, tmp_path / "cold.json", "node-b", "--no-cache").read_bytes()
    assert first == warm == cold
    assert len(first) < 100_000
    assert not list(tmp_path.glob(".*"))  # no temporary file left beside the output


def test_a_snapshot_names_the_interpreter_tags_and_hooks(fleet: Fleet) -> None:
    doc = json.loads((fleet.snaps / "b.json").read_text())
    assert doc["schema"] == "wheeldoctor-snapshot" and doc["version"].startswith("1.")
    assert doc["host"] == "node-b"
    assert doc["interpreter"]["implementation"] == "cpython"
    assert doc["tags"]["count"] > 3 and len(doc["tags"]["head"]) == 3
    assert len(doc["tags"]["sha256"]) == 64
    hook = next(h for h in doc["hooks"] if h["path"] == "extra_hook.pth")
    assert hook == {
        "kind": "pth",
        "owner": "extra",
        "path": "extra_hook.pth",
        "sha256": record_hash(b"import extra; extra.start()\n"),
    }


def test_unreadable_snapshots_are_one_line_each(fleet: Fleet, tmp_path: Path) -> None:
    whole = (fleet.snaps / "a.json").read_bytes()
    truncated = tmp_path / "truncated.json"
    truncated.write_bytes(whole[: len(whole) // 2])
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps({"distributions": []}))
    future = tmp_path / "future.json"
    future.write_text(json.dumps({**json.loads(whole), "version": "2.0"}))
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    rc, out, err = diff(fleet.snaps / "a.json", truncated, foreign, future, deep)
    assert (rc, out) == (2, "")
    lines = err.splitlines()
    assert len(lines) == 4
    assert lines[0].startswith(f"error: {truncated}: not JSON (")
    assert lines[0].endswith("truncated, or not a snapshot")
    assert lines[1] == f'error: {foreign}: not a wheeldoctor snapshot (no "schema": "wheeldoctor-snapshot")'
    assert lines[2] == f"error: {future}: snapshot version 2.0: this wheeldoctor reads 1.x only"
    assert lines[3] == f"error: {deep}: nested deeper than 16 levels: not a snapshot"


def test_diff_of_one_snapshot_says_so_and_a_known_format(fleet: Fleet) -> None:
    # A fleet of one node (the README's `snapshot ... && diff snap-*.json` on one machine): nothing differs.
    rc, out, _ = diff(fleet.snaps / "a.json")
    assert (rc, out) == (0, f"1 snapshot, {fleet.snaps / 'a.json'} (node-a): nothing to compare it with\n")
    rc, _, err = diff(fleet.snaps / "a.json", fleet.snaps / "b.json", "--format", "sarif")
    assert rc == 2 and "unknown format 'sarif'" in err


def test_github_annotations_name_the_odd_node(fleet: Fleet) -> None:
    a, b, c = (fleet.snaps / f"{n}.json" for n in "abc")
    rc, out, _ = diff(a, b, c, "--format", "github")
    assert rc == 1
    errors = [line for line in out.splitlines() if line.startswith("::error ")]
    assert len(errors) == 1 and "node-b" in errors[0]  # one annotation per node, its differences on its lines
    told = (
        f"alpha: file alpha/core.py changed: {record_hash(PATCHED)} (the others: {record_hash(ALPHA['alpha/core.py'])})"
    )
    assert f"%0A{told}%0A" in errors[0] or errors[0].endswith(f"::{told}") or f"::{told}%0A" in errors[0]


def test_a_snapshot_reports_its_sha256_when_asked_twice_in_a_row(fleet: Fleet) -> None:
    """Two nodes' snapshot files differ only in the host where their environments agree."""
    a = json.loads((fleet.snaps / "a.json").read_text())
    c = json.loads((fleet.snaps / "c.json").read_text())
    assert {**a, "host": ""} == {**c, "host": ""}
    assert (
        hashlib.sha256(json.dumps(a["distributions"]).encode()).hexdigest()
        == hashlib.sha256(json.dumps(c["distributions"]).encode()).hexdigest()
    )


def test_percent_n_in_the_output_is_the_host_made_safe(fleet: Fleet, tmp_path: Path) -> None:
    output = "snap-%N-%%.json"
    done = run_cli("snapshot", "--python", fleet.a.python, "--host", "../up/node 7", "-o", output, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["snap-_up_node_7-%.json"]
    assert json.loads((tmp_path / "snap-_up_node_7-%.json").read_text())["host"] == "../up/node 7"


def test_diff_reads_a_pipe_and_refuses_a_device(fleet: Fleet, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    data = (fleet.snaps / "c.json").read_bytes()

    def feed() -> None:
        with open(fifo, "wb") as stream:
            stream.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    rc, out, err = diff(fleet.snaps / "a.json", fifo)
    writer.join()
    assert (rc, out) == (0, "all 2 snapshots agree\n"), err
    rc, _, err = diff(fleet.snaps / "a.json", "/dev/null")
    assert (rc, err) == (2, "error: /dev/null: not a regular file or a pipe\n")


@pytest.mark.network
def test_a_real_environment_snapshots_small_deterministic_and_copies_agree(tmp_path: Path, uv_bin: Path) -> None:
    """The suite's largest real environment (tests/test_real_packages.py's packages, from PyPI)."""
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError as e:
        pytest.skip(f"PyPI is not reachable ({e})")
    from test_real_packages import PACKAGES

    venv = make_venv(tmp_path / "real", uv_bin=uv_bin)
    pip_install(venv, *PACKAGES)
    copy = _copy(venv, tmp_path / "copy")
    first = snapshot(venv, tmp_path / "first.json", "n").read_bytes()
    again = snapshot(venv, tmp_path / "again.json", "n").read_bytes()
    copied = snapshot(copy, tmp_path / "copied.json", "m")
    assert first == again
    assert len(first) < 100_000
    assert len(json.loads(first)["distributions"]) >= len(PACKAGES)
    rc, out, err = diff(tmp_path / "first.json", copied)
    assert (rc, out) == (0, "all 2 snapshots agree\n"), err


def test_with_q_the_merged_streams_are_the_snapshot_alone(fleet: Fleet, tmp_path: Path) -> None:
    """``kubectl logs`` and ``srun`` without ``--error`` merge stderr into the file: ``-q`` keeps it a snapshot."""
    env = {**os.environ, "VIRTUAL_ENV": str(fleet.a.prefix)}  # found as uv finds it: a line on stderr says so

    def merged(*more: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "wheeldoctor", "snapshot", "--host", "node-a", *more],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            timeout=120,
            check=False,
        )

    loud = merged()
    assert loud.returncode == 0 and loud.stdout.startswith(b"environment: ")
    quiet = merged("-q")
    assert quiet.returncode == 0, quiet.stdout[-2000:]
    assert quiet.stdout == (fleet.snaps / "a.json").read_bytes()


def test_a_node_whose_installer_differs_reads_as_that(fleet: Fleet, tmp_path: Path, uv_bin: Path) -> None:
    """The same wheel reinstalled by uv: INSTALLER (and so RECORD) differ, and diff says uv, not another wheel."""
    e = _copy(fleet.a, tmp_path / "e")
    wheel = build_wheel(tmp_path / "wheels", "alpha", "1.0", ALPHA, console_scripts={"alpha": "alpha.core:answer"})
    uv_install(e, "--reinstall", "--no-deps", "--offline", wheel, uv_bin=uv_bin)
    snapshot(e, tmp_path / "e.json", "node-e")
    a, c = fleet.snaps / "a.json", fleet.snaps / "c.json"
    rc, doc = diff_json(a, c, tmp_path / "e.json")
    assert rc == 1
    assert [(d["kind"], d["subject"], d["values"]) for d in doc["differences"]] == [
        ("installer", "alpha", {str(a): "pip", str(c): "pip", str(tmp_path / "e.json"): "uv"})
    ]
    _, out, _ = diff(a, c, tmp_path / "e.json")
    assert "  alpha: installed by uv (the others: pip); its RECORD differs with it" in out.splitlines()


def test_a_reference_snapshot_exit_zero_and_ignore_rules(fleet: Fleet) -> None:
    a, b, c = (fleet.snaps / f"{n}.json" for n in "abc")
    rc, doc = diff_json(b, c, "--reference", a)
    assert rc == 1 and doc["reference"] == str(a) and doc["odd"] == [str(b)]
    rc, out, _ = diff(b, c, "--reference", a, "--exit-zero")
    assert rc == 0 and out.splitlines()[-1].endswith(f"unlike the reference {a} (node-a): {b} (node-b)")
    rc, out, err = diff(a, b, "--ignore", "file,distribution:extra", "--ignore", "hook:*.pth")
    assert (rc, out, err) == (0, "all 2 snapshots agree (4 ignored)\n", "")
    rc, _, err = diff(a, b, "--ignore", "nonsense")
    assert rc == 2 and err.startswith("error: --ignore 'nonsense': give KIND or KIND:GLOB")


def test_snapshots_and_diffs_follow_their_schemas(fleet: Fleet) -> None:
    import jsonschema

    schemas = Path(__file__).resolve().parent.parent / "docs" / "schema"
    snapshot_schema = json.loads((schemas / "snapshot.schema.json").read_text(encoding="utf-8"))
    diff_schema = json.loads((schemas / "diff.schema.json").read_text(encoding="utf-8"))
    for name in "abcd":
        jsonschema.validate(json.loads((fleet.snaps / f"{name}.json").read_text()), snapshot_schema)
    _, doc = diff_json(*(fleet.snaps / f"{n}.json" for n in "abcd"))
    jsonschema.validate(doc, diff_schema)

"""The JSON report's schema (docs/schema/report.schema.json) against real documents.

One environment is built with real installers and given one problem of each sort a document
can describe (a modified file, a clash of unrelated distributions, an overlay in the wrong
order, a stale dist-info, a missing requirement, an unmet Requires-Python, a start-up hook,
an unowned module, an accepted finding); a healthy one gives the other shape. Every command
that writes JSON (check, doctor, deps, wheels, fix) is run on them and its document must
validate against the schema, whose ``schema_version`` must be the one the package writes.
"""

from __future__ import annotations

import importlib.util
import json
import marshal
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import build_wheel, make_venv, offline, pip_install, run_cli, uv_install
from variants import Wheels, build_variant_wheels

REPO = Path(__file__).resolve().parent.parent
SCHEMA_FILE = REPO / "docs" / "schema" / "report.schema.json"


def schema() -> dict[str, Any]:
    """The schema file, itself checked against the draft it names."""
    import jsonschema  # its import is slow (format checkers' grammars): paid by the tests that use it

    document: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(document)
    return document


def validate(document: dict[str, Any]) -> None:
    """Every error at once, each with where in the document it is."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema(), format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors)


@dataclass(frozen=True)
class Sick:
    python: Path
    site: Path
    wheels: Path
    project: Path


@pytest.fixture(scope="module")
def sick(tmp_path_factory: pytest.TempPathFactory) -> Sick:
    """A real venv with one problem of each sort the documents describe."""
    root = tmp_path_factory.mktemp("schema")
    wheels = root / "wheels"
    made = {
        "alpha": build_wheel(
            wheels,
            "alpha",
            "1.0",
            {"alpha/__init__.py": b"A = 1\n", "alpha/core.py": b"X\n", "alpha_boot.pth": b"import alpha\n"},
            requires=["absent-dependency>=1"],
        ),
        "old": build_wheel(wheels, "old-python", "1.0", {"old_python.py": b"O = 1\n"}, requires_python="<3"),
        "fast": build_wheel(wheels, "onelib-fast", "1.0", {"onelib/__init__.py": b"FAST = 1\n"}),
        "slow": build_wheel(wheels, "onelib-slow", "1.0", {"onelib/__init__.py": b"SLOW = 1\n"}),
        "bundle": build_wheel(wheels, "bundle", "1.0", {"bundle/ca.pem": b"CA\n"}),
    }
    layers: Wheels = build_variant_wheels(wheels)
    venv = make_venv(root / "venv")
    uv_install(venv, "--no-deps", *made.values())
    uv_install(venv, "--no-deps", layers.overlay)
    uv_install(venv, "--no-deps", layers.base)  # the base last: the overlay's files are overwritten
    site = venv.site_packages
    (site / "alpha" / "core.py").write_bytes(b"Y\n")  # modified
    (site / "bundle" / "ca.pem").write_bytes(b"CA\nLOCAL\n")  # appended to, and accepted below
    (site / "stray.py").write_bytes(b"S = 1\n")  # an unowned module
    (site / "dropped.pth").write_bytes(b"import os\n")  # an unowned start-up hook
    stale = next(site.glob("alpha-1.0.dist-info"))
    shutil.copytree(stale, site / "alpha-0.9.dist-info")  # a second dist-info of one name
    meta = site / "alpha-0.9.dist-info" / "METADATA"
    meta.write_text(meta.read_text().replace("Version: 1.0", "Version: 0.9"))
    project = root / "project"
    project.mkdir()
    found = json.loads(run_cli("check", "bundle", "--python", venv.python, "--json").stdout)
    digest = found["distributions"][0]["findings"][0]["found"]
    (project / "wheeldoctor.toml").write_text(
        "[[accept]]\n"
        'distribution = "bundle"\n'
        'path = "bundle/ca.pem"\n'
        f'found = "{digest}"\n'
        'reason = "a local CA, appended on purpose"\n'
        "[[accept]]\n"
        'distribution = "onelib-slow"\n'
        'code = "WD003"\n'
        'reason = "a rule that matches nothing: reported stale"\n'
    )
    return Sick(venv.python, site, wheels, project)


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real venv with one intact distribution."""
    root = tmp_path_factory.mktemp("schema-healthy")
    venv = make_venv(root / "venv")
    uv_install(venv, "--no-deps", build_wheel(root / "wheels", "gamma", "2.0", {"gamma/__init__.py": b"G = 1\n"}))
    return venv.python


def document(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> dict[str, Any]:
    """``wheeldoctor ARGS --json``: exit 0 or 1 (never 2) and one document on stdout."""
    done = run_cli(*args, "--json", cwd=cwd, env=env)
    assert done.returncode in (0, 1), done.stderr
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def test_the_schema_is_valid_2020_12_and_names_the_version_the_package_writes(healthy: Path) -> None:
    written = document("check", "--all", "--python", healthy)
    assert schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema()["properties"]["schema_version"] == {"const": written["schema_version"]}
    validate(written)


def test_check_all_on_every_sort_of_problem(sick: Sick) -> None:
    found = document("check", "--all", "--python", sick.python, "--show-unowned", cwd=sick.project)
    assert found["healthy"] is False
    # The document holds what the schema must describe, so the validation below means something.
    assert {d["status"] for d in found["distributions"]} >= {"broken", "intact", "accepted"}
    assert {p["relation"] for p in found["clash_pairs"]} == {"overlay", "unrelated"}
    assert found["policy"]["stale"] and found["unowned"]["files"]
    assert {h["finding"]["code"] for h in found["startup_hooks"] if h["finding"]} == {"WD070", "WD071"}
    validate(found)


def test_doctor_deps_and_a_named_check(sick: Sick) -> None:
    doctor = document("doctor", "--python", sick.python, cwd=sick.project)
    assert doctor["dependency_conflicts"] and doctor["duplicates"] and doctor["compatibility"]
    validate(doctor)
    validate(document("deps", "--python", sick.python))
    validate(document("check", "alpha", "not-installed-here", "--python", sick.python))


def test_wheels_with_and_without_an_environment(sick: Sick) -> None:
    every = sorted(sick.wheels.glob("*.whl"))
    beside = document("wheels", *every, "--python", sick.python)
    assert beside["overwrites"] and {p["relation"] for p in beside["clash_pairs"]} == {"overlay", "unrelated"}
    validate(beside)
    alone = document("wheels", *every, "--no-environment")
    assert alone["environment"] is None
    validate(alone)


def test_fix_dry_run_and_a_fix_that_ran(sick: Sick, tmp_path: Path) -> None:
    planned = document("fix", "--all", "--dry-run", "--python", sick.python, cwd=sick.project, env=offline(sick.wheels))
    assert planned["plan"]["steps"] and planned["plan"]["left_alone"] and planned["after"] is None
    validate(planned)
    # A real run, on an environment of its own: uv reinstalls from the local wheels, no index.
    venv = make_venv(tmp_path / "venv")
    uv_install(venv, "--no-deps", *sorted(sick.wheels.glob("onelib_*.whl")))
    ran = document("fix", "--all", "--yes", "--keep", "onelib-slow", "--python", venv.python, env=offline(sick.wheels))
    assert ran["after"] is not None and {s["status"] for s in ran["steps"]} == {"ok"}, ran["steps"]
    validate(ran)


def _accepted_by(document: dict[str, Any]) -> set[str]:
    """Every ``accepted.by`` anywhere in a document."""
    found: set[str] = set()
    stack: list[Any] = [document]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            accepted = item.get("accepted")
            if isinstance(accepted, dict):
                found.add(accepted["by"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def test_the_fields_added_in_1_2(tmp_path: Path) -> None:
    """A .pyc pip recompiled, a .start hook whose entry point resolves to nothing, a finding --ignore
    leaves out, and a baseline entry whose file changed again: each field of 1.2, validated."""
    source = b"def f():\n    return 1\n"
    shipped = compile(source, "/build/src/pkg/mod.py", "exec", dont_inherit=True)
    pyc = importlib.util.MAGIC_NUMBER + bytes(8) + b"\x20\0\0\0" + marshal.dumps(shipped)
    files = {
        "pkg/__init__.py": b"",
        "pkg/mod.py": source,
        f"pkg/__pycache__/mod.{sys.implementation.cache_tag}.pyc": pyc,
        "pkg/data.txt": b"D\n",
    }
    venv = make_venv(tmp_path / "venv")
    pip_install(venv, "--no-index", "--no-deps", build_wheel(tmp_path / "wheels", "pkg", "1.0", files))
    site = venv.site_packages
    project = tmp_path / "project"
    project.mkdir()
    baseline = tmp_path / "baseline.json"
    (site / "pkg" / "data.txt").write_bytes(b"E\n")
    pinned = run_cli("check", "--all", "--python", venv.python, "--write-baseline", baseline, cwd=project)
    assert pinned.returncode == 0, pinned.stderr
    (site / "pkg" / "data.txt").write_bytes(b"F\n")  # the pinned finding, with other evidence
    (site / "boot.start").write_bytes(b"nowhere.mod:run\n")
    (site / "stray.py").write_bytes(b"S = 1\n")
    (site / "pkg" / "weak.txt").write_bytes(b"W\n")  # recorded by md5: WD013, which --ignore may leave out
    with (venv.dist_info("pkg") / "RECORD").open("a") as record:
        record.write("pkg/weak.txt,md5=8U6DfbMXorupgmFE54MbUQ,2\n")
    found = document(
        "check", "--all", "--python", venv.python, "--baseline", baseline, "--ignore", "WD013", cwd=project
    )
    kinds = {f["kind"] for d in found["distributions"] for f in d["findings"]}
    assert "recompiled" in kinds
    start = [h for h in found["startup_hooks"] if h["kind"] == "start"]
    assert [(h["entry_points"], h["unresolved"]) for h in start] == [(["nowhere.mod:run"], ["nowhere.mod:run"])]
    assert "selection" in _accepted_by(found)
    assert [e["path"] for e in found["policy"]["changed"]] == ["pkg/data.txt"]
    validate(found)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="imports reads /proc")
def test_imports(healthy: Path) -> None:
    validate(document("imports", "json", "gamma", "--python", healthy, "--forbid", ""))


def test_the_schema_rejects_what_it_does_not_name(sick: Sick) -> None:
    """A schema that let anything through would pass every test above: it must not."""
    import jsonschema

    found = document("check", "--all", "--python", sick.python, cwd=sick.project)
    validator = jsonschema.Draft202012Validator(schema())
    for damage in (
        lambda d: d.update(unknown_field=1),
        lambda d: d["summary"].update(surprise=1),
        lambda d: d["distributions"][0].update(status="fine"),
        lambda d: d["clash_pairs"][0].pop("relation"),
        lambda d: d.update(schema_version="0.9"),
        lambda d: d.update(command="checks"),
    ):
        damaged = json.loads(json.dumps(found))
        damage(damaged)
        assert not validator.is_valid(damaged), damage

"""Accept rules, baselines and the ``appended`` evidence, on a real pip environment.

The environment is made by ``python -m venv`` (pip installed by pip, from ensurepip);
its ``pip/_vendor/certifi/cacert.pem`` gets a corporate root CA appended, as base
images do.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import threading
from base64 import urlsafe_b64encode
from pathlib import Path
from typing import Any

import pytest
from helpers import run_cli

CA = (
    b"\n# Corporate Root CA\n-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ29ycG9yYXRl\n-----END CERTIFICATE-----\n"
)
BUNDLE = "pip/_vendor/certifi/cacert.pem"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real pip environment, made once; tests work on copies."""
    prefix = tmp_path_factory.mktemp("pip-env") / "env"
    subprocess.run([sys.executable, "-m", "venv", str(prefix)], check=True, capture_output=True, timeout=300)
    return prefix


@pytest.fixture
def env(pristine: Path, tmp_path: Path) -> Path:
    """A copy of the pip environment (venvs are relocatable enough for reading RECORDs)."""
    copy = tmp_path / "env"
    shutil.copytree(pristine, copy, symlinks=True)
    return copy


def _site(prefix: Path) -> Path:
    (site,) = prefix.glob("lib/python3*/site-packages")
    return site


def _python(prefix: Path) -> Path:
    return prefix / "bin" / "python"


def _digest(data: bytes) -> str:
    return "sha256=" + urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _check(prefix: Path, *args: str, cwd: Path) -> tuple[int, dict[str, Any], str]:
    done = run_cli("check", "--all", "--python", _python(prefix), "--json", *args, cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout), done.stderr


def _finding(document: dict[str, Any], name: str, path: str) -> dict[str, Any]:
    (dist,) = [d for d in document["distributions"] if d["name"] == name]
    found: dict[str, Any] = next(f for f in dist["findings"] if f["path"] == path)
    return found


def _project(root: Path, body: str, name: str = "pyproject.toml") -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)  # the search stops at this repository root
    (root / name).write_text(body, encoding="utf-8")
    return root / name


def _rule(found: str, until: str | None = None, key: str = "reason") -> str:
    lines = [
        "[[tool.wheeldoctor.accept]]",
        'distribution = "pip"',
        f'path = "{BUNDLE}"',
        f'found = "{found}"',
        f'{key} = "corporate root CA appended by the base image"',
    ]
    if until:
        lines.append(f"until = {until}")
    return "[project]\nname = 'ci'\n\n" + "\n".join(lines) + "\n"


def test_appended_ca_is_evidence_and_a_pinned_accept_passes(env: Path, tmp_path: Path) -> None:
    bundle = _site(env) / BUNDLE
    original = bundle.read_bytes()
    bundle.write_bytes(original + CA)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    rc, document, _ = _check(env, cwd=elsewhere)
    assert rc == 1
    finding = _finding(document, "pip", BUNDLE)
    assert (finding["code"], finding["evidence"], finding["appended_bytes"]) == ("WD002", "appended", len(CA))
    assert finding["found"] == _digest(original + CA)
    assert document["schema_version"] == "1.2"
    text = run_cli("check", "pip", "--python", _python(env), cwd=elsewhere).stdout
    assert f"with {len(CA)} byte(s) appended" in text
    assert "reinstalling drops them" in text
    # The rule the tip prints is TOML that accepts exactly these bytes when pasted.
    pasted = "\n".join(line[2:] for line in text.splitlines() if line.startswith("  "))
    assert pasted.startswith("[[tool.wheeldoctor.accept]]\n"), text
    tipped = tmp_path / "tipped"
    _project(tipped, pasted)
    rc, document, _ = _check(env, cwd=tipped)
    assert rc == 0, document
    assert _finding(document, "pip", BUNDLE)["accepted"]["by"] == "config"

    project = tmp_path / "project"
    config = _project(project, _rule(finding["found"]))
    deep = project / "ci" / "jobs"
    deep.mkdir(parents=True)
    for cwd in (project, deep):  # found by climbing from a subdirectory too
        rc, document, _ = _check(env, cwd=cwd)
        assert rc == 0, document
        accepted = _finding(document, "pip", BUNDLE)["accepted"]
        assert accepted == {
            "by": "config",
            "reason": "corporate root CA appended by the base image",
            "source": str(config.resolve()),
        }
        assert [d["status"] for d in document["distributions"] if d["name"] == "pip"] == ["accepted"]
        assert document["policy"]["stale"] == []
    done = run_cli("check", "--all", "--python", _python(env), cwd=deep)
    assert done.returncode == 0
    assert "1 accepted" in done.stdout
    # In the CI formats an accepted finding is a warning, never an error.
    github = run_cli("check", "--all", "--python", _python(env), "--format", "github", cwd=deep)
    assert github.returncode == 0
    assert [line.split(" ", 1)[0] for line in github.stdout.splitlines() if BUNDLE in line] == ["::warning"]
    assert BUNDLE not in done.stdout
    shown = run_cli("check", "--all", "--python", _python(env), "--show-accepted", cwd=deep).stdout
    assert f"WD002: {BUNDLE}" in shown and "[accepted by config" in shown

    # One more byte: other bytes, so the pinned rule no longer matches (and says it is stale).
    bundle.write_bytes(original + CA + b"\n")
    rc, document, _ = _check(env, cwd=deep)
    assert rc == 1
    assert _finding(document, "pip", BUNDLE)["accepted"] is None
    assert [r["key"] for r in document["policy"]["stale"]] == ["tool.wheeldoctor.accept[0]"]


def test_an_expired_rule_fails_again_and_says_so(env: Path, tmp_path: Path) -> None:
    bundle = _site(env) / BUNDLE
    bundle.write_bytes(bundle.read_bytes() + CA)
    found = _digest(bundle.read_bytes())
    yesterday = datetime.date.today() - datetime.timedelta(days=1)
    project = tmp_path / "project"
    _project(project, _rule(found, until=yesterday.isoformat()))
    rc, document, _ = _check(env, cwd=project)
    assert rc == 1
    assert [r["until"] for r in document["policy"]["expired"]] == [yesterday.isoformat()]
    text = run_cli("check", "--all", "--python", _python(env), cwd=project).stdout
    assert f"expired on {yesterday.isoformat()}" in text
    tomorrow = datetime.date.today() + datetime.timedelta(days=1)
    _project(project, _rule(found, until=tomorrow.isoformat()))
    assert _check(env, cwd=project)[0] == 0


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (_rule("sha256=abc", key="reson"), "tool.wheeldoctor.accept[0].'reson'"),
        ("[tool.wheeldoctor]\naccepts = []\n", "'tool.wheeldoctor.accepts'"),
        (_rule("sha256=" + "A" * 43, until="'2026-01-01'"), "tool.wheeldoctor.accept[0].until"),
        ('[[tool.wheeldoctor.accept]]\ndistribution = "pip"\ncode = "WD999"\nreason = "x"\n', "code 'WD999'"),
        ('[[tool.wheeldoctor.accept]]\ndistribution = "pip"\nreason = "x"\n', "must name a 'path', a 'code'"),
        ("[tool.wheeldoctor\n", "not valid TOML"),
    ],
)
def test_a_bad_config_exits_2_naming_file_and_key(env: Path, tmp_path: Path, body: str, named: str) -> None:
    config = _project(tmp_path / "project", body)
    done = run_cli("check", "--all", "--python", _python(env), cwd=tmp_path / "project")
    assert done.returncode == 2
    assert str(config.resolve()) in done.stderr or str(config) in done.stderr
    assert named in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_search_stops_at_the_repository_root_and_config_overrides(env: Path, tmp_path: Path) -> None:
    bundle = _site(env) / BUNDLE
    bundle.write_bytes(bundle.read_bytes() + CA)
    found = _digest(bundle.read_bytes())
    outer = tmp_path / "outer"
    outer.mkdir()
    (outer / "pyproject.toml").write_text(_rule(found), encoding="utf-8")
    repo = outer / "repo"
    (repo / ".git").mkdir(parents=True)
    assert _check(env, cwd=repo)[0] == 1  # the config above the repository root is not read
    assert _check(env, "--config", str(outer / "pyproject.toml"), cwd=repo)[0] == 0
    # A wheeldoctor.toml counts too (keys at its top level).
    own = _rule(found).replace("[[tool.wheeldoctor.accept]]", "[[accept]]").replace("[project]\nname = 'ci'\n", "")
    (repo / "wheeldoctor.toml").write_text(own, encoding="utf-8")
    assert _check(env, cwd=repo)[0] == 0
    # Never a config from inside the environment being checked.
    inside = _site(env) / "wheeldoctor.toml"
    inside.write_text(own, encoding="utf-8")
    done = run_cli("check", "--all", "--python", _python(env), "--config", str(inside), cwd=repo)
    assert done.returncode == 2
    assert "inside the environment" in done.stderr


def test_a_baseline_accepts_exactly_that_state(env: Path, tmp_path: Path) -> None:
    site = _site(env)
    bundle = site / BUNDLE
    bundle.write_bytes(bundle.read_bytes() + CA)
    (site / "pip/__main__.py").write_bytes(b"# patched\n")
    typed = (site / "pip/py.typed").read_bytes()
    (site / "pip/py.typed").unlink()
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    rc, document, _ = _check(env, cwd=work)
    assert rc == 1
    before = {(f["path"], f["code"]) for d in document["distributions"] for f in d["findings"]}
    assert len(before) == 3
    baseline = work / "wheeldoctor-baseline.json"
    done = run_cli("check", "--all", "--python", _python(env), "--write-baseline", str(baseline), cwd=work)
    assert done.returncode == 0, done.stderr
    written = json.loads(baseline.read_text(encoding="utf-8"))
    assert written["format"] == "wheeldoctor-baseline" and written["version"] == 1
    assert {(e["path"], e["code"]) for e in written["findings"]} == before
    assert all(e["distribution"] == "pip" and e["version"] for e in written["findings"])

    rc, document, _ = _check(env, "--baseline", str(baseline), cwd=work)
    assert rc == 0, document
    doctor = run_cli("doctor", "--python", _python(env), "--baseline", str(baseline), cwd=work)
    assert doctor.returncode == 0, doctor.stdout
    both = run_cli("check", "--all", "--baseline", str(baseline), "--write-baseline", str(baseline), cwd=work)
    assert both.returncode == 2
    report = work / "report.sarif"
    for extra in (["-o", str(report)], ["--format", "sarif"], ["--json"]):
        again = work / "again.json"
        refused = run_cli("check", "--all", "--python", _python(env), "--write-baseline", str(again), *extra, cwd=work)
        assert (refused.returncode, refused.stdout) == (2, ""), extra
        assert refused.stderr.splitlines() == [
            "error: --write-baseline writes the baseline alone: leave out --format, --json and --output"
        ]
        assert not again.exists() and not report.exists()
    accepted = [f["accepted"] for d in document["distributions"] for f in d["findings"]]
    assert len(accepted) == 3
    assert all(a == {"by": "baseline", "reason": "in the baseline", "source": str(baseline)} for a in accepted)

    # One new change fails; a change to a baselined file's bytes fails too.
    (site / "pip/__init__.py").write_bytes((site / "pip/__init__.py").read_bytes() + b"\n")
    rc, document, _ = _check(env, "--baseline", str(baseline), cwd=work)
    assert rc == 1
    failing = [(f["path"]) for d in document["distributions"] for f in d["findings"] if f["accepted"] is None]
    assert failing == ["pip/__init__.py"]

    # Put a baselined file back: its entry is reported fixed, and nothing fails for it.
    (site / "pip/py.typed").write_bytes(typed)
    rc, document, _ = _check(env, "--baseline", str(baseline), cwd=work)
    assert rc == 1  # pip/__init__.py still fails
    fixed = [(e["path"], e["code"]) for e in document["policy"]["fixed"]]
    assert fixed == [("pip/py.typed", "WD003")]


def test_a_baseline_that_cannot_be_written_is_one_line_and_leaves_no_temporary_file(env: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    taken = out / "baseline.json"
    taken.mkdir(parents=True)  # a directory where the file should go: the final rename fails
    done = run_cli("check", "--all", "--python", _python(env), "--write-baseline", str(taken), cwd=out)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: cannot write {taken}: ") and done.stderr.count("\n") == 1, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["baseline.json"]


def test_a_baseline_written_to_a_pipe_goes_through_it_and_leaves_the_pipe(env: Path, tmp_path: Path) -> None:
    """As root, ``--write-baseline /dev/stdout`` used to rename a regular file over the device."""
    site = _site(env)
    (site / "pip/__main__.py").write_bytes(b"# patched\n")
    out = tmp_path / "out"
    out.mkdir()
    fifo = out / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    done = run_cli("check", "--all", "--python", _python(env), "--write-baseline", str(fifo), cwd=out)
    reader.join(timeout=30)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in out.iterdir()) == ["fifo"]
    assert [e["path"] for e in json.loads(got[0])["findings"]] == ["pip/__main__.py"]


def test_the_project_config_is_read_when_an_editable_install_puts_its_root_on_the_path(
    env: Path, tmp_path: Path
) -> None:
    """hatchling's editable install (and any flat-layout .pth) adds the project root to sys.path."""
    bundle = _site(env) / BUNDLE
    bundle.write_bytes(bundle.read_bytes() + CA)
    project = tmp_path / "project"
    config = _project(project, _rule(_digest(bundle.read_bytes())))
    (_site(env) / "_editable_impl_ci.pth").write_text(f"{project}\n", encoding="utf-8")
    rc, document, _ = _check(env, cwd=project)
    assert rc == 0
    assert document["policy"]["config"] == str(config)
    assert _check(env, "--config", str(config), cwd=tmp_path)[0] == 0

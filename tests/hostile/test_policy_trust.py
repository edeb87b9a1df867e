"""Policy input is trusted only when it is yours; accept rules pin bytes (issue #28, item 4 and 9)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import Planted, no_traceback
from helpers import record_hash, run_cli

TAMPERED = b"ANSWER = 43\n"
NOBODY = 65534


def _accepting(found: str | None = record_hash(TAMPERED), distribution: str = "alpha", **keys: str) -> str:
    rule = {"distribution": distribution, "path": "alpha/core.py", "reason": "r", **keys}
    if found is not None:
        rule["found"] = found
    return "[[accept]]\n" + "".join(f'{k} = "{v}"\n' for k, v in rule.items())


def _tamper(planted: Planted) -> None:
    (planted.site / "alpha/core.py").write_bytes(TAMPERED)


def _project(root: Path) -> Path:
    project = root / "project"
    project.mkdir(parents=True)
    (project / ".git").mkdir()
    return project


def test_a_pinned_rule_in_your_own_config_accepts(planted: Planted, tmp_path: Path) -> None:
    """The control: the same config, yours, is used."""
    _tamper(planted)
    project = _project(tmp_path)
    (project / "wheeldoctor.toml").write_text(_accepting())
    done = run_cli("check", "alpha", "--path", planted.site, cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("mode", "owner", "why"),
    [
        (0o777, NOBODY, "owned by uid 65534"),
        (0o777, 0, "writable by its group and others"),
        (0o775, 0, "writable by its group"),
        (0o1777, NOBODY, "owned by uid 65534"),  # sticky, but not root's
    ],
)
def test_a_config_in_a_directory_others_can_write_is_refused(
    planted: Planted, tmp_path: Path, mode: int, owner: int, why: str
) -> None:
    _tamper(planted)
    shared = tmp_path / "shared"
    shared.mkdir()
    project = shared / "project"
    project.mkdir()
    (shared / "wheeldoctor.toml").write_text(_accepting())
    os.chown(shared, owner, -1)
    shared.chmod(mode)
    done = run_cli("check", "alpha", "--path", planted.site, cwd=project)
    no_traceback(done)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "refused" in done.stderr and why in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_sticky_root_directory_like_tmp_is_fine(planted: Planted, tmp_path: Path) -> None:
    _tamper(planted)
    shared = tmp_path / "sticky"
    shared.mkdir()
    project = _project(shared)
    (project / "wheeldoctor.toml").write_text(_accepting())
    shared.chmod(0o1777)
    done = run_cli("check", "alpha", "--path", planted.site, cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(("mode", "owner"), [(0o666, 0), (0o620, 0), (0o644, NOBODY)])
@pytest.mark.parametrize("how", ["--config", "found"])
def test_a_config_file_others_can_write_or_own_is_refused(
    planted: Planted, tmp_path: Path, mode: int, owner: int, how: str
) -> None:
    _tamper(planted)
    project = _project(tmp_path)
    config = project / "wheeldoctor.toml"
    config.write_text(_accepting())
    os.chown(config, owner, -1)
    config.chmod(mode)
    extra = ["--config", str(config)] if how == "--config" else []
    done = run_cli("check", "alpha", "--path", planted.site, *extra, cwd=project)
    no_traceback(done)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "refused" in done.stderr


@pytest.mark.parametrize(("mode", "owner"), [(0o666, 0), (0o644, NOBODY)])
def test_a_baseline_others_can_write_is_refused(planted: Planted, tmp_path: Path, mode: int, owner: int) -> None:
    _tamper(planted)
    baseline = tmp_path / "baseline.json"
    done = run_cli("check", "alpha", "--path", planted.site, "--write-baseline", baseline, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert run_cli("check", "alpha", "--path", planted.site, "--baseline", baseline, cwd=tmp_path).returncode == 0
    os.chown(baseline, owner, -1)
    baseline.chmod(mode)
    done = run_cli("check", "alpha", "--path", planted.site, "--baseline", baseline, cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "refused" in done.stderr


@pytest.mark.parametrize("code", [None, "WD001"])
def test_a_rule_without_found_does_not_accept_changed_bytes(planted: Planted, tmp_path: Path, code: str | None) -> None:
    _tamper(planted)
    project = _project(tmp_path)
    (project / "wheeldoctor.toml").write_text(_accepting(None, **({"code": code} if code else {})))
    done = run_cli("check", "alpha", "--path", planted.site, cwd=project)
    no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "is broad" in done.stdout


def test_a_rule_without_found_still_accepts_a_missing_file(planted: Planted, tmp_path: Path) -> None:
    """No bytes, nothing to pin: the broad rule keeps its use."""
    (planted.site / "alpha/core.py").unlink()
    project = _project(tmp_path)
    (project / "wheeldoctor.toml").write_text(_accepting(None, code="WD003"))
    done = run_cli("check", "alpha", "--path", planted.site, cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr


def test_unowned_hook_rule_without_a_pin_accepts_no_planted_hook(planted: Planted, tmp_path: Path) -> None:
    (planted.site / "zzz_planted.pth").write_text("import os; os.environ.setdefault('PWNED', '1')\n")
    project = _project(tmp_path)
    rule = '[[accept]]\ndistribution = "(unowned)"\ncode = "WD071"\nreason = "r"\n'
    (project / "wheeldoctor.toml").write_text(rule)
    done = run_cli("check", "--all", "--path", planted.site, cwd=project)
    no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "WD071" in done.stdout


@pytest.mark.parametrize(
    "found",
    [
        "sha256=x\\n",
        "sha256=" + "A" * 43 + "\\n",
        "sha256=" + "A" * 42,
        "sha256=" + "A" * 43 + "=",
        "sha256=" + "A" * 42 + "+",
        "md5=" + "A" * 22,
        "SHA256=" + "A" * 43,
    ],
)
def test_found_must_be_an_exact_digest(planted: Planted, tmp_path: Path, found: str) -> None:
    project = _project(tmp_path)
    (project / "wheeldoctor.toml").write_text(_accepting(found))
    done = run_cli("check", "alpha", "--path", planted.site, cwd=project)
    no_traceback(done)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "accept[0].found must be a digest" in done.stderr


@pytest.mark.parametrize("what", ["--config", "--baseline", "found-config"])
def test_deeply_nested_policy_files_are_one_line_and_exit_2(planted: Planted, tmp_path: Path, what: str) -> None:
    project = _project(tmp_path)
    if what == "--baseline":
        path = project / "baseline.json"
        path.write_text("[" * 100_000 + "]" * 100_000)
    else:
        path = project / "wheeldoctor.toml"
        path.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    args = [what, str(path)] if what.startswith("--") else []
    done = run_cli("check", "alpha", "--path", planted.site, *args, cwd=project)
    no_traceback(done)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "nested too deeply" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1

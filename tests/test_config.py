"""Accept rules as read from TOML, and matched over (distribution, path, code, found)."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from wheeldoctor.formats.config import ConfigError, find_config, load_config
from wheeldoctor.judge.files import DistributionReport, Status, status_of
from wheeldoctor.judge.policy import Policy, accept, outcome
from wheeldoctor.model.findings import Code, Finding, Kind

pytestmark = pytest.mark.unit

RULES = """
[[tool.wheeldoctor.accept]]
distribution = "Cert_Ifi"
path = "certifi/cacert.pem"
found = "sha256=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
reason = "corporate CA"

[[tool.wheeldoctor.accept]]
distribution = "hooked"
code = "WD015"
reason = "no hash, known"
until = 2020-01-01
"""


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder / name


def test_rules_are_read_and_match_generically(tmp_path: Path) -> None:
    config = load_config(str(_write(tmp_path, "pyproject.toml", RULES)))
    pinned, dated = config.rules
    assert pinned.distribution == "cert-ifi"
    assert pinned.matches(
        "cert-ifi", "certifi/cacert.pem", "WD002", "sha256=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    )
    assert pinned.matches(
        "cert-ifi", "certifi/cacert.pem", "WD001", "sha256=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    )  # no code: any code
    assert not pinned.matches(
        "cert-ifi",
        "certifi/cacert.pem",
        "WD002",
        "sha256=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB",
    )
    assert not pinned.matches(
        "other", "certifi/cacert.pem", "WD002", "sha256=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    )
    assert dated.until == datetime.date(2020, 1, 1)
    assert dated.expired(datetime.date(2020, 1, 2)) and not dated.expired(datetime.date(2020, 1, 1))
    assert (pinned.key, dated.key) == ("tool.wheeldoctor.accept[0]", "tool.wheeldoctor.accept[1]")


def test_policy_accepts_counts_and_reports_stale_and_expired(tmp_path: Path) -> None:
    config = load_config(str(_write(tmp_path, "pyproject.toml", RULES)))
    appended = Finding(
        code=Code.SIZE_MISMATCH,
        kind=Kind.MODIFIED,
        path="certifi/cacert.pem",
        message="x",
        found="sha256=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    )
    other = Finding(
        code=Code.HASH_MISMATCH,
        kind=Kind.MODIFIED,
        path="certifi/core.py",
        message="x",
        found="sha256=BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB",
    )
    bare = Finding(code=Code.NO_HASH, kind=Kind.UNVERIFIABLE, path="hooked/x.py", message="x")
    reports = [
        DistributionReport(
            name="cert-ifi", version="1", location=None, installer=None, status=Status.BROKEN, findings=(appended,)
        ),
        DistributionReport(
            name="hooked", version="1", location=None, installer=None, status=Status.UNVERIFIABLE, findings=(bare,)
        ),
        DistributionReport(
            name="more", version="1", location=None, installer=None, status=Status.BROKEN, findings=(other,)
        ),
    ]
    policy = Policy(today=datetime.date(2026, 1, 1), config=config)
    done = accept(reports, policy)
    certifi, hooked, more = done.reports
    assert certifi.findings[0].accepted is not None and certifi.findings[0].accepted.by == "config"
    assert status_of(certifi.findings) is Status.ACCEPTED
    assert hooked.findings[0].accepted is None  # expired
    assert status_of(more.findings) is Status.BROKEN
    summary = outcome(policy, done.reports, done)
    assert summary.accepted == 1
    assert [r.distribution for r in summary.expired] == ["hooked"]
    assert summary.stale == ()


def test_the_search_prefers_wheeldoctor_toml_and_skips_pyprojects_without_the_table(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    _write(repo, "pyproject.toml", RULES)
    _write(repo / "pkg", "pyproject.toml", "[project]\nname = 'pkg'\n")  # no [tool.wheeldoctor]: skipped
    assert find_config(str(repo / "pkg")) == str((repo / "pyproject.toml").resolve())
    _write(repo, "wheeldoctor.toml", "")
    assert find_config(str(repo / "pkg")) == str((repo / "wheeldoctor.toml").resolve())
    assert find_config(str(repo / "pkg"), outside=[str(repo)]) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[accept]]\ndistribution = "x"\npath = "p"\nreason = 3\n', "accept[0].reason must be a non-empty string"),
        ('[[accept]]\ndistribution = "x"\npath = "p"\n', "lacks the required key 'reason'"),
        ('[[accept]]\ndistribution = "x"\npath = "p"\nreason = "r"\nuntil = 2026-01-01T10:00:00\n', "until"),
        ('[[accept]]\ndistribution = "x"\npath = "p"\nreason = "r"\nfound = "abc"\n', "accept[0].found"),
        ("accept = 1\n", "must be an array of tables"),
        ("other = 1\n", "unknown key 'other'"),
    ],
)
def test_bad_entries_name_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, "wheeldoctor.toml", text)
    with pytest.raises(ConfigError) as raised:
        load_config(str(path))
    assert str(raised.value).startswith(f"{path}: ")
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_config_that_is_a_fifo_or_too_big_is_one_line_not_a_wait(tmp_path: Path) -> None:
    """Nobody writes to the FIFO: a blocking open would wait forever (run_cli would time out)."""
    import os

    from helpers import run_cli

    site = tmp_path / "site"
    site.mkdir()
    fifo = tmp_path / "wheeldoctor.toml"
    os.mkfifo(fifo)
    done = run_cli("check", "--all", "--config", fifo, "--path", site)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.strip().splitlines()[-1] == f"error: {fifo}: cannot be read: not a regular file"
    with pytest.raises(ConfigError, match=r"wheeldoctor\.toml: cannot be read: not a regular file$"):
        load_config(fifo)
    big = tmp_path / "big" / "wheeldoctor.toml"
    big.parent.mkdir()
    big.write_bytes(b"#" * ((16 << 20) + 1))
    with pytest.raises(ConfigError, match=r"cannot be read: larger than 16 MiB$"):
        load_config(big)

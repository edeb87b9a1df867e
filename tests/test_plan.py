"""The plan alone (repair/plan.py): what a system package manager's distribution gets, on a real dist-info.

The installs and runs are in tests/test_fix.py; here the manager is attached by hand,
as wheeldoctor/where/managers.py attaches it when dpkg lists the files.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from wheeldoctor.judge.clash import ClashPair, Relation
from wheeldoctor.judge.duplicates import find_duplicates
from wheeldoctor.judge.files import DistributionReport, Status
from wheeldoctor.model.findings import Code, Finding, Kind
from wheeldoctor.model.managed import ManagedBy, Tool
from wheeldoctor.repair.outcome import Seen, step_problem
from wheeldoctor.repair.plan import Expected, FixStep, plan_repairs
from wheeldoctor.repair.requirements import duplicate_cleanup
from wheeldoctor.repair.steps import StepKind, locked_pin, repair_step, uninstall_command
from wheeldoctor.where.environment import load_environment

pytestmark = pytest.mark.unit


def broken(site: Path, installer: str) -> DistributionReport:
    """A dist-info of ``yaml-demo`` 6.0 with one modified file, as check reports it."""
    path = site / "yaml_demo-6.0.dist-info"
    path.mkdir(parents=True)
    (path / "METADATA").write_text("Metadata-Version: 2.1\nName: yaml-demo\nVersion: 6.0\n")
    (path / "INSTALLER").write_text(installer + "\n")
    (path / "RECORD").write_text("")
    env = load_environment("test", [str(site)], [], python="/usr/bin/python3")
    [dist] = env.distributions
    finding = Finding(
        code=Code.HASH_MISMATCH,
        kind=Kind.MODIFIED,
        path="yaml/_yaml.so",
        message="altered",
        expected="sha256=a",
        found="sha256=b",
    )
    return DistributionReport(
        name=dist.name,
        version=dist.version,
        location=dist.location,
        installer=dist.installer,
        status=Status.BROKEN,
        findings=(finding,),
        dist=dist,
    )


def test_a_dpkg_distribution_gets_apt_for_the_user_and_no_step(tmp_path: Path) -> None:
    report = broken(tmp_path / "dist-packages", "debian")
    assert report.dist is not None
    dist = replace(report.dist, managed_by=ManagedBy(tool=Tool.DPKG, package="python3-yaml-demo"))
    env = load_environment("test", [str(tmp_path / "dist-packages")], [], python="/usr/bin/python3")
    plan = plan_repairs(env, [replace(report, dist=dist)], [], [])
    assert plan.steps == ()
    [left] = plan.left_alone
    assert left.reason == "its files belong to dpkg (package python3-yaml-demo): repair it with dpkg"
    assert left.commands == ("apt-get install --reinstall python3-yaml-demo",)


def test_a_pip_distribution_gets_its_pinned_reinstall(tmp_path: Path) -> None:
    report = broken(tmp_path / "site-packages", "pip")
    env = load_environment("test", [str(tmp_path / "site-packages")], [], python="/venv/bin/python")
    plan = plan_repairs(env, [report], [], [])
    assert [s.command for s in plan.steps] == [
        "pip --python /venv/bin/python install --force-reinstall --no-deps -- yaml-demo==6.0"
    ]
    assert plan.left_alone == ()


def test_the_side_a_keep_uninstalls_is_not_reinstalled_first(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    report = broken(site, "pip")  # yaml-demo, altered in a path of its own
    other = site / "other_demo-1.0.dist-info"
    other.mkdir()
    (other / "METADATA").write_text("Metadata-Version: 2.1\nName: other-demo\nVersion: 1.0\n")
    (other / "INSTALLER").write_text("pip\n")
    (other / "RECORD").write_text("")
    env = load_environment("test", [str(site)], [], python="/venv/bin/python")
    dist, kept = env.find("yaml-demo"), env.find("other-demo")
    assert dist is not None and kept is not None
    pair = ClashPair(
        first=dist,
        second=kept,
        shared=1,
        differing=1,
        from_first=0,
        from_second=1,
        from_neither=0,
        winner=kept,
        reason="more of it is on disk",
        relation=Relation.UNRELATED,
    )
    plan = plan_repairs(env, [replace(report, dist=dist)], [pair], [], keep=["other-demo"])
    assert [(s.kind, s.name) for s in plan.steps] == [
        (StepKind.UNINSTALL, "yaml-demo"),
        (StepKind.REINSTALL, "other-demo"),
    ]
    assert Expected("yaml-demo", None) in plan.expected


def test_every_pip_step_on_an_externally_managed_interpreter_overrides_the_marker(tmp_path: Path) -> None:
    """pip and uv refuse to uninstall from a PEP 668 interpreter too, not only to install."""
    site = tmp_path / "site-packages"
    for version in ("6.0", "5.0"):
        path = site / f"yaml_demo-{version}.dist-info"
        path.mkdir(parents=True)
        (path / "METADATA").write_text(f"Metadata-Version: 2.1\nName: yaml-demo\nVersion: {version}\n")
        (path / "INSTALLER").write_text("pip\n")
    plain = load_environment("test", [str(site)], [], python="/usr/bin/python3")
    marked = replace(plain, externally_managed="/usr/lib/python3.12/EXTERNALLY-MANAGED")
    [duplicate] = find_duplicates(marked)
    for env, overridden in ((marked, True), (plain, False)):
        active = duplicate.active
        cleanup = [command.argv for _, command in duplicate_cleanup(duplicate, env).steps]
        argvs = [uninstall_command(active, env).argv, repair_step(active, env).argv, *cleanup]
        assert len(argvs) == 5  # two uninstalls (a stale dist-info and the live one), then one install
        assert all(("--break-system-packages" in argv) is overridden for argv in argvs), argvs


def test_a_second_path_directory_is_repaired_in_place_not_through_the_first_ones_interpreter(tmp_path: Path) -> None:
    """``--path A --path B``: the interpreter found beside A would install B's distribution into A."""
    first, second = tmp_path / "a" / "site-packages", tmp_path / "b"
    first.mkdir(parents=True)
    report = broken(second, "pip")
    env = load_environment("test", [str(first), str(second)], [], python="/venv/bin/python")
    dist = env.find("yaml-demo")
    assert dist is not None
    plan = plan_repairs(env, [replace(report, dist=dist)], [], [])
    words = ("pip", "install", "--target", str(second), "--upgrade", "--force-reinstall", "--no-deps")
    assert [s.argv for s in plan.steps] == [(*words, "--", "yaml-demo==6.0")]
    assert uninstall_command(dist, env).argv == ("uv", "pip", "uninstall", "--target", str(second), "--", "yaml-demo")


def _against_lock(
    site: Path, findings: tuple[Finding, ...], locked: dict[str, str]
) -> tuple[DistributionReport, object]:
    """``broken``'s yaml-demo 6.0 with the lock's findings, in an environment checked against a lock."""
    report = replace(broken(site, "pip"), findings=findings)
    env = replace(load_environment("test", [str(site)], [], python="/venv/bin/python"), locked=locked)
    return report, env


def test_against_a_lock_the_reinstall_pins_the_locks_version(tmp_path: Path) -> None:
    other = Finding(
        code=Code.LOCKED_OTHER_VERSION,
        kind=Kind.MODIFIED,
        path=None,
        message="is installed at another version",
        expected="6.1",
        found="6.0",
    )
    report, env = _against_lock(tmp_path / "site-packages", (other,), {"yaml-demo": "6.1"})
    plan = plan_repairs(env, [report], [], [])
    [step] = plan.steps
    assert step.argv == (
        "pip",
        "--python",
        "/venv/bin/python",
        "install",
        "--force-reinstall",
        "--no-deps",
        "--",
        "yaml-demo==6.1",
    )
    assert (step.kind, step.tool, step.version, step.change) == (StepKind.REINSTALL, "pip", "6.1", "upgrade")
    # A version change is never silent: the step says which way.
    assert step.fixes.startswith("upgrade: installs the lock's version 6.1 (installed: 6.0)")
    assert plan.expected == (Expected("yaml-demo", "6.1"),)
    assert report.dist is not None
    assert repair_step(report.dist, env).argv == step.argv  # the tip: the same words


def test_against_a_lock_an_unlocked_distribution_is_left_for_the_user_with_its_uninstall(tmp_path: Path) -> None:
    unlocked = Finding(
        code=Code.NOT_LOCKED, kind=Kind.UNLOCKED, path=None, message="is installed but pylock.toml does not lock it"
    )
    report, env = _against_lock(tmp_path / "site-packages", (unlocked,), {})
    plan = plan_repairs(env, [report], [], [])
    assert plan.steps == ()
    [left] = plan.left_alone
    assert left.reason == "not in the lock: uninstall it, or accept WD083 for it by a rule"
    assert left.commands == ("pip --python /venv/bin/python uninstall -y -- yaml-demo",)


def test_against_a_lock_a_locked_wheel_that_is_not_the_locks_is_not_reinstalled(tmp_path: Path) -> None:
    """The wheel at hand fails the lock's hash: reinstalling from the same index would not help."""
    mismatch = Finding(
        code=Code.LOCK_HASH_MISMATCH,
        kind=Kind.MODIFIED,
        path="yaml_demo-6.0-py3-none-any.whl",
        message="differs",
        expected="a",
        found="b",
    )
    report, env = _against_lock(tmp_path / "site-packages", (mismatch,), {"yaml-demo": "6.0"})
    plan = plan_repairs(env, [report], [], [])
    assert plan.steps == ()
    assert [left.reason for left in plan.left_alone] == [
        "WD085: a reinstall of the same version is not known to repair it"
    ]


@pytest.mark.parametrize(
    ("name", "version", "pin"),
    [
        ("Yaml_Demo", "6.0", ("yaml-demo", "6.0")),
        ("six", "1.17.0", ("six", "1.17.0")),
        ("six", "1!2.0.post1", ("six", "1!2.0.post1")),
        ("-e", "1.0", None),
        ("--index-url=http://evil", "1.0", None),
        ("a b", "1.0", None),
        ("six", "-1.0", None),
        ("six", " 1.0", None),
        ("six", "1.0; rm -rf /", None),
        ("six", ">=1.0", None),
        ("six", None, None),
    ],
)
def test_a_locked_pin_is_a_valid_name_and_a_pep440_version_or_nothing(
    name: str, version: str | None, pin: tuple[str, str] | None
) -> None:
    assert locked_pin(name, version) == pin


# -- whether a step did its job: its directory before and after ------------------------------------


def _step(kind: StepKind, version: str = "2.0") -> FixStep:
    return FixStep(
        kind=kind, tool="pip", name="demo", version=version, argv=("pip",), fixes="", location="/site", group="g"
    )


RECORD_A, RECORD_B = (1, 10, 100, 100), (2, 10, 200, 200)


@pytest.mark.parametrize(
    ("kind", "before", "after", "said", "why"),
    [
        (StepKind.UNINSTALL, [("a", "1.0", RECORD_A), ("b", "2.0", RECORD_B)], [("b", "2.0", RECORD_B)], [], None),
        (
            StepKind.UNINSTALL,
            [("a", "1.0", RECORD_A)],
            [("a", "1.0", RECORD_A)],
            ["Can't uninstall 'demo'. No files were found to uninstall."],
            "pip exited 0, but nothing was uninstalled: 1 dist-info(s) of demo in /site, as before "
            "(pip said: Can't uninstall 'demo'. No files were found to uninstall.)",
        ),
        (StepKind.INSTALL, [], [("b", "2.0", RECORD_B)], [], None),
        (StepKind.REINSTALL, [("b", "2.0", RECORD_A)], [("b", "2.0", RECORD_B)], [], None),
        (
            StepKind.REINSTALL,
            [("b", "2.0", RECORD_A)],
            [("b", "2.0", RECORD_A)],
            ["Requirement already satisfied: demo==2.0 in /site (2.0)"],
            "pip exited 0, but nothing was installed: b/RECORD was not written again "
            "(pip said: Requirement already satisfied: demo==2.0 in /site (2.0))",
        ),
        (
            StepKind.INSTALL,
            [("a", "1.0", RECORD_A)],
            [("a", "1.0", RECORD_A), ("b", "2.0", RECORD_B)],
            [],
            "pip exited 0, but 2 dist-infos of demo in /site afterwards, not one",
        ),
        (StepKind.INSTALL, [], [("b", "1.0", RECORD_B)], [], "pip exited 0, but b is 1.0, not 2.0"),
    ],
    ids=["uninstalled", "nothing-to-uninstall", "installed", "reinstalled", "already-satisfied", "two-left", "version"],
)
def test_a_step_has_done_its_job_only_when_its_directory_shows_it(
    kind: StepKind,
    before: list[tuple[str, str, tuple[int, ...]]],
    after: list[tuple[str, str, tuple[int, ...]]],
    said: list[str],
    why: str | None,
) -> None:
    seen_before, seen_after = [Seen(*s) for s in before], [Seen(*s) for s in after]
    assert step_problem(_step(kind), seen_before, seen_after, ["Looking in links: /w", *said]) == why


def test_a_base_interpreters_distribution_is_not_repaired_through_a_venvs_pip(tmp_path: Path) -> None:
    """A ``--system-site-packages`` venv's pip installs into the venv: the base's files would stay as they are."""
    venv, base = tmp_path / "venv", tmp_path / "base"
    inside, outside = venv / "lib" / "python3.11" / "site-packages", base / "lib" / "python3.11" / "site-packages"
    inside.mkdir(parents=True)
    report = broken(outside, "pip")
    env = load_environment("test", [str(inside), str(outside)], [str(venv), str(base)], python=str(venv / "bin/python"))
    env = replace(env, venv=str(venv))
    dist = env.find("yaml-demo")
    assert dist is not None
    plan = plan_repairs(env, [replace(report, dist=dist)], [], [])
    words = ("pip", "install", "--target", str(outside), "--upgrade", "--force-reinstall", "--no-deps")
    assert [s.argv for s in plan.steps] == [(*words, "--", "yaml-demo==6.0")]

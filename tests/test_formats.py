"""The CI formats (--format github|junit|sarif|json, -o), --version, and the pre-commit refusal.

Every run is ``python -m wheeldoctor`` against a real venv that real pip installed into;
the damaged one has one modified and two missing files. The SARIF schema in
tests/data/sarif-schema-2.1.0.json is OASIS's, copied from oasis-tcs/sarif-spec
(sarif-2.1/schema/sarif-schema-2.1.0.json).
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import Venv, build_wheel, make_venv, pip_install, read_record, record_hash, run_cli

import wheeldoctor
from wheeldoctor.model.code_help import CODE_HELP
from wheeldoctor.model.findings import Code, Kind
from wheeldoctor.report import github, junit
from wheeldoctor.report.cases import Case, Cases, Item

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
FORMATS = ("text", "json", "github", "junit", "sarif")

ALPHA = {"alpha/__init__.py": b"A = 1\n", "alpha/core.py": b"ANSWER = 42\n", "alpha/extra.py": b"EXTRA = 1\n"}
BETA = {"beta/__init__.py": b"B = 1\n", "beta/util.py": b"U = 2\n"}
GAMMA = {"gamma/__init__.py": b"G = 1\n"}


@dataclass(frozen=True)
class Envs:
    healthy: Venv
    damaged: Venv


def unescape_property(value: str) -> str:
    """What the Actions runner reads back from a property value (the inverse of ``escape_property``)."""
    for encoded, char in (("%2C", ","), ("%3A", ":"), ("%0A", "\n"), ("%0D", "\r"), ("%25", "%")):
        value = value.replace(encoded, char)
    return value


def unescape_data(value: str) -> str:
    """What the Actions runner reads back from a message (the inverse of ``escape_data``)."""
    for encoded, char in (("%0A", "\n"), ("%0D", "\r"), ("%25", "%")):
        value = value.replace(encoded, char)
    return value


def _pip_env(root: Path, name: str, wheels: list[Path]) -> Venv:
    venv = make_venv(root / name)
    pip_install(venv, "--no-index", "--no-deps", *wheels)
    return venv


@pytest.fixture(scope="module")
def envs(tmp_path_factory: pytest.TempPathFactory) -> Envs:
    """Two pip envs with alpha, beta and gamma; in the second alpha/core.py is modified and
    alpha/extra.py and beta/util.py are gone (three findings, two broken distributions)."""
    root = tmp_path_factory.mktemp("formats")
    built = [
        build_wheel(root / "wheels", "alpha", "1.0", ALPHA),
        build_wheel(root / "wheels", "beta", "2.0", BETA),
        build_wheel(root / "wheels", "gamma", "3.0", GAMMA),
    ]
    healthy = _pip_env(root, "healthy", built)
    damaged = _pip_env(root, "damaged", built)
    (damaged.site_packages / "alpha/core.py").write_bytes(b"ANSWER = 43\n")
    (damaged.site_packages / "alpha/extra.py").unlink()
    (damaged.site_packages / "beta/util.py").unlink()
    return Envs(healthy, damaged)


def wd(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = run_cli(*args, env=env)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def validate_sarif(document: dict[str, Any]) -> None:
    import jsonschema  # its import is slow (format checkers' grammars): paid by the tests that use it

    jsonschema.Draft4Validator(SCHEMA).validate(document)


# --------------------------------------------------------------------------
# the damaged env: every format says so and exits 1
# --------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["check", "doctor"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_exits_1_on_a_damaged_env(envs: Envs, command: str, fmt: str) -> None:
    args = ["--all"] if command == "check" else []
    done = wd(command, *args, "--python", envs.damaged.python, "--format", fmt)
    assert done.returncode == 1, done.stderr
    assert done.stdout


@pytest.mark.parametrize("command", ["check", "doctor", "deps"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_exits_0_on_a_healthy_env(envs: Envs, command: str, fmt: str) -> None:
    args = ["--all"] if command == "check" else []
    done = wd(command, *args, "--python", envs.healthy.python, "--format", fmt)
    assert (done.returncode, done.stderr) == (0, "")
    assert "::error" not in done.stdout


def test_github_prints_an_error_per_finding(envs: Envs) -> None:
    done = wd("check", "--all", "--python", envs.damaged.python, "--format", "github")
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error")]
    titles = sorted(re.match(r"::error title=([^:]*)::", line).group(1) for line in errors)  # type: ignore[union-attr]
    assert [unescape_property(t) for t in titles] == [
        "alpha 1.0: WD001: alpha/core.py",
        "alpha 1.0: WD003: alpha/extra.py",
        "beta 2.0: WD003: beta/util.py",
    ]
    assert not [line for line in done.stdout.splitlines() if line.startswith("::warning")]
    assert "file=" not in done.stdout  # site-packages is outside the workspace


def test_json_format_equals_json_flag(envs: Envs) -> None:
    for command, args in (("check", ["--all"]), ("doctor", []), ("deps", [])):
        flag = wd(command, *args, "--python", envs.damaged.python, "--json")
        option = wd(command, *args, "--python", envs.damaged.python, "--format", "json")
        assert (option.returncode, option.stdout) == (flag.returncode, flag.stdout)
        assert json.loads(option.stdout)["command"] == command


def test_junit_has_a_case_per_distribution_and_a_failure_per_broken_one(envs: Envs, tmp_path: Path) -> None:
    out = tmp_path / "report.xml"
    done = wd("check", "--all", "--python", envs.damaged.python, "--format", "junit", "-o", out)
    assert done.returncode == 1
    assert "3 checked: 1 intact, 2 broken; 3 finding(s)" in done.stdout.splitlines()  # the text report
    root = ET.parse(out).getroot()
    (suite,) = root.findall("testsuite")
    cases = {c.get("classname"): c for c in suite.findall("testcase")}
    assert sorted(cases) == ["alpha", "beta", "gamma"]
    assert len({c.get("name") for c in cases.values()}) == 3
    assert [n for n, c in sorted(cases.items()) if c.find("failure") is not None] == ["alpha", "beta"]
    assert cases["gamma"].find("failure") is None and cases["gamma"].find("skipped") is None
    assert (suite.get("tests"), suite.get("failures"), root.get("failures")) == ("3", "2", "2")
    failure = cases["alpha"].find("failure")
    assert failure is not None and failure.text is not None
    assert "WD001: alpha/core.py" in failure.text and "WD003: alpha/extra.py" in failure.text


def test_junit_reads_the_same_in_junitparser(envs: Envs, tmp_path: Path) -> None:
    """junitparser (what many CI report tools build on) reads the suites, cases and failures we meant."""
    junitparser = pytest.importorskip("junitparser")
    out = tmp_path / "report.xml"
    assert wd("doctor", "--python", envs.damaged.python, "--format", "junit", "-o", out).returncode == 1
    xml = junitparser.JUnitXml.fromfile(str(out))
    suites = {suite.name: suite for suite in xml}
    assert list(suites) == ["wheeldoctor check", "wheeldoctor deps"]
    check = suites["wheeldoctor check"]
    assert (check.tests, check.failures, check.errors) == (3, 2, 0)
    failed = {case.classname: case for case in check if not case.is_passed}
    assert sorted(failed) == ["alpha", "beta"]
    (failure,) = failed["alpha"].result
    assert isinstance(failure, junitparser.Failure)
    assert "WD001: alpha/core.py" in (failure.text or "")
    assert all(case.is_passed for case in suites["wheeldoctor deps"])


def test_junit_doctor_has_a_suite_per_check_and_healthy_passing_cases(envs: Envs, tmp_path: Path) -> None:
    out = tmp_path / "report.xml"
    assert wd("doctor", "--python", envs.healthy.python, "--format", "junit", "-o", out).returncode == 0
    suites = ET.parse(out).getroot().findall("testsuite")
    assert [s.get("name") for s in suites] == ["wheeldoctor check", "wheeldoctor deps"]
    for suite in suites:
        names = sorted(c.get("classname") or "" for c in suite.findall("testcase"))
        assert {"alpha", "beta", "gamma"} <= set(names)
        assert suite.get("failures") == "0" and not suite.findall("testcase/failure")


def test_sarif_validates_with_a_result_per_finding(envs: Envs, tmp_path: Path) -> None:
    out = tmp_path / "report.sarif"
    done = wd("check", "--all", "--python", envs.damaged.python, "--format", "sarif", "-o", out)
    assert done.returncode == 1
    document = json.loads(out.read_text(encoding="utf-8"))
    validate_sarif(document)
    assert (document["version"], document["$schema"].endswith("sarif-schema-2.1.0.json")) == ("2.1.0", True)
    (run,) = document["runs"]
    results = run["results"]
    located = sorted(
        (r["ruleId"], r["level"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in results
    )
    assert located == [
        ("WD001", "error", "alpha/core.py"),
        ("WD003", "error", "alpha/extra.py"),
        ("WD003", "error", "beta/util.py"),
    ]
    bases = run["originalUriBaseIds"]
    for result in results:
        artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
        assert bases[artifact["uriBaseId"]]["uri"] == Path(envs.damaged.site_packages).as_uri() + "/"
        assert len(result["partialFingerprints"]["wheeldoctorFinding/v1"]) == 64
    assert len({r["partialFingerprints"]["wheeldoctorFinding/v1"] for r in results}) == 3
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["WD001", "WD003"]
    assert rules[0]["shortDescription"]["text"] == CODE_HELP[Code.HASH_MISMATCH].short
    # Each rule says what to do itself: no link to a page that may not exist, a rank GitHub can sort by.
    assert not any("helpUri" in r for r in rules) and "informationUri" not in run["tool"]["driver"]
    assert rules[0]["help"]["text"].endswith(f"What to do: {CODE_HELP[Code.HASH_MISMATCH].todo}")
    assert [r["properties"]["security-severity"] for r in rules] == ["8.0", "5.0"]
    assert all(r["properties"]["tags"][0] == "security" for r in rules)
    assert run["tool"]["driver"]["version"] == wheeldoctor.__version__
    # Fingerprints are stable: a second run gives the same ones.
    again = tmp_path / "again.sarif"
    wd("check", "--all", "--python", envs.damaged.python, "--format", "sarif", "-o", again)
    second = json.loads(again.read_text(encoding="utf-8"))["runs"][0]["results"]
    assert [r["partialFingerprints"] for r in second] == [r["partialFingerprints"] for r in results]


def test_sarif_of_a_healthy_env_has_no_results(envs: Envs, tmp_path: Path) -> None:
    for command, args in (("check", ["--all"]), ("doctor", [])):
        out = tmp_path / f"{command}.sarif"
        assert wd(command, *args, "--python", envs.healthy.python, "--format", "sarif", "-o", out).returncode == 0
        document = json.loads(out.read_text(encoding="utf-8"))
        validate_sarif(document)
        assert document["runs"][0]["results"] == []


def test_doctor_sarif_of_a_damaged_env_validates(envs: Envs) -> None:
    done = wd("doctor", "--python", envs.damaged.python, "--format", "sarif")
    assert done.returncode == 1
    document = json.loads(done.stdout)
    validate_sarif(document)
    assert len(document["runs"][0]["results"]) == 3


def test_output_replaces_the_file_and_text_still_goes_to_stdout(envs: Envs, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    out.write_text("old and longer than the new report " * 1000)
    done = wd("check", "--all", "--python", envs.healthy.python, "--format", "json", "-o", out)
    assert done.returncode == 0
    assert json.loads(out.read_text())["healthy"] is True
    assert done.stdout.splitlines()[-1] == "3 checked: 3 intact; 0 finding(s)"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]  # no temporary left behind
    text_file = tmp_path / "report.txt"
    done = wd("check", "--all", "--python", envs.healthy.python, "-o", text_file)
    assert (done.returncode, done.stdout) == (0, "")
    assert text_file.read_text().splitlines()[-1] == "3 checked: 3 intact; 0 finding(s)"


@pytest.mark.parametrize(
    ("command", "fmt"),
    [
        ("check", "json"),
        ("check", "sarif"),
        ("check", "cyclonedx"),
        ("doctor", "json"),
        ("deps", "json"),
        ("wheels", "json"),
    ],
)
def test_output_dash_is_stdout(envs: Envs, tmp_path: Path, command: str, fmt: str) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    if command == "wheels":
        target = [str(build_wheel(tmp_path / "wheels", "one", "1.0", {"one/__init__.py": b""}))]
    else:
        target = [*(["--all"] if command == "check" else []), "--python", str(envs.healthy.python)]
    done = run_cli(command, *target, "--format", fmt, "-o", "-", cwd=cwd)
    assert done.returncode == 0, done.stderr
    assert list(cwd.iterdir()) == []  # as snapshot and diff read it: no file named "-"
    document = json.loads(done.stdout)  # the document alone, no text report beside it
    assert isinstance(document, dict)


def test_output_into_a_missing_directory_is_one_line_and_exit_2(envs: Envs, tmp_path: Path) -> None:
    done = wd("check", "--all", "--python", envs.healthy.python, "--format", "sarif", "-o", tmp_path / "no" / "x")
    assert done.returncode == 2
    assert done.stderr.startswith("error: cannot write")


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--format", "xml"], "unknown format"), (["--json", "--format", "sarif"], "--json is --format json")],
)
def test_bad_format_choices_are_one_line_and_exit_2(envs: Envs, args: list[str], message: str) -> None:
    done = wd("deps", "--python", envs.healthy.python, *args)
    assert done.returncode == 2
    assert message in done.stderr and done.stdout == ""


def test_github_step_summary_is_appended(envs: Envs, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    done = wd("doctor", "--python", envs.damaged.python, "--format", "github", env=env)
    assert done.returncode == 1
    text = summary.read_text()
    assert text.startswith("earlier step\n### wheeldoctor doctor")
    assert "| error | alpha 1.0 | WD001 | alpha/core.py |" in text
    assert "**check**: 3 checked, 2 failing" in text and "**deps**" in text


def test_github_actions_alone_changes_nothing(envs: Envs) -> None:
    plain = wd("check", "--all", "--python", envs.damaged.python)
    under_actions = wd("check", "--all", "--python", envs.damaged.python, env={"GITHUB_ACTIONS": "true"})
    assert under_actions.stdout == plain.stdout and "::" not in plain.stdout


def test_shadowed_dist_infos_are_warnings_and_skipped_cases(envs: Envs, tmp_path: Path) -> None:
    """The same three distributions in two directories: the later ones are shadowed (WD051),
    which is reported but passes."""
    sites = ["--path", envs.healthy.site_packages, "--path", envs.damaged.site_packages]
    done = wd("deps", *sites, "--format", "github")
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stdout.splitlines() if line.startswith("::warning")]
    assert len(warnings) == 3 and all("WD051" in w for w in warnings)
    assert "::error" not in done.stdout
    out = tmp_path / "deps.xml"
    assert wd("deps", *sites, "--format", "junit", "-o", out).returncode == 0
    suite = ET.parse(out).getroot().find("testsuite")
    assert suite is not None and (suite.get("failures"), suite.get("skipped")) == ("0", "3")
    document = json.loads(wd("deps", *sites, "--format", "sarif").stdout)
    validate_sarif(document)
    assert {(r["ruleId"], r["level"]) for r in document["runs"][0]["results"]} == {("WD051", "warning")}


def test_a_missing_requirement_is_located_at_the_metadata_that_asks_for_it(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path / "wheels", "needy", "1.0", {"needy/__init__.py": b""}, requires=["absent>=2"])
    venv = _pip_env(tmp_path, "venv", [wheel])
    done = wd("deps", "--python", venv.python, "--format", "sarif")
    assert done.returncode == 1
    document = json.loads(done.stdout)
    validate_sarif(document)
    (result,) = document["runs"][0]["results"]
    artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert (result["ruleId"], result["level"], artifact["uri"]) == ("WD040", "error", "needy-1.0.dist-info/METADATA")
    github_out = wd("deps", "--python", venv.python, "--format", "github")
    assert github_out.stdout.startswith("::error title=needy 1.0%3A WD040%3A needy-1.0.dist-info/METADATA::")


def _digest(path: Path) -> list[str]:
    data = path.read_bytes()
    return [record_hash(data), str(len(data))]


def test_a_metadata_problem_is_one_result_in_deps_and_in_doctor(tmp_path: Path) -> None:
    """An unparseable requirement (WD033) is in ``deps``'s compatibility section only once."""
    wheel = build_wheel(tmp_path / "wheels", "odd", "1.0", {"odd/__init__.py": b""})
    venv = _pip_env(tmp_path, "venv", [wheel])
    # Planted after install: pip 24.1+ refuses to install a wheel whose metadata does not parse.
    # RECORD is made to vouch for the new METADATA, so that doctor sees the requirement alone.
    dist_info = venv.dist_info("odd")
    metadata = dist_info / "METADATA"
    metadata.write_text(metadata.read_text() + "Requires-Dist: not a requirement !!\n")
    record = dist_info / "RECORD"
    rows = [
        row if not row or row[0] != "odd-1.0.dist-info/METADATA" else [row[0], *_digest(metadata)]
        for row in read_record(record)
    ]
    with record.open("w", newline="") as out:
        csv.writer(out, lineterminator="\n").writerows(rows)
    for command in ("deps", "doctor"):
        done = wd(command, "--python", venv.python, "--format", "sarif")
        assert done.returncode == 1
        results = json.loads(done.stdout)["runs"][0]["results"]
        assert [r["ruleId"] for r in results] == ["WD033"]


def test_wheels_that_clash_in_every_format(tmp_path: Path) -> None:
    first = build_wheel(tmp_path, "one", "1.0", {"shared/data.txt": b"one\n", "one/__init__.py": b""})
    second = build_wheel(tmp_path, "two", "1.0", {"shared/data.txt": b"two\n", "two/__init__.py": b""})
    github_out = wd("wheels", first, second, "--format", "github")
    assert github_out.returncode == 1
    assert github_out.stdout.count("::error title=one 1.0%3A clash%3A shared/data.txt::") == 1
    sarif = wd("wheels", first, second, "--format", "sarif")
    assert sarif.returncode == 1
    document = json.loads(sarif.stdout)
    validate_sarif(document)
    assert sorted(r["ruleId"] for r in document["runs"][0]["results"]) == ["clash", "clash"]
    junit_out = wd("wheels", first, second, "--format", "junit")
    suite = ET.fromstring(junit_out.stdout).find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("2", "2")


# --------------------------------------------------------------------------
# escaping, caps, XML
# --------------------------------------------------------------------------


def _runner_reads(line: str) -> tuple[str, dict[str, str], str]:
    """Parse a workflow command as the Actions runner does (ActionCommand.TryParseV2)."""
    assert line.startswith("::")
    head, _, message = line[2:].partition("::")
    name, _, props = head.partition(" ")
    properties = {}
    for pair in filter(None, props.split(",")):
        key, _, value = pair.partition("=")
        properties[key] = unescape_property(value)
    return name, properties, unescape_data(message)


def test_a_hostile_path_round_trips_through_github_escaping() -> None:
    path = "pkg/100%:done,\nreally\r::error::injected%0A.py"
    case = Case(
        suite="check",
        name="evil",
        version="1.0",
        status="broken",
        items=(Item(level="error", code=Code.MISSING, kind="missing", message="is missing", path=path),),
    )
    (line, last) = list(
        github.render(Cases(command="check", healthy=False, environment="env", sites=(), cases=(case,)))
    )
    assert "\n" not in line and "\r" not in line  # one line: nothing can start a command of its own
    name, properties, message = _runner_reads(line)
    assert name == "error"
    # The runner reads back the path made inert: its line breaks shown as \n and \r (#28).
    shown = path.replace("\n", "\\n").replace("\r", "\\r")
    assert properties == {"title": f"evil 1.0: WD003: {shown}"}
    assert message == f"evil 1.0: WD003: {shown} is missing"
    assert github.escape_property("%,:\r\n") == "%25%2C%3A%0D%0A"
    assert github.escape_data("%,:\r\n") == "%25,:%0D%0A"
    assert last.startswith("wheeldoctor check in env: problems found: 1 error(s)")


def test_the_summary_is_capped_and_counts_what_was_cut() -> None:
    items = tuple(
        Item(level="error", code=Code.MISSING, kind="missing", message="is missing", path=f"pkg/{i:05}.py")
        for i in range(5000)
    )
    cases = Cases(
        command="check",
        healthy=False,
        environment="env",
        sites=(),
        cases=(Case(suite="check", name="big", version="1.0", status="broken", items=items),),
    )
    whole = github.summary([cases])
    capped = github.summary([cases], limit=64 * 1024)
    assert len(whole.encode()) <= github.SUMMARY_LIMIT < 1024 * 1024
    assert len(capped.encode()) <= 64 * 1024
    shown = capped.count("| error |")
    assert f"{5000 - shown} more row(s) not shown" in capped and 0 < shown < 5000


@pytest.mark.parametrize(
    "argv",
    [
        ["deps", "--python", sys.executable],
        ["deps", "--path", "."],  # the plain fast parse runs this one
        ["wheels", "a-1.0-py3-none-any.whl"],
        ["wheels", "--lock", "nowhere/pylock.toml", "--python-version", "3.12", "--platform", "linux_x86_64"],
    ],
)
def test_deps_and_wheels_refuse_cyclonedx_before_any_work(argv: list[str]) -> None:
    done = wd(*argv, "--format", "cyclonedx")
    assert done.returncode == 2
    assert done.stderr == "error: unknown format 'cyclonedx': choose one of text, json, github, junit, sarif\n"
    assert done.stdout == ""


@pytest.mark.parametrize(("command", "sbom"), [("deps", False), ("wheels", False), ("check", True), ("doctor", True)])
def test_only_the_sbom_commands_offer_cyclonedx_in_help(command: str, sbom: bool) -> None:
    done = wd(command, "--help")
    assert done.returncode == 0
    found = re.search(r"--format FORMAT (.*?) -o, --output", " ".join(done.stdout.split()))
    assert found is not None, done.stdout
    assert ("cyclonedx" in found.group(1)) is sbom
    assert "sarif" in found.group(1)


def test_junit_escapes_what_xml_forbids() -> None:
    path = "pkg/\x01bell\x1b<&>\udcff\ufffe.py"
    case = Case(
        suite="check",
        name="odd\x00",
        version="1.0",
        status="broken",
        items=(Item(level="error", code=Code.MISSING, kind="missing", message="is missing", path=path),),
    )
    document = junit.render(Cases(command="check", healthy=False, environment="env\x0c", sites=(), cases=(case,)))
    root = ET.fromstring(document.encode())
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None and failure.text is not None
    assert "pkg/\\x01bell\\x1b<&>\\xff\\ufffe.py" in failure.text  # an undecodable byte reads \xNN (#28)
    assert root.find("testsuite/testcase").get("classname") == "odd\\x00"  # type: ignore[union-attr]


def test_junit_attributes_show_bidi_and_controls_escaped() -> None:
    case = Case(
        suite="check",
        name="gam\x1b[31mma\u202e",
        version="1.0\u2066",
        status="broken",
        items=(Item(level="error", code=Code.MISSING, kind="missing", message="is missing", path="x\u202e.py"),),
    )
    document = junit.render(Cases(command="check", healthy=False, environment="env\u2067\n", sites=(), cases=(case,)))
    root = ET.fromstring(document.encode())
    testcase = root.find("testsuite/testcase")
    failure = root.find("testsuite/testcase/failure")
    environment = root.find("testsuite/properties/property")
    assert testcase is not None and failure is not None and environment is not None
    assert testcase.get("classname") == "gam\\x1b[31mma\\u202e"
    assert testcase.get("name") == "gam\\x1b[31mma\\u202e 1.0\\u2066"
    assert failure.get("message", "").startswith("gam\\x1b[31mma\\u202e 1.0\\u2066: broken: ")
    assert environment.get("value") == "env\\u2067\\n"
    attributes = [v for e in root.iter() for v in e.attrib.values()]
    assert not any(c in v for v in attributes for c in "\x1b\u202e\u2066\u2067\n")


def test_every_code_has_a_description_what_to_do_and_a_rank() -> None:
    assert set(CODE_HELP) == set(Code)
    assert all(h.short and h.full.endswith(".") and h.todo.endswith((".", ")")) for h in CODE_HELP.values())
    assert all(0 < h.severity <= 10 and h.tags for h in CODE_HELP.values())
    assert Kind.MODIFIED.value == "modified"


# --------------------------------------------------------------------------
# --version, pre-commit
# --------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(flag: str) -> None:
    done = wd(flag)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"wheeldoctor {wheeldoctor.__version__}\n", "")


def test_a_hook_in_its_own_isolated_venv_refuses(envs: Envs, tmp_path: Path) -> None:
    """pre-commit puts a ``language: python`` hook in ``…/py_env-VERSION``: without ``--python``
    wheeldoctor would check that venv, so it refuses; with it, it checks the project's."""
    hook = make_venv(tmp_path / "repoabc" / "py_env-python3")
    here = [str(Path(wheeldoctor.__file__).parent.parent), *(p for p in sys.path if p.endswith("site-packages"))]
    (hook.site_packages / "wheeldoctor-dev.pth").write_text("\n".join(here) + "\n")
    run = [str(hook.python), "-m", "wheeldoctor", "check", "--all"]
    # No other candidate (an activated venv, a conda env, a .venv above the working directory):
    # then the hook's own venv is all there is, and it is refused.
    alone = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    refused = subprocess.run(run, capture_output=True, text=True, timeout=120, check=False, env=alone, cwd=tmp_path)
    assert refused.returncode == 2, refused.stderr
    assert "the hook's own environment" in refused.stderr and "--python" in refused.stderr
    assert "Traceback" not in refused.stderr
    checked = subprocess.run(
        [*run, "--python", str(envs.damaged.python)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=alone,
        cwd=tmp_path,
    )
    assert checked.returncode == 1 and "WD001" in checked.stdout


def test_the_pre_commit_hooks_file_names_both_hooks() -> None:
    text = (Path(__file__).parent.parent / ".pre-commit-hooks.yaml").read_text()
    assert re.findall(r"^- id: (\S+)", text, re.MULTILINE) == ["wheeldoctor", "wheeldoctor-system"]
    assert "language: system" in text and "pass_filenames: false" in text

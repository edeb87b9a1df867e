"""deps: requirements against what is installed, compared line for line with the real ``pip check``.

Each venv is real (uv), each wheel is installed by real pip with ``--no-deps`` so that the
broken requirements stay broken, and ``pip --python VENV check`` runs on the same venv.
The set of (distribution, requirement) problems must be the same; what we report beyond
pip (requirements pulled in by extras) is checked separately.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import Venv, build_wheel, cli_json, find_interpreter, make_venv, pip_install, run_cli, uv_install
from pip_check import Problem, ours, pip_check

from wheeldoctor.commands.deps import run_deps
from wheeldoctor.judge.deps import ConflictKind, check_dependencies
from wheeldoctor.judge.requirements import Requirements
from wheeldoctor.model.findings import Code
from wheeldoctor.where.target import Target, load_target

CURRENT = f"{sys.version_info.major}.{sys.version_info.minor}"


def _pkg(name: str) -> dict[str, bytes]:
    module = name.replace("-", "_").replace(".", "_").lower()
    return {f"{module}/__init__.py": f"NAME = {name!r}\n".encode()}


# name, version, requires, extras: the environment pip and we both judge.
SCENARIO: list[tuple[str, str, list[str], dict[str, list[str]]]] = [
    (
        "app",
        "1.0",
        [
            "missing-one>=1",  # missing
            "lib-b>=2",  # incompatible: 1.0 installed
            "lib-c>=1",  # satisfied
            'lib-d; python_version >= "3"',  # missing; marker true
            'lib-e; python_version < "3"',  # marker false: not needed
            'lib-k; sys_platform == "nonexistent-platform"',  # marker false
            "Foo.Bar_baz>=1",  # satisfied once names are canonical
            "FOO_bar.BAZ>=2",  # incompatible, same project
            "pre-a>=1.0",  # 2.0rc1 installed: satisfied (pip: prereleases=True)
            "pre-b<2",  # 2.0rc1 installed: incompatible (a pre-release of 2 is not < 2)
            "pre-c>=2.0",  # 2.0rc1 installed: incompatible
            "loc==1.0",  # 1.0+cpu installed: satisfied (local label ignored)
            "lib-c[extra1]>=1",  # satisfied for pip; extra1's own needs are ours to follow
        ],
        {"x": ["lib-x"], "y": ["lib-y>=5"]},  # nobody asks app[x]; needy asks app[y]
    ),
    ("needy", "1.0", ["app[y]"], {}),
    ("lib-b", "1.0", [], {}),
    ("lib-c", "1.0", [], {"extra1": ["extra-dep>=1", "deep[z]"]}),
    ("deep", "1.0", [], {"z": ["deeper"]}),
    ("foo-bar-baz", "1.0", [], {}),
    ("pre-a", "2.0rc1", [], {}),
    ("pre-b", "2.0rc1", [], {}),
    ("pre-c", "2.0rc1", [], {}),
    ("loc", "1.0+cpu", [], {}),
    ("lib-y", "1.0", [], {}),
]

PIP_EXPECTED = {
    Problem("app", "1.0", "missing", "missing-one", None),
    Problem("app", "1.0", "incompatible", "lib-b", "1.0", "lib-b>=2"),
    Problem("app", "1.0", "missing", "lib-d", None),
    Problem("app", "1.0", "incompatible", "foo-bar-baz", "1.0", "FOO_bar.BAZ>=2"),
    Problem("app", "1.0", "incompatible", "pre-b", "2.0rc1", "pre-b<2"),
    Problem("app", "1.0", "incompatible", "pre-c", "2.0rc1", "pre-c>=2.0"),
}


@dataclass(frozen=True)
class Scenario:
    """The shared venv, the pip check of it and our JSON document of it."""

    venv: Venv
    wheels: Path
    pip: Any
    rc: int
    document: dict[str, Any]


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory, uv_bin: Path) -> Scenario:
    """One venv holding SCENARIO, installed by real pip without dependencies."""
    root = tmp_path_factory.mktemp("deps")
    wheels = root / "wheels"
    venv = make_venv(root / "venv", uv_bin=uv_bin)
    built = [build_wheel(wheels, n, v, _pkg(n), requires=r, extras=e) for n, v, r, e in SCENARIO]
    pip_install(venv, "--no-index", "--no-deps", *built)
    rc, document = cli_json("deps", "--python", venv.python)
    return Scenario(venv, wheels, pip_check(venv.python), rc, document)


def test_pip_check_finds_what_the_scenario_plants(scenario: Scenario) -> None:
    # Guards the comparison below against agreeing on nothing.
    assert scenario.pip.returncode == 1
    assert scenario.pip.problems == {
        Problem(p.dist, p.version, p.kind, p.name, p.installed, None if p.requirement is None else _req(p.requirement))
        for p in PIP_EXPECTED
    }


def _req(text: str) -> str:
    from packaging.requirements import Requirement

    return str(Requirement(text))


def test_same_problems_as_pip_check(scenario: Scenario) -> None:
    assert ours(scenario.document["dependency_conflicts"]) == scenario.pip.problems
    assert scenario.rc == 1
    assert scenario.document["healthy"] is False


def test_extras_are_followed_beyond_pip(scenario: Scenario) -> None:
    beyond = [c for c in scenario.document["dependency_conflicts"] if c["via_extra"] is not None]
    got = {(c["dist"], c["name"], c["kind"], c["via_extra"], tuple(c["requested_by"])) for c in beyond}
    assert got == {
        ("lib-c", "extra-dep", "missing", "extra1", ("app",)),  # app asks lib-c[extra1]
        ("deep", "deeper", "missing", "z", ("lib-c",)),  # lib-c[extra1] asks deep[z]: transitive
        ("app", "lib-y", "incompatible", "y", ("needy",)),  # needy asks app[y]
    }
    # app[x] is asked for by nobody: its missing lib-x is nobody's problem.
    assert all(c["name"] != "lib-x" for c in scenario.document["dependency_conflicts"])


def test_conflict_json_contract(scenario: Scenario) -> None:
    doc = scenario.document
    assert doc["command"] == "deps"
    assert doc["schema_version"] == "1.2"
    incompatible = next(c for c in doc["dependency_conflicts"] if c["name"] == "lib-b")
    assert incompatible == {
        "code": "WD041",
        "kind": "incompatible",
        "dist": "app",
        "version": "1.0",
        "requirement": "lib-b>=2",
        "name": "lib-b",
        "wanted": "lib-b>=2",
        "installed": "1.0",
        "via_extra": None,
        "requested_by": [],
        "message": "requires lib-b>=2, but lib-b 1.0 is installed",
    }
    missing = next(c for c in doc["dependency_conflicts"] if c["name"] == "missing-one")
    assert (missing["kind"], missing["code"], missing["installed"]) == ("missing", "WD040", None)
    assert doc["summary"]["pip_check_conflicts"] == len(PIP_EXPECTED)
    assert doc["summary"]["distributions"] == len(SCENARIO)


def test_text_shows_wanted_and_found_and_one_install_tip(scenario: Scenario) -> None:
    done = run_cli("deps", "--python", scenario.venv.python)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert "app 1.0: WD041: requires lib-b>=2, but lib-b 1.0 is installed (wanted lib-b>=2, found lib-b 1.0)" in lines
    assert "app 1.0: WD040: requires missing-one>=1, which is not installed (wanted missing-one>=1, found nothing)" in (
        lines
    )
    tip = [line for line in lines if line.startswith("Tip: ask the installer")]
    assert len(tip) == 1
    assert "'lib-b>=2'" in tip[0]
    assert "'missing-one>=1'" in tip[0]
    assert "Traceback" not in done.stdout + done.stderr


def test_a_healthy_env_passes_both(tmp_path: Path, uv_bin: Path) -> None:
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    wheels = tmp_path / "wheels"
    pip_install(
        venv,
        "--no-index",
        "--no-deps",
        build_wheel(wheels, "top", "1.0", _pkg("top"), requires=["base>=1,<2", 'gone; python_version < "3"']),
        build_wheel(wheels, "base", "1.5", _pkg("base")),
    )
    assert pip_check(venv.python).returncode == 0
    rc, document = cli_json("deps", "--python", venv.python)
    assert rc == 0
    assert document["dependency_conflicts"] == []
    assert document["healthy"] is True


def _other_python() -> tuple[str, Path] | None:
    for version in ("3.12", "3.10", "3.13"):
        if version != CURRENT and (found := find_interpreter(version)) is not None:
            return version, found
    return None


def test_markers_are_the_target_interpreters(tmp_path: Path, uv_bin: Path) -> None:
    other = _other_python()
    if other is None:
        pytest.skip("no second Python version installed")
    version, interpreter = other
    venv = make_venv(tmp_path / "venv", interpreter, uv_bin=uv_bin)
    requires = [f'for-target; python_version == "{version}"', f'for-us; python_version == "{CURRENT}"']
    pip_install(
        venv, "--no-index", "--no-deps", build_wheel(tmp_path / "w", "mk", "1.0", _pkg("mk"), requires=requires)
    )
    pip = pip_check(venv.python)
    assert pip.problems == {Problem("mk", "1.0", "missing", "for-target", None)}
    _, document = cli_json("deps", "--python", venv.python)
    assert ours(document["dependency_conflicts"]) == pip.problems


@pytest.fixture
def unparseable(tmp_path: Path, uv_bin: Path) -> Venv:
    """``broken`` has a Requires-Dist that does not parse (written after install) and a missing one."""
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    wheels = tmp_path / "wheels"
    pip_install(
        venv,
        "--no-index",
        "--no-deps",
        build_wheel(wheels, "broken", "1.0", _pkg("broken"), requires=["needs-me>=1"]),
        build_wheel(wheels, "user", "1.0", _pkg("user"), requires=["broken>=1"]),
    )
    metadata = venv.dist_info("broken") / "METADATA"
    metadata.write_text(metadata.read_text() + "Requires-Dist: this is [not valid\n")
    return venv


def test_unparseable_requirement_is_a_finding_where_pip_drops_the_distribution(unparseable: Venv) -> None:
    pip = pip_check(unparseable.python)
    # pip skips all of broken's requirements and then calls broken itself not installed.
    assert pip.returncode == 1
    assert pip.problems == {Problem("user", "1.0", "missing", "broken", None)}
    rc, document = cli_json("deps", "--python", unparseable.python)
    assert rc == 1
    assert ours(document["dependency_conflicts"]) == {Problem("broken", "1.0", "missing", "needs-me", None)}
    [finding] = document["compatibility"]
    assert (finding["code"], finding["dist"], finding["found"]) == ("WD033", "broken", "this is [not valid")
    assert "\n" not in finding["message"]


def test_library_call_on_this_venv_agrees_with_the_cli(scenario: Scenario) -> None:
    env = load_target(Target(python=str(scenario.venv.python)))
    report = check_dependencies(Requirements.of(env))
    assert len(report.conflicts) == len(scenario.document["dependency_conflicts"])
    kinds = {c.kind for c in report.pip_comparable()}
    assert kinds == {ConflictKind.MISSING, ConflictKind.INCOMPATIBLE}
    assert {c.code for c in report.conflicts} == {Code.DEPENDENCY_MISSING, Code.DEPENDENCY_INCOMPATIBLE}


def test_invalid_version_cannot_satisfy_a_specifier(tmp_path: Path, uv_bin: Path) -> None:
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    wheels = tmp_path / "wheels"
    pip_install(
        venv,
        "--no-index",
        "--no-deps",
        build_wheel(wheels, "odd", "1.0", _pkg("odd")),
        build_wheel(wheels, "asks", "1.0", _pkg("asks"), requires=["odd>=1", "odd"]),
    )
    metadata = venv.dist_info("odd") / "METADATA"
    metadata.write_text(metadata.read_text().replace("Version: 1.0", "Version: not.a/version"))
    result = run_deps(load_target(Target(python=str(venv.python))))
    assert [(c.requirement, c.kind, c.installed) for c in result.dependencies.conflicts] == [
        ("odd>=1", ConflictKind.INCOMPATIBLE, "not.a/version")
    ]
    assert [f.code for f in result.compatibility] == [Code.VERSION_INVALID]


def test_unevaluable_marker_is_a_finding(tmp_path: Path, uv_bin: Path) -> None:
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    # pip 23 installs this wheel; newer pip crashes evaluating the marker. uv takes it.
    uv_install(
        venv,
        "--no-index",
        "--no-deps",
        build_wheel(tmp_path / "w", "weird", "1.0", _pkg("weird"), requires=['gone; os_name ~= "posix"']),
        uv_bin=uv_bin,
    )
    result = run_deps(load_target(Target(python=str(venv.python))))
    assert result.dependencies.conflicts == ()
    [finding] = result.compatibility
    assert finding.code is Code.REQUIREMENT_INVALID
    assert "marker cannot be evaluated" in finding.message


def test_a_bare_site_directory_gets_tips_aimed_at_it(tmp_path: Path) -> None:
    """Without an interpreter, the tip installs into the directory, never into whatever is active."""
    site = tmp_path / "site"
    wheel = build_wheel(tmp_path / "wheels", "lonely", "1.0", _pkg("lonely"), requires=["needs-me>=1"])
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--target", str(site)]
    subprocess.run([*pip, str(wheel)], check=True)
    done = run_cli("deps", "--path", site)
    assert done.returncode == 1
    tip = f"Tip: ask the installer for everything wanted at once: pip install --target {site} -- 'needs-me>=1'"
    assert tip in done.stdout.splitlines(), done.stdout
    rc, document = cli_json("deps", "--path", site)
    assert (rc, document["dependency_repair"]) == (1, tip.rpartition(": ")[2])


_MARKERS = [
    'extra == "x"',
    'extra == "X_Y"',
    "extra != 'x'",
    'extra == "x" or extra == "y"',
    'extra == "x" and python_version >= "3"',
    'python_version < "3" or extra == "y"',
    'extra != ""',
    '"y" == extra',
    'extra in "x y"',
    'extra > "w"',
    'platform_release == "extra" and extra == "z"',
    'sys_platform == "linux"',
    'extra == "wheeldoctor-any-other-extra"',
]


@pytest.mark.unit
def test_the_extra_index_never_misses_a_requirement_an_extra_adds() -> None:
    """Differential: for every marker shape and extra, what an extra adds (by packaging's own evaluation) is found."""
    from packaging.requirements import Requirement

    model = Requirements({}, {"python_version": "3.11", "sys_platform": "linux", "platform_release": "6"})
    reqs = tuple(Requirement(f"dep{i}; {m}") for i, m in enumerate(_MARKERS))
    for extra in ("x", "y", "z", "x-y", "w", "zz", "wheeldoctor-any-other-extra"):
        adds = [r for r in reqs if model.marker(r, "") is False and model.marker(r, extra) is True]
        found = model.needing(reqs, extra)
        assert set(map(str, adds)) <= set(map(str, found)), extra
        assert [str(r) for r in found] == [str(r) for r in reqs if r in found]  # in their order
    # An extra no marker names gets only what holds for any extra, or uses ``extra`` another way: not the rest.
    assert [r.name for r in model.needing(reqs, "q")] == ["dep6", "dep9", "dep12"]


#: An egg-info as setuptools writes it: requirements in requires.txt, none in PKG-INFO.
EGG_REQUIRES = """\
needed>=2
wanted-by-marker

[:python_version < "3"]
py2-only

[:sys_platform != "nonexistent-platform"]
also-wanted

[Socks]
never-asked

[Socks:python_version >= "3"]
never-asked-either
"""


def test_egg_info_requires_txt_is_read_as_pip_check_reads_it(tmp_path: Path, uv_bin: Path) -> None:
    """Debian's and setuptools' egg-infos keep their requirements in requires.txt: pip check reads it, so do we."""
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    pip_install(venv, "--no-index", "--no-deps", build_wheel(tmp_path / "wheels", "needed", "1.0", _pkg("needed")))
    egg = venv.site_packages / "legacy_app-1.0-py3.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: legacy-app\nVersion: 1.0\n")
    (egg / "requires.txt").write_text(EGG_REQUIRES)
    pip = pip_check(venv.python)
    rc, document = cli_json("deps", "--python", venv.python)
    assert {p.name for p in pip.problems} == {"needed", "wanted-by-marker", "also-wanted"}
    assert (rc, ours(document["dependency_conflicts"])) == (1, pip.problems)

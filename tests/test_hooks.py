"""Start-up hooks (WD070, WD071), the registry of known ones, and files nobody recorded (WD072).

Every environment is real: venvs made by the interpreter's own ``venv`` (pip and, on
3.11, setuptools inside, installed by ensurepip) or by uv, wheels built by
tests/helpers.py and installed by real pip and uv. Every planted hook writes a marker
file when it runs; no run of wheeldoctor may create one.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    Venv,
    VenvFactory,
    WheelFactory,
    find_interpreter,
    run_checked,
    run_cli,
    uv_install,
)

from wheeldoctor.judge.known_hooks import known_module, known_pth


def document(*args: str | Path) -> tuple[int, dict[str, Any]]:
    """Exit code and JSON document of one run, which must not have crashed."""
    done = run_cli(*args, "--json")
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    return done.returncode, json.loads(done.stdout)


def writes(marker: Path) -> str:
    """One line of Python that creates ``marker``."""
    return f"open({str(marker)!r}, 'w').close()"


def hooks_by_name(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {Path(h["path"]).name: h for h in doc["startup_hooks"]}


@pytest.fixture(scope="module")
def pip_env(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """A real pip environment (``python3.11 -m venv``: pip and setuptools by ensurepip), made once."""
    python = find_interpreter("3.11")
    if python is None:
        pytest.skip("no Python 3.11 (whose ensurepip still installs setuptools)")
    root = tmp_path_factory.mktemp("pip-env")
    run_checked([python, "-m", "venv", root / "venv"])
    return Venv(root / "venv", root / "venv/bin/python", root / "venv/lib/python3.11/site-packages", root / "venv/bin")


@pytest.fixture
def pip_copy(pip_env: Venv, tmp_path: Path) -> Venv:
    """A copy of the pip environment, free to plant things in."""
    prefix = tmp_path / "copy"
    shutil.copytree(pip_env.prefix, prefix, symlinks=True)
    return Venv(prefix, prefix / "bin/python", prefix / "lib/python3.11/site-packages", prefix / "bin")


def test_a_real_pip_environment_is_healthy_and_its_setuptools_shim_is_known(pip_copy: Venv) -> None:
    rc, doc = document("check", "--all", "--python", pip_copy.python)
    assert rc == 0, doc
    shim = hooks_by_name(doc)["distutils-precedence.pth"]
    assert shim["executes"] and shim["lines"] == [1]
    assert shim["known"] == "setuptools distutils shim"
    assert shim["owner"]["type"] == "distribution" and shim["owner"]["name"] == "setuptools"
    assert shim["owner_intact"] is True
    assert shim["finding"] is None
    assert doc["unowned"]["count"] == 0


def test_planted_hooks_are_reported_and_never_run(pip_copy: Venv, tmp_path: Path) -> None:
    marker = tmp_path / "evil-ran"
    (pip_copy.site_packages / "evil_init.pth").write_text(f"import os; {writes(marker)}\n")
    (pip_copy.site_packages / "sitecustomize.py").write_text(f"{writes(tmp_path / 'sitecustomize-ran')}\n")
    rc, doc = document("check", "--all", "--python", pip_copy.python)
    assert rc == 1
    hooks = hooks_by_name(doc)
    evil, custom = hooks["evil_init.pth"], hooks["sitecustomize.py"]
    assert evil["kind"] == "pth" and evil["lines"] == [1] and evil["owner"] is None
    assert evil["finding"]["code"] == "WD071"
    assert evil["finding"]["found"] == evil["sha256"] and evil["sha256"].startswith("sha256=")
    assert custom["kind"] == "sitecustomize" and custom["owner"] is None
    assert custom["finding"]["code"] == "WD071"
    not_run = {(n["pth"], n["line"]) for n in doc["environment"]["startup"]["not_run"]}
    assert (evil["path"], 1) in not_run  # the JSON says which lines were not run
    # The text report: one line per failing hook, exit 1; doctor fails for them too.
    done = run_cli("check", "--all", "--python", pip_copy.python)
    assert done.returncode == 1
    failing = [line for line in done.stdout.splitlines() if ": WD071: " in line]
    assert len(failing) == 2
    assert any(line.startswith(f"{pip_copy.site_packages / 'evil_init.pth'}: WD071: ") for line in failing)
    rc, doc = document("doctor", "--python", pip_copy.python)
    assert rc == 1 and not doc["verdicts"]["check"]
    assert {h["finding"]["code"] for h in doc["startup_hooks"] if h["finding"]} == {"WD071"}
    # Nothing the environment would run at start-up ran, in any of these runs.
    assert not marker.exists()
    assert not (tmp_path / "sitecustomize-ran").exists()
    # ...and the environment really does run them at a normal start.
    subprocess.run([str(pip_copy.python), "-c", "pass"], check=True, timeout=60)
    assert marker.exists() and (tmp_path / "sitecustomize-ran").exists()


def test_a_wheel_that_ships_an_executable_pth_is_wd070_naming_it(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, uv_bin: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    wheel = wheel_factory(
        "leaky",
        "1.82.8",
        {"leaky/__init__.py": b"", "leaky_init.pth": f"import os; {writes(marker)}\n".encode()},
    )
    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel, uv_bin=uv_bin)
    rc, doc = document("check", "--all", "--python", venv.python)
    assert rc == 1
    hook = hooks_by_name(doc)["leaky_init.pth"]
    assert hook["owner"] == {"type": "distribution", "name": "leaky", "version": "1.82.8"}
    assert hook["owner_intact"] is True
    finding = hook["finding"]
    assert finding["code"] == "WD070" and finding["kind"] == "startup-hook"
    assert finding["message"].startswith(
        "leaky 1.82.8 ships leaky_init.pth, which runs code at every interpreter start"
    )
    assert finding["path"] == "leaky_init.pth"
    assert finding["found"] == finding["expected"] == hook["sha256"]
    assert [d["status"] for d in doc["distributions"]] == ["intact"]  # RECORD alone passes it
    # Named checks judge files only, as before.
    assert run_cli("check", "leaky", "--python", venv.python).returncode == 0
    assert not marker.exists()


def test_a_hook_whose_owner_is_broken_says_so(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, uv_bin: Path
) -> None:
    wheel = wheel_factory("hooked", "1.0", {"hooked.pth": b"import sys\n", "hooked/__init__.py": b""})
    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel, uv_bin=uv_bin)
    (venv.site_packages / "hooked.pth").write_text("import sys; print('changed')\n")
    rc, doc = document("check", "--all", "--python", venv.python)
    assert rc == 1
    hook = hooks_by_name(doc)["hooked.pth"]
    assert hook["owner_intact"] is False
    assert hook["finding"]["code"] == "WD070"
    assert hook["finding"]["expected"] != hook["finding"]["found"]


def test_a_known_name_with_other_code_is_not_known(venv_factory: VenvFactory, tmp_path: Path) -> None:
    venv = venv_factory()
    (venv.site_packages / "distutils-precedence.pth").write_text(f"import os; {writes(tmp_path / 'x')}\n")
    (venv.site_packages / "paths-only.pth").write_text(f"{tmp_path}\n")
    rc, doc = document("check", "--all", "--python", venv.python)
    assert rc == 1
    hooks = hooks_by_name(doc)
    assert hooks["distutils-precedence.pth"]["known"] is None
    assert hooks["distutils-precedence.pth"]["finding"]["code"] == "WD071"
    # A .pth of path lines runs nothing: listed, unowned, failing nothing.
    assert hooks["paths-only.pth"]["executes"] is False and hooks["paths-only.pth"]["finding"] is None
    assert not (tmp_path / "x").exists()


def test_unowned_files_fail_only_when_importable(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, uv_bin: Path
) -> None:
    venv = venv_factory()
    uv_install(
        venv, "--no-deps", wheel_factory("good", "1.0", {"good/__init__.py": b"", "good/util.py": b""}), uv_bin=uv_bin
    )
    site = venv.site_packages
    (site / "notes.txt").write_text("not importable\n")
    (site / "good" / "extra.py").write_text("# unowned, inside someone's package\n")
    (site / "good" / "__pycache__").mkdir(exist_ok=True)
    (site / "good" / "__pycache__" / "stray.cpython-311.pyc").write_bytes(b"")
    (site / "good" / "util.pyc").write_bytes(b"")  # bytecode of a recorded source
    rc, doc = document("check", "--all", "--python", venv.python, "--show-unowned")
    assert rc == 0, doc["unowned"]
    listed = {Path(f["path"]).relative_to(site).as_posix(): f["importable"] for f in doc["unowned"]["files"]}
    assert listed == {"notes.txt": None, "good/extra.py": None}
    assert doc["unowned"]["count"] == 2 and doc["unowned"]["findings"] == []

    (site / "sneaky.py").write_text("x = 1\n")
    (site / "evilpkg").mkdir()
    (site / "evilpkg" / "__init__.py").write_text("")
    (site / "evilpkg" / "core.py").write_text("")
    rc, doc = document("check", "--all", "--python", venv.python)
    assert rc == 1
    assert doc["unowned"]["files"] is None  # the listing only with --show-unowned
    assert doc["unowned"]["count"] == 5
    assert {(f["code"], f["path"]) for f in doc["unowned"]["findings"]} == {
        ("WD072", "evilpkg/"),
        ("WD072", "sneaky.py"),
    }
    done = run_cli("check", "--all", "--python", venv.python)
    assert "unowned: 5 of " in done.stdout and "--show-unowned lists them" in done.stdout


SHIM_LINE = (
    "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'stdlib') == 'local'; "
    "enabled and __import__('_distutils_hack').add_shim(); "
)


COVERAGE_PTH = (
    "import sys; exec('import os\\n\\n"
    'if os.getenv("COVERAGE_PROCESS_START") or os.getenv("COVERAGE_PROCESS_CONFIG"):\\n'
    " try:\\n  import coverage\\n except:\\n  pass\\n else:\\n"
    """  coverage.process_startup(slug="pth")')"""
)


@pytest.mark.parametrize(
    ("name", "lines", "known"),
    [
        (
            "__editable__.demo-1.0.pth",
            ["import __editable___demo_1_0_finder; __editable___demo_1_0_finder.install()"],
            "setuptools editable finder",
        ),
        (
            "__editable__.demo-1.0.pth",
            ["import __editable___demo_1_0_finder; __editable___other_finder.install()"],
            None,
        ),
        ("demo.pth", ["import _editable_impl_demo"], "editables redirector"),
        ("_virtualenv.pth", ["import _virtualenv"], "virtualenv"),
        ("subcover.pth", ["import coverage; coverage.process_startup()"], "coverage subprocess measurement"),
        ("subcover.pth", ["import coverage; coverage.process_startup(); import os"], None),
        # coverage 7.16.2's wheel ships this a1_coverage.pth, as read from the wheel on the GPU host's stack.
        ("a1_coverage.pth", [COVERAGE_PTH], "coverage start-up hook"),
        ("a1_coverage.pth", [COVERAGE_PTH.replace("pass", "import evil")], None),
        ("b1_coverage.pth", [COVERAGE_PTH], None),
        (
            "distutils-precedence.pth",
            [
                "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'stdlib') == 'local'; "
                "enabled and __import__('_distutils_hack').add_shim(); "
            ],
            "setuptools distutils shim",
        ),
        ("evil.pth", ["import _virtualenv"], None),
    ],
)
def test_registry_matches_name_and_every_line(name: str, lines: list[str], known: str | None) -> None:
    owner = REGISTRY_OWNERS.get(name, "demo")
    found = known_pth(name, tuple(lines), owner, editable=True)
    assert (found.name if found else None) == known
    # The hooks of editable wheels are known only for an owner said to be installed editable.
    assert known_pth(name, tuple(lines), owner) == (None if found is None or found.editable else found)


#: Who owns each file of the table above, as the registry is matched by owner too (None: nobody recorded it).
REGISTRY_OWNERS: dict[str, str | None] = {
    "_virtualenv.pth": None,
    "subcover.pth": None,
    "evil.pth": None,
    "a1_coverage.pth": "coverage",
    "b1_coverage.pth": "coverage",
    "distutils-precedence.pth": "setuptools",
}


@pytest.mark.parametrize(
    ("name", "line", "owner"),
    [
        ("distutils-precedence.pth", SHIM_LINE, "evilpkg"),
        ("distutils-precedence.pth", SHIM_LINE, None),
        ("a1_coverage.pth", COVERAGE_PTH, "evilpkg"),
        ("_virtualenv.pth", "import _virtualenv", "evilpkg"),
    ],
)
def test_registry_knows_a_vendors_hook_only_from_its_owner(name: str, line: str, owner: str | None) -> None:
    assert known_pth(name, (line,), owner) is None


def test_registry_knows_setuptools_namespace_lines() -> None:
    line = (
        "import sys, types, os;has_mfs = sys.version_info > (3, 5);"
        "p = os.path.join(sys._getframe(1).f_locals['sitedir'], *('google', 'cloud'));"
        "importlib = has_mfs and __import__('importlib.util');has_mfs and "
        "__import__('importlib.machinery');m = has_mfs and sys.modules.setdefault('google.cloud', "
        "importlib.util.module_from_spec(importlib.machinery.PathFinder.find_spec('google.cloud', "
        "[os.path.dirname(p)])));m = m or sys.modules.setdefault('google.cloud', types.ModuleType('google.cloud'));"
        "mp = (m or []) and m.__dict__.setdefault('__path__',[]);(p not in mp) and mp.append(p);"
        "m and setattr(sys.modules['google'], 'cloud', m)"
    )
    assert known_pth("google_cloud-nspkg.pth", (line,), "google-cloud") is not None
    assert known_pth("google_cloud-nspkg.pth", (line + ";__import__('os').system('id')",), "google-cloud") is None
    assert known_pth("google_cloud.pth", (line,), "google-cloud") is None


@pytest.mark.skipif(not Path("/etc/python3.11/sitecustomize.py").is_file(), reason="no Debian apport hook here")
def test_debian_apport_sitecustomize_is_known() -> None:
    text = Path("/etc/python3.11/sitecustomize.py").read_text()
    assert known_module("sitecustomize.py", text, "libpython3.11-minimal") is not None
    assert known_module("sitecustomize.py", text + "import os\n", "libpython3.11-minimal") is None


def test_usercustomize_runs_only_where_the_user_site_is_on(
    venv_factory: VenvFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONUSERBASE", str(tmp_path / "userbase"))
    venv = venv_factory()  # no system site packages: site turns the user site off
    (venv.site_packages / "usercustomize.py").write_text(f"{writes(tmp_path / 'ran')}\n")
    rc, doc = document("check", "--all", "--python", venv.python)
    hook = hooks_by_name(doc)["usercustomize.py"]
    assert (rc, hook["kind"], hook["executes"], hook["finding"]) == (0, "usercustomize", False, None)
    assert doc["environment"]["startup"]["user_site"] is False
    # With the user site on (a plain interpreter), the same module runs at every start.
    python = find_interpreter("3.12") or find_interpreter("3.11")
    if python is None:
        pytest.skip("no plain interpreter to start")
    user_site = tmp_path / "userbase" / "lib" / f"python{_version(python)}" / "site-packages"
    user_site.mkdir(parents=True)
    (user_site / "usercustomize.py").write_text(f"{writes(tmp_path / 'ran')}\n")
    rc, doc = document("check", "--all", "--python", python)
    hook = next(h for h in doc["startup_hooks"] if h["path"] == str(user_site / "usercustomize.py"))
    assert hook["executes"] is True and hook["finding"]["code"] == "WD071"
    assert doc["environment"]["startup"]["user_site"] is True
    assert not (tmp_path / "ran").exists()


def _version(python: Path) -> str:
    code = "import sys; print('%d.%d' % sys.version_info[:2])"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


def test_hooks_are_annotations_in_ci_formats_and_audited_under_path(venv_factory: VenvFactory, tmp_path: Path) -> None:
    venv = venv_factory()
    (venv.site_packages / "evil_init.pth").write_text(f"import os; {writes(tmp_path / 'ran')}\n")
    done = run_cli("check", "--all", "--python", venv.python, "--format", "github")
    assert done.returncode == 1
    assert any(line.startswith("::error") and "WD071" in line for line in done.stdout.splitlines())
    done = run_cli("check", "--all", "--path", venv.site_packages, "--format", "sarif")
    assert done.returncode == 1
    results = json.loads(done.stdout)["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["WD071"]
    assert not (tmp_path / "ran").exists()


@pytest.mark.skipif(
    not (Path("/usr/bin/python3").exists() and Path("/var/lib/dpkg/info").is_dir()), reason="no Debian interpreter"
)
def test_debian_hooks_are_owned_by_their_packages_also_through_a_system_site_venv(tmp_path: Path) -> None:
    run_checked(["/usr/bin/python3", "-m", "venv", "--without-pip", "--system-site-packages", tmp_path / "venv"])
    for python in ("/usr/bin/python3", tmp_path / "venv" / "bin" / "python"):
        _, doc = document("check", "--all", "--python", python)
        owned = {
            Path(h["path"]).name: (h["owner"]["type"], h["known"])
            for h in doc["startup_hooks"]
            if h["owner"] is not None
        }
        if Path("/usr/lib/python3/dist-packages/distutils-precedence.pth").exists():
            assert owned["distutils-precedence.pth"] == ("system", "setuptools distutils shim")
        if Path("/etc/python3.11/sitecustomize.py").exists():
            assert owned["sitecustomize.py"] == ("system", "Debian apport hook")
        # Every file dpkg installed is owned: nothing importable is unowned.
        assert doc["unowned"]["findings"] == []


def _accept(path: Path, distribution: str, hook: str, code: str, found: str) -> Path:
    path.write_text(
        "[[accept]]\n"
        f'distribution = "{distribution}"\npath = "{hook}"\ncode = "{code}"\nfound = "{found}"\n'
        'reason = "reviewed by the team"\n',
        encoding="utf-8",
    )
    return path


def test_an_accept_rule_pinned_to_the_hooks_sha256_passes_it_until_it_changes(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, uv_bin: Path, tmp_path: Path
) -> None:
    wheel = wheel_factory("leaky", "1.82.8", {"leaky/__init__.py": b"", "leaky_init.pth": b"import os\n"})
    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel, uv_bin=uv_bin)
    (venv.site_packages / "evil_init.pth").write_text("import sys\n")
    _, doc = document("check", "--all", "--python", venv.python)
    hooks = hooks_by_name(doc)
    config = tmp_path / "rules"
    config.mkdir()
    _accept(config / "owned.toml", "leaky", "leaky_init.pth", "WD070", hooks["leaky_init.pth"]["sha256"])
    rc, doc = document("check", "--all", "--python", venv.python, "--config", config / "owned.toml")
    assert rc == 1  # the unowned one still fails
    accepted = hooks_by_name(doc)["leaky_init.pth"]["finding"]["accepted"]
    assert accepted["by"] == "config" and accepted["reason"] == "reviewed by the team"
    assert hooks_by_name(doc)["evil_init.pth"]["finding"]["accepted"] is None

    both = config / "both.toml"
    owned = _accept(config / "a.toml", "leaky", "leaky_init.pth", "WD070", hooks["leaky_init.pth"]["sha256"])
    nobodys = _accept(config / "b.toml", "(unowned)", "evil_init.pth", "WD071", hooks["evil_init.pth"]["sha256"])
    both.write_text(owned.read_text() + "\n" + nobodys.read_text(), encoding="utf-8")
    rc, doc = document("check", "--all", "--python", venv.python, "--config", both)
    assert rc == 0, [h["finding"] for h in doc["startup_hooks"]]
    assert doc["policy"]["stale"] == [] and doc["policy"]["accepted"] == 2
    done = run_cli("check", "--all", "--python", venv.python, "--config", both)
    assert done.returncode == 0 and "1 accepted" not in done.stdout and "2 accepted" in done.stdout

    # A changed hook is other bytes: the rule no longer matches it, it fails again and the rule is stale.
    (venv.site_packages / "evil_init.pth").write_text("import sys; print('changed')\n")
    rc, doc = document("check", "--all", "--python", venv.python, "--config", both)
    assert rc == 1
    assert hooks_by_name(doc)["evil_init.pth"]["finding"]["accepted"] is None
    assert [r["distribution"] for r in doc["policy"]["stale"]] == ["(unowned)"]


def test_a_baseline_pins_hooks_and_unowned_modules(venv_factory: VenvFactory, tmp_path: Path) -> None:
    venv = venv_factory()
    (venv.site_packages / "evil_init.pth").write_text("import sys\n")
    (venv.site_packages / "stray.py").write_text("x = 1\n")
    baseline = tmp_path / "baseline.json"
    done = run_cli("check", "--all", "--python", venv.python, "--write-baseline", baseline)
    assert done.returncode == 0, done.stderr
    assert run_cli("check", "--all", "--python", venv.python, "--baseline", baseline).returncode == 0
    (venv.site_packages / "evil_init.pth").write_text("import sys; print('changed')\n")
    rc, doc = document("check", "--all", "--python", venv.python, "--baseline", baseline)
    assert rc == 1
    assert [h["finding"]["code"] for h in doc["startup_hooks"] if h["finding"]["accepted"] is None] == ["WD071"]
    assert doc["unowned"]["findings"][0]["accepted"]["by"] == "baseline"


def test_one_accept_rule_is_offered_for_the_same_hook_in_two_site_directories(tmp_path: Path) -> None:
    """Its rule names the path as RECORD would, relative to a site directory: one rule accepts both copies."""
    sites = [tmp_path / "a", tmp_path / "b"]
    for site in sites:
        site.mkdir()
        (site / "extra.pth").write_text("import os\n")
    done = run_cli("check", "--all", "--path", sites[0], "--path", sites[1])
    assert done.returncode == 1
    assert done.stdout.count(": WD071: ") == 2, done.stdout
    assert done.stdout.count("[[tool.wheeldoctor.accept]]") == 1, done.stdout

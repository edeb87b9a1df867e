"""The known-hook registry on real installs: each surveyed hook passes, anything else fails with a pasteable accept.

The offline tests install wheels built here that mirror, byte for byte, the hook files
the survey read from each real wheel (docs/startup-hooks.md), or that the build backends write
into an editable wheel; the network tests install the real wheels by name. PEP 829
``.start`` files are built to the PEP's text (no 3.15 interpreter can be installed here).
"""

from __future__ import annotations

import codecs
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from helpers import Venv, VenvFactory, WheelFactory, run_cli, uv_install, uv_install_editable

from wheeldoctor.formats.hook_template import TemplateError, compile_template
from wheeldoctor.formats.start import disables_imports, parse_start
from wheeldoctor.judge.hooks import HookKind
from wheeldoctor.judge.known_hooks import find_known, known_pth, known_start, shipped
from wheeldoctor.where.environment import load_environment
from wheeldoctor.where.hooks import audit_hooks
from wheeldoctor.where.startup import given

#: (distribution, version, hook file, its bytes as the surveyed wheel ships them, the registry's name).
SURVEY: list[tuple[str, str, str, bytes, str]] = [
    (
        "coverage",
        "7.17.4",
        "a1_coverage.pth",
        b'import sys; exec(\'import os\\n\\nif os.getenv("COVERAGE_PROCESS_START") or '
        b'os.getenv("COVERAGE_PROCESS_CONFIG"):\\n try:\\n  import coverage\\n except:\\n  pass\\n else:\\n'
        b'  coverage.process_startup(slug="pth")\')\n',
        "coverage start-up hook",
    ),
    (
        "coverage-enable-subprocess",
        "1.0",
        "coverage_enable_subprocess.pth",
        b"import sys; exec(u'try:\\n    import coverage\\n# coverage throws OSError when $PWD does not exist\\n"
        b"except (ImportError, OSError):\\n    pass\\nelse:\\n    coverage.process_startup()\\n')\n\n",
        "coverage-enable-subprocess",
    ),
    (
        "numba-cuda",
        "0.30.4",
        "_numba_cuda_redirector.pth",
        b"# SPDX-FileCopyrightText: Copyright (c) 2025 NVIDIA CORPORATION & AFFILIATES. All rights reserved.\n"
        b"# SPDX-License-Identifier: BSD-2-Clause\n\nimport _numba_cuda_redirector\n",
        "numba-cuda redirector",
    ),
    (
        "nvidia-cutlass-dsl",
        "4.8.1",
        "nvidia_cutlass_dsl_packages.pth",
        b"import sys, os, nvidia_cutlass_dsl; sys.path.insert(0, os.path.join(nvidia_cutlass_dsl.__path__[0], "
        b"'dsl_packages'))",
        "nvidia-cutlass-dsl packages path",
    ),
    (
        "protobuf",
        "3.20.3",
        "protobuf-3.20.3-nspkg.pth",
        b"import sys, types, os;has_mfs = sys.version_info > (3, 5);p = os.path.join(sys._getframe(1)"
        b".f_locals['sitedir'], *('google',));importlib = has_mfs and __import__('importlib.util');has_mfs and "
        b"__import__('importlib.machinery');m = has_mfs and sys.modules.setdefault('google', "
        b"importlib.util.module_from_spec(importlib.machinery.PathFinder.find_spec('google', "
        b"[os.path.dirname(p)])));m = m or sys.modules.setdefault('google', types.ModuleType('google'));"
        b"mp = (m or []) and m.__dict__.setdefault('__path__',[]);(p not in mp) and mp.append(p)\n",
        "setuptools namespace package",
    ),
    (
        "pytest-cov",
        "6.0.0",
        "pytest-cov.pth",
        b"import os, sys;exec('if \\'COV_CORE_SOURCE\\' in os.environ:\\n try:\\n  from pytest_cov.embed import "
        b'init\\n  init()\\n except Exception as exc:\\n  sys.stderr.write(\\n   "pytest-cov: Failed to setup '
        b'subprocess coverage. "\\n   "Environ: {0!r} "\\n   "Exception: {1!r}\\\\n".format(\\n    '
        b"dict((k, v) for k, v in os.environ.items() if k.startswith(\\'COV_CORE\\')),\\n    exc\\n   )\\n  )\\n')\n",
        "pytest-cov subprocess support",
    ),
    (
        "pywin32",
        "312",
        "pywin32.pth",
        b"# .pth file for the PyWin32 extensions\r\nwin32\r\nwin32\\lib\r\npythonwin\r\n# And some hackery to deal "
        b"with environments where the post_install script\r\n# isn't run.\r\nimport pywin32_bootstrap\r\n",
        "pywin32 bootstrap",
    ),
    (
        "setuptools",
        "84.2.1",
        "distutils-precedence.pth",
        b"import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') == 'local'; "
        b"enabled and __import__('_distutils_hack').add_shim(); \n",
        "setuptools distutils shim",
    ),
    # What the build backends write into the editable wheel of a project named "demo-proj".
    (
        "demo-setuptools",
        "1.0",
        "__editable__.demo_setuptools-1.0.pth",
        b"import __editable___demo_setuptools_1_0_finder; __editable___demo_setuptools_1_0_finder.install()",
        "setuptools editable finder",
    ),
    ("demo-hatch", "1.0", "_editable_impl_demo_hatch.pth", b"import _editable_impl_demo_hatch", "editables redirector"),
    # hatchling's dev-mode-exact: editables' NAME.pth written as _NAME.pth.
    ("demo-hatchling", "1.0", "_demo_hatchling.pth", b"import _editable_impl_demo_hatchling", "editables redirector"),
    (
        "demo-skbuild",
        "1.0",
        "_editable_skbc_demo_skbuild.pth",
        b"import _editable_skbc_demo_skbuild\n/src/demo\n",
        "scikit-build-core editable redirect",
    ),
    (
        "demo-skbuild-old",
        "1.0",
        "_demo_skbuild_old_editable.pth",
        b"import _demo_skbuild_old_editable\n",
        "scikit-build-core editable redirect (0.x)",
    ),
    (
        "demo-meson",
        "1.0",
        "demo-meson-editable.pth",
        b"import _demo_meson_editable_loader; _demo_meson_editable_loader.init()",
        "meson-python editable loader",
    ),
]


def document(*args: str | Path, cwd: Path | None = None) -> tuple[int, dict[str, Any], str]:
    done = run_cli(*args, "--json", cwd=cwd)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout), done.stderr


def hooks_by_name(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {Path(h["path"]).name: h for h in doc["startup_hooks"]}


#: The rows of SURVEY that build backends write into editable wheels: installed editable, as they only ever are.
EDITABLE = frozenset(name for name, *_ in SURVEY if name.startswith("demo-"))


@pytest.fixture
def survey_env(venv_factory: VenvFactory, wheel_factory: WheelFactory, uv_bin: Path, tmp_path: Path) -> Venv:
    """One venv holding a wheel per surveyed hook, each shipping the hook file as the real wheel does."""
    venv = venv_factory()
    wheels = {name: wheel_factory(name, version, {hook: data}) for name, version, hook, data, _ in SURVEY}
    uv_install(venv, "--no-deps", *(w for name, w in wheels.items() if name not in EDITABLE), uv_bin=uv_bin)
    for name in sorted(EDITABLE):
        uv_install_editable(venv, wheels[name], tmp_path / "projects" / name, uv_bin=uv_bin)
    return venv


def test_every_surveyed_hook_is_known_and_the_check_passes(survey_env: Venv) -> None:
    rc, doc, _ = document("check", "--all", "--python", survey_env.python)
    hooks = hooks_by_name(doc)
    assert {name: hooks[name]["known"] for _, _, name, _, _ in SURVEY} == {
        name: known for _, _, name, _, known in SURVEY
    }
    assert rc == 0, [h["finding"] for h in doc["startup_hooks"] if h["finding"]]


def test_a_surveyed_hook_shipped_by_another_distribution_or_changed_fails(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, uv_bin: Path
) -> None:
    venv = venv_factory()
    cutlass = next(s for s in SURVEY if s[0] == "nvidia-cutlass-dsl")
    wheels = [
        wheel_factory("not-nvidia", "1.0", {cutlass[2]: cutlass[3]}),
        wheel_factory("changed", "1.0", {"a1_coverage.pth": SURVEY[0][3].replace(b"pass", b"import evil")}),
    ]
    uv_install(venv, "--no-deps", *wheels, uv_bin=uv_bin)
    rc, doc, _ = document("check", "--all", "--python", venv.python)
    hooks = hooks_by_name(doc)
    assert rc == 1
    assert hooks[cutlass[2]]["known"] is None and hooks[cutlass[2]]["finding"]["code"] == "WD070"
    assert hooks["a1_coverage.pth"]["known"] is None and hooks["a1_coverage.pth"]["finding"]["code"] == "WD070"


def test_a_planted_hook_fails_counted_in_the_summary_with_an_accept_to_paste(
    venv_factory: VenvFactory, tmp_path: Path
) -> None:
    venv = venv_factory()
    # An escape sequence in the hook line must reach the terminal inert.
    (venv.site_packages / "evil.pth").write_bytes(b"import os; os.getcwd() # \x1b[2J\n")
    done = run_cli("check", "--all", "--python", venv.python)
    assert done.returncode == 1, done.stderr
    out = done.stdout
    assert "\x1b" not in out
    assert "line 1: 'import os; os.getcwd() # \\x1b[2J'" in out
    summary = next(line for line in out.splitlines() if " checked: " in line)
    assert "; 1 finding(s) (0 in files, 1 start-up hook(s))" in summary, summary
    block = out[out.index("[[tool.wheeldoctor.accept]]") :].splitlines()[:6]
    (tmp_path / "pyproject.toml").write_text("[tool.wheeldoctor]\n" + "\n".join(line.strip() for line in block) + "\n")
    (tmp_path / ".git").mkdir()
    accepted = run_cli("check", "--all", "--python", venv.python, cwd=tmp_path)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    # The rule is pinned to the bytes: a changed hook fails again.
    (venv.site_packages / "evil.pth").write_bytes(b"import os; os.getpid()\n")
    assert run_cli("check", "--all", "--python", venv.python, cwd=tmp_path).returncode == 1


def test_a_config_known_hook_passes_its_owner_and_template_only(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, uv_bin: Path, tmp_path: Path
) -> None:
    venv = venv_factory()
    uv_install(
        venv,
        "--no-deps",
        wheel_factory("profiler", "2.0", {"profiler_boot.pth": b"import profiler_boot; profiler_boot.start('2.0')\n"}),
        wheel_factory("other", "1.0", {"profiler_boot.pth": b"import profiler_boot; profiler_boot.start('2.0')\n"}),
        uv_bin=uv_bin,
    )
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        "[[tool.wheeldoctor.known-hook]]\n"
        'name = "our profiler"\n'
        'distribution = "profiler"\n'
        'file = "profiler_boot.pth"\n'
        "lines = [\"import profiler_boot; profiler_boot.start('{v:version}')\"]\n"
    )
    _, doc, _ = document("check", "--all", "--python", venv.python, cwd=project)
    # Both wheels ship the same path: profiler's copy is the one on disk only if it was installed last,
    # so the owner the audit names decides; whoever it is, only profiler's is known.
    hook = hooks_by_name(doc)["profiler_boot.pth"]
    assert (hook["known"] == "our profiler") == (hook["owner"]["name"] == "profiler")
    (project / "pyproject.toml").write_text(
        "[[tool.wheeldoctor.known-hook]]\n"
        'name = "bad"\ndistribution = "profiler"\nfile = "x.pth"\nlines = ["import {m:code}"]\n'
    )
    done = run_cli("check", "--all", "--python", venv.python, cwd=project)
    assert done.returncode == 2 and "unknown kind" in done.stderr and "Traceback" not in done.stderr


def test_config_known_hook_accepts_a_hook_the_registry_does_not_know(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, uv_bin: Path, tmp_path: Path
) -> None:
    venv = venv_factory()
    boot = b"import profiler_boot; profiler_boot.start('2.0')\n"
    uv_install(venv, "--no-deps", wheel_factory("profiler", "2.0", {"profiler_boot.pth": boot}), uv_bin=uv_bin)
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    assert run_cli("check", "--all", "--python", venv.python, cwd=project).returncode == 1
    (project / "pyproject.toml").write_text(
        "[[tool.wheeldoctor.known-hook]]\n"
        'name = "our profiler"\ndistribution = "profiler"\nfile = "profiler_boot.pth"\n'
        "lines = [\"import profiler_boot; profiler_boot.start('{v:version}')\"]\n"
    )
    rc, doc, _ = document("check", "--all", "--python", venv.python, cwd=project)
    assert (rc, hooks_by_name(doc)["profiler_boot.pth"]["known"]) == (0, "our profiler")
    (venv.site_packages / "profiler_boot.pth").write_bytes(b"import profiler_boot; profiler_boot.start('2'); 1\n")
    assert run_cli("check", "--all", "--python", venv.python, cwd=project).returncode == 1


# --- PEP 829 .start files --------------------------------------------------------------


def test_start_files_parse_as_the_pep_says() -> None:
    data = codecs.BOM_UTF8 + b"# comment\n\n  pkg.mod:main  \nbad line\nmod:obj.attr\r\nimport os\n"
    entries = parse_start(data)
    assert [(e.number, e.module, e.callable) for e in entries] == [
        (3, "pkg.mod", "main"),
        (4, None, None),
        (5, "mod", "obj.attr"),
        (6, None, None),
    ]
    assert disables_imports("demo.pth", frozenset({"demo.start"}), (3, 15))
    assert not disables_imports("demo.pth", frozenset({"demo.start"}), (3, 14))
    assert not disables_imports("demo.pth", frozenset({"other.start"}), (3, 15))


@pytest.mark.parametrize(
    ("name", "lines", "owner", "known"),
    [
        ("_editable_skbc_demo.start", ["_editable_skbc_demo:entrypoint"], "demo", True),
        ("_editable_skbc_demo.start", ["_editable_skbc_demo:entrypoint", "os:system"], "demo", False),
        ("demo-editable.start", ["_demo_editable_loader:init"], "demo", True),
        ("demo-editable.start", ["_demo_editable_loader:init"], None, False),
        ("demo.start", ["_demo_editable_loader:init"], "demo", False),
    ],
)
def test_start_templates(name: str, lines: list[str], owner: str | None, known: bool) -> None:
    # Both are editable-only entries: known for an editable owner, and never by default.
    assert (known_start(name, lines, owner, editable=True) is not None) == known
    assert known_start(name, lines, owner) is None


def test_start_files_in_a_real_venv(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, uv_bin: Path, tmp_path: Path
) -> None:
    venv = venv_factory()
    bom = codecs.BOM_UTF8
    # scikit-build-core 1.1.2's editable wheel as built on 3.15: the .start, the module, a .pth of paths.
    skbc = wheel_factory(
        "demo",
        "1.0",
        {
            "_editable_skbc_demo.start": bom + b"_editable_skbc_demo:entrypoint",
            "_editable_skbc_demo.py": b"def entrypoint() -> None:\n    pass\n",
            "_editable_skbc_demo.pth": b"/src/demo\n",
        },
    )
    uv_install_editable(venv, skbc, tmp_path / "demo", uv_bin=uv_bin)
    uv_install(
        venv,
        "--no-deps",
        # A package's own .start, not in the registry, naming its own module: a hook like its .pth would be.
        wheel_factory("tracer", "1.0", {"tracer.start": b"tracer_boot:go\n", "tracer_boot.py": b"def go(): pass\n"}),
        # A .start naming a module its owner does not ship.
        wheel_factory("sneaky", "1.0", {"sneaky.start": b"tracer_boot:go\n"}),
        uv_bin=uv_bin,
    )
    (venv.site_packages / "planted.start").write_bytes(b"os:system\n")
    rc, doc, _ = document("check", "--all", "--python", venv.python)
    hooks = hooks_by_name(doc)
    assert rc == 1
    assert hooks["_editable_skbc_demo.start"]["kind"] == "start"
    assert hooks["_editable_skbc_demo.start"]["known"] == "scikit-build-core editable redirect (PEP 829)"
    assert hooks["_editable_skbc_demo.start"]["finding"] is None
    assert hooks["_editable_skbc_demo.pth"]["executes"] is False
    tracer = hooks["tracer.start"]
    assert tracer["finding"]["code"] == "WD070" and "resolve" not in tracer["finding"]["message"]
    assert tracer["entry_points"] == ["tracer_boot:go"] and tracer["unresolved"] == []
    sneaky = hooks["sneaky.start"]
    assert sneaky["finding"]["code"] == "WD070" and sneaky["unresolved"] == ["tracer_boot:go"]
    assert hooks["planted.start"]["finding"]["code"] == "WD071"
    text = run_cli("check", "--all", "--python", venv.python).stdout
    assert "entry point 1: 'os:system'" in text
    assert "entry point 1: 'tracer_boot:go' (resolves to no module its owner ships)" in text


def test_a_matching_start_turns_off_the_pth_import_lines_from_3_15(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, uv_bin: Path
) -> None:
    venv = venv_factory()
    files = {
        "_editable_skbc_demo.start": b"_editable_skbc_demo:entrypoint",
        "_editable_skbc_demo.py": b"def entrypoint(): pass\n",
        # Written for interpreters before 3.15 too: the import line, which 3.15 skips for the .start.
        "_editable_skbc_demo.pth": b"import os; os.getpid()\n/src/demo\n",
    }
    uv_install(venv, "--no-deps", wheel_factory("demo", "1.0", files), uv_bin=uv_bin)
    env = load_environment("t", [str(venv.site_packages)], [str(venv.prefix)])
    site = str(venv.site_packages)
    startup = given((site,), (3, 11))
    owners = _owners(venv)
    for version, runs in (((3, 14), True), ((3, 15), False)):
        audit = audit_hooks(replace(env, startup=replace(startup, version=version)), owners.get)
        pth = next(h for h in audit.hooks if h.kind is HookKind.PTH and h.path.endswith("_editable_skbc_demo.pth"))
        assert pth.executes is runs
        assert pth.disabled_by == (None if runs else "_editable_skbc_demo.start")
        assert (pth.finding is not None) is runs  # the import line is no known template


def _owners(venv: Venv) -> dict[str, Any]:
    from wheeldoctor.where.hook_files import hook_paths
    from wheeldoctor.where.ownership import Owners

    env = load_environment("t", [str(venv.site_packages)], [str(venv.prefix)])
    env = replace(env, startup=given((str(venv.site_packages),), (3, 11)))
    owners = Owners(env)
    return {p: o for p in hook_paths(env) if (o := owners.owner(p)) is not None}


def test_templates_hold_no_code() -> None:
    for kind in ("identifier", "dotted", "quoted", "quoted-list", "version"):
        pattern = compile_template(f"import {{x:{kind}}}")
        for evil in ("a; import os", "a, os", "a)\nimport os", "a'; os.system('id')#", "a\\'"):
            assert not pattern.fullmatch(f"import {evil}"), (kind, evil)
    path = compile_template("import sys; sys.path.append('{p:path}')")
    assert path.fullmatch("import sys; sys.path.append('/opt/x y/lib')")
    for evil in ("x'); import os; ('", "x\\'); import os#", "x\nimport os"):
        assert not path.fullmatch(f"import sys; sys.path.append('{evil}')"), evil
    with pytest.raises(TemplateError):
        compile_template("import {p:path}")
    with pytest.raises(TemplateError):
        compile_template("import {m}")
    with pytest.raises(TemplateError):
        compile_template("import {m:code}")
    assert compile_template("import {m:identifier}; {m}.go()").fullmatch("import a; a.go()")
    assert not compile_template("import {m:identifier}; {m}.go()").fullmatch("import a; b.go()")
    assert len(shipped()) >= 15


def test_placeholders_side_by_side_are_refused() -> None:
    """Each split of a long line between them would be tried: a config's hook could take hours to match."""
    for template in ("import {a:version}{b:version}", "import {a:identifier}{a}", "{a:dotted}{b:dotted}.x"):
        with pytest.raises(TemplateError, match="put literal text between it and the one before"):
            compile_template(template)
    assert compile_template("import {a:version}_{b:version}").fullmatch("import 1.0_2.0")


def test_a_known_line_with_a_trailing_statement_is_not_known() -> None:
    line = "import _numba_cuda_redirector; import os"
    assert known_pth("_numba_cuda_redirector.pth", (line,), "numba-cuda") is None
    assert known_pth("_numba_cuda_redirector.pth", ("import _numba_cuda_redirector",), "numba-cuda") is not None


# --- the real wheels, by name -------------------------------------------------------------

NETWORK_SURVEY = [
    "nvidia-cutlass-dsl==4.8.1",
    "numba-cuda==0.30.4",
    "coverage==7.17.4",
    "coverage-enable-subprocess==1.0",
    "pytest-cov==6.0.0",
    "setuptools==84.2.1",
    "protobuf==3.20.3",
]


@pytest.mark.network
@pytest.mark.parametrize("spec", NETWORK_SURVEY)
def test_each_surveyed_wheel_from_the_index_passes(venv_factory: VenvFactory, spec: str, tmp_path: Path) -> None:
    venv = venv_factory()
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv.python), "install", "-q", "--no-deps", spec],
        check=True,
        capture_output=True,
        timeout=600,
    )
    rc, doc, _ = document("check", "--all", "--python", venv.python)
    assert rc == 0, [h["finding"] for h in doc["startup_hooks"] if h["finding"]]
    name = spec.split("==", 1)[0]
    assert any(h["known"] and h["owner"] and h["owner"]["name"] == name for h in doc["startup_hooks"]), doc


def test_fix_with_a_planted_hook_says_it_cannot_and_fails(venv_factory: VenvFactory) -> None:
    venv = venv_factory()
    (venv.site_packages / "evil.pth").write_text("import os; os.getpid()\n")
    done = run_cli("fix", "--all", "--yes", "--python", venv.python)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "healthy" not in done.stdout and "Traceback" not in done.stderr
    assert "plan: nothing that fix can repair" in done.stdout
    assert "left alone: (unowned): start-up hook evil.pth runs code at every interpreter start" in done.stdout


@pytest.mark.unit
def test_a_file_template_ties_the_lines_to_the_file_name_and_editable_needs_an_editable_owner() -> None:
    from wheeldoctor.formats.hook_template import RegistryError, hook_from

    entry = {"name": "boot", "distribution": "*", "file": "{m:identifier}_boot.pth", "lines": ["import {m}_boot"]}
    tied = hook_from(entry, "t")
    assert tied.matches("pth", "x_boot.pth", "x", ["import x_boot"])
    assert not tied.matches("pth", "x_boot.pth", "x", ["import y_boot"])
    assert not tied.matches("pth", "x_boot.pth\nimport y", "x", ["import x_boot"])
    editable = hook_from({**entry, "editable": True}, "t")
    assert editable.matches("pth", "x_boot.pth", "x", ["import x_boot"], editable=True)
    assert not editable.matches("pth", "x_boot.pth", "x", ["import x_boot"], editable=False)
    with pytest.raises(RegistryError, match="editable must be true or false"):
        hook_from({**entry, "editable": "yes"}, "t")
    with pytest.raises(RegistryError, match=r"t\.file"):
        hook_from({**entry, "file": "{m:nonsense}.pth"}, "t")


def test_a_hook_that_runs_nothing_reads_no_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> tuple[()]:
        raise AssertionError("the registry was read")

    monkeypatch.setattr("wheeldoctor.judge.known_hooks.shipped", refuse)
    assert find_known("pth", "distutils-precedence.pth", "setuptools", ()) is None

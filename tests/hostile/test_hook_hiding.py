"""Start-up code hidden from the hooks audit (review of c1499e3, findings 1 and 6), rebuilt in real venvs.

1. Padding: a ``.pth`` over the 16 MiB read limit was an errored read that "runs no code",
   while ``site`` reads it whole and runs its import line. Anything that cannot be read
   whole (too large, not a regular file) is now a failing hook, and no accept rule without
   pinned bytes accepts it.
2. Laundering: any wheel could ship ``x.pth`` holding ``import _editable_impl_x`` beside an
   ``_editable_impl_x.py`` of its own, and pass as the editables redirector. Editable-wheel
   hooks are now known only for an owner installed editable, named after their module.
3. (Review 2, finding 1) A forged ``direct_url.json`` in the wheel's own dist-info, which pip
   and uv keep, claimed that editable install; and another editable copy of the same name
   and version on the path vouched for the hook's real owner.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import Planted, no_traceback
from helpers import (
    Venv,
    VenvFactory,
    WheelFactory,
    data_dirname,
    pip_install,
    record_hash,
    run_cli,
    uv_install,
    uv_install_editable,
)

MARKER = "PTH CODE RAN"
#: 17,000 comment lines of 1000 ``#``: past the 16 MiB that used to be read, as the review padded it.
PADDING = ("#" * 1000 + "\n").encode() * 17_000
PADDED = PADDING + f'import sys; sys.stderr.write("{MARKER}\\n")\n'.encode()
UNREAD = "could not be read"


def _hooks(done: subprocess.CompletedProcess[str]) -> dict[str, dict[str, object]]:
    return {Path(h["path"]).name: h for h in json.loads(done.stdout)["startup_hooks"]}


def _project(root: Path, rule: str) -> Path:
    project = root / "project"
    project.mkdir(parents=True)
    (project / ".git").mkdir()
    (project / "wheeldoctor.toml").write_text(rule, encoding="utf-8")
    return project


@pytest.mark.parametrize("strict", [False, True])
def test_a_padded_pth_is_read_to_its_end_and_its_import_line_fails(planted: Planted, strict: bool) -> None:
    (planted.site / "pad.pth").write_bytes(PADDED)
    # The attack is real: a normal start of the venv's interpreter runs the line.
    started = subprocess.run([planted.venv.python, "-c", "pass"], capture_output=True, text=True, check=True)
    assert MARKER in started.stderr
    args = ("check", "--all", "--python", planted.venv.python, *(["--strict"] if strict else []))
    done = run_cli(*args)
    no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "pad.pth: WD071: pad.pth runs code at every interpreter start (line 17001)" in done.stdout
    assert f"line 17001: 'import sys; sys.stderr.write(\"{MARKER}\\\\n\")'" in done.stdout
    assert f'found = "{record_hash(PADDED)}"' in done.stdout  # the accept rule pins all of its bytes
    hook = _hooks(run_cli(*args, "--json"))["pad.pth"]
    assert hook["executes"] is True and hook["lines"] == [17001] and hook["error"] is None
    assert hook["sha256"] == record_hash(PADDED)


def test_a_padded_pth_accepted_by_its_bytes_fails_again_when_they_change(planted: Planted, tmp_path: Path) -> None:
    (planted.site / "pad.pth").write_bytes(PADDED)
    rule = (
        f'[[accept]]\ndistribution = "(unowned)"\npath = "pad.pth"\ncode = "WD071"\nfound = "{record_hash(PADDED)}"\n'
    )
    project = _project(tmp_path, rule + 'reason = "r"\n')
    assert run_cli("check", "--all", "--path", planted.site, cwd=project).returncode == 0
    (planted.site / "pad.pth").write_bytes(PADDING + b"import os; os.getpid()\n")
    again = run_cli("check", "--all", "--path", planted.site, cwd=project)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "pad.pth: WD071" in again.stdout


def test_a_pth_with_a_line_too_long_to_classify_fails_as_unreadable_pinned_to_its_bytes(planted: Planted) -> None:
    data = b"#" * (17 << 20) + b"\nimport os\n"
    (planted.site / "long.pth").write_bytes(data)
    done = run_cli("check", "--all", "--path", planted.site, "--json")
    no_traceback(done)
    assert done.returncode == 1
    hook = _hooks(done)["long.pth"]
    finding = hook["finding"]
    assert isinstance(finding, dict)
    assert finding["code"] == "WD071" and UNREAD in finding["message"]
    assert "treated as running code" in finding["message"]
    assert hook["executes"] is True and finding["found"] == record_hash(data)


@pytest.mark.parametrize("form", ["text", "json", "github", "sarif", "junit"])
def test_a_hook_that_is_not_a_regular_file_fails_in_every_format(planted: Planted, form: str) -> None:
    os.mkfifo(planted.site / "fifo.pth")
    for strict in ([], ["--strict"]):
        done = run_cli("check", "--all", "--path", planted.site, "--format", form, *strict)
        no_traceback(done)
        assert done.returncode == 1, (form, strict, done.stdout + done.stderr)
        assert "fifo.pth" in done.stdout and "WD071" in done.stdout
        assert "could not be read (is a FIFO): treated as running code" in done.stdout, done.stdout


def test_an_oversize_sitecustomize_is_pinned_by_its_bytes_and_no_broad_rule_accepts_a_fifo(
    planted: Planted, tmp_path: Path
) -> None:
    big = b"import os\n" + b"#" * (17 << 20) + b"\n"
    (planted.site / "sitecustomize.py").write_bytes(big)
    os.mkfifo(planted.site / "zz.pth")
    broad = "".join(
        f'[[accept]]\ndistribution = "(unowned)"\npath = "{p}"\ncode = "WD071"\nreason = "r"\n'
        for p in ("sitecustomize.py", "zz.pth")
    )
    project = _project(tmp_path, broad)
    done = run_cli("check", "--all", "--path", planted.site, cwd=project)
    no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "sitecustomize.py: WD071" in done.stdout and "zz.pth: WD071" in done.stdout
    assert f'found = "{record_hash(big)}"' in done.stdout
    assert '# "zz.pth": its bytes could not be read, so no rule can accept it' in done.stdout
    hooks = _hooks(run_cli("check", "--all", "--path", planted.site, "--json", cwd=project))
    assert hooks["sitecustomize.py"]["sha256"] == record_hash(big)
    assert hooks["zz.pth"]["sha256"] is None
    assert all(h["finding"]["accepted"] is None for h in hooks.values())  # type: ignore[index]


LAUNDERED = {
    "innocent/__init__.py": b"",
    "innocent.pth": b"import _editable_impl_innocent\n",
    "_editable_impl_innocent.py": b"import os; os.environ.setdefault('PWNED', '1')\n",
}


@pytest.mark.parametrize(
    "files",
    [
        LAUNDERED,  # the review's repro
        {**{k: v for k, v in LAUNDERED.items() if k != "innocent.pth"}, "_innocent.pth": LAUNDERED["innocent.pth"]},
        {
            **{k: v for k, v in LAUNDERED.items() if k != "innocent.pth"},
            "_editable_impl_innocent.pth": b"import _editable_impl_innocent\n",
        },
    ],
    ids=["NAME.pth", "_NAME.pth", "_editable_impl_NAME.pth"],
)
def test_an_editables_redirector_in_a_wheel_installed_from_an_index_is_not_known(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, uv_bin: Path, files: dict[str, bytes]
) -> None:
    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel_factory("innocent", "1.0", files), uv_bin=uv_bin)
    done = run_cli("check", "--all", "--python", venv.python, "--json")
    no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    (hook,) = (h for h in _hooks(done).values() if h["executes"])
    assert hook["known"] is None and hook["finding"]["code"] == "WD070"  # type: ignore[index]


@pytest.mark.parametrize(
    ("name", "line", "known"),
    [
        ("_innocent.pth", b"import _editable_impl_innocent\n", True),  # the control: hatchling's own form
        ("_other.pth", b"import _editable_impl_innocent\n", False),
        ("_editable_impl_other.pth", b"import _editable_impl_innocent\n", False),
        ("_editable_skbc_other.pth", b"import _editable_skbc_innocent\n", False),
        ("_other_editable.pth", b"import _innocent_editable\n", False),
    ],
)
def test_an_editable_redirector_must_name_the_module_it_imports(
    venv_factory: VenvFactory,
    wheel_factory: WheelFactory,
    uv_bin: Path,
    tmp_path: Path,
    name: str,
    line: bytes,
    known: bool,
) -> None:
    venv = venv_factory()
    module = line.split()[1].decode() + ".py"
    wheel = wheel_factory("innocent", "1.0", {"innocent/__init__.py": b"", name: line, module: b"pass\n"})
    uv_install_editable(venv, wheel, tmp_path / "innocent", uv_bin=uv_bin)
    done = run_cli("check", "--all", "--python", venv.python, "--json")
    no_traceback(done)
    hook = _hooks(done)[name]
    assert (hook["known"] is not None) == known, hook
    assert done.returncode == (0 if known else 1), done.stdout + done.stderr


# Review 2, finding 1: pip and uv keep a direct_url.json that a wheel ships in its own
# dist-info when they install it from an index or --find-links, so ``dir_info.editable``
# alone let any wheel's setuptools finder hook pass as known. The claim must now name, as a
# file: URL, a project directory (pyproject.toml, setup.py or setup.cfg) outside the
# environment's prefixes and site directories, and it is read from the owner's own dist-info.
FINDER_PTH = "__editable__.evil-1.0.pth"
FINDER_LINE = b"import __editable___evil_finder; __editable___evil_finder.install()\n"


def _forged(venv: Venv, tmp_path: Path, target: str) -> tuple[str, dict[str, bytes]]:
    """The URL a forged direct_url.json names for ``target``, and the files the wheel needs for it."""
    files: dict[str, bytes] = {}
    if target == "nothing":
        url = (tmp_path / "missing").as_uri()
    elif target == "a project in the site directory":
        files["evilproj/pyproject.toml"] = b"[project]\nname = 'evil'\n"
        url = (venv.site_packages / "evilproj").as_uri()
    elif target == "a project in the prefix":
        files[f"{data_dirname('evil', '1.0')}/data/evilproj/pyproject.toml"] = b"[project]\nname = 'evil'\n"
        url = (venv.prefix / "evilproj").as_uri()
    elif target == "a directory with no project file":
        (tmp_path / "empty").mkdir()
        (tmp_path / "empty" / "README").write_bytes(b"")
        url = (tmp_path / "empty").as_uri()
    elif target == "a project on another host":
        (tmp_path / "checkout").mkdir()
        (tmp_path / "checkout" / "setup.py").write_bytes(b"")
        url = "file://example.invalid" + (tmp_path / "checkout").as_posix()
    else:  # the control: a real project checkout outside the environment is believed
        (tmp_path / "checkout").mkdir()
        (tmp_path / "checkout" / "setup.cfg").write_bytes(b"")
        url = (tmp_path / "checkout").as_uri()
    return url, files


@pytest.mark.parametrize("installer", ["pip", "uv"])
@pytest.mark.parametrize(
    "target",
    [
        "nothing",  # the review's repro: file:///tmp/x
        "a project in the site directory",
        "a project in the prefix",
        "a directory with no project file",
        "a project on another host",
        "a project outside",
    ],
)
def test_a_wheel_from_an_index_cannot_claim_to_be_editable_with_its_own_direct_url(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, uv_bin: Path, tmp_path: Path, installer: str, target: str
) -> None:
    venv = venv_factory()
    url, extra = _forged(venv, tmp_path, target)
    forged = json.dumps({"url": url, "dir_info": {"editable": True}}).encode()
    files = {
        FINDER_PTH: FINDER_LINE,
        "__editable___evil_finder.py": b"def install():\n    import os  # anything\n",
        "evil-1.0.dist-info/direct_url.json": forged,
        **extra,
    }
    wheels = wheel_factory("evil", "1.0", files).parent
    if installer == "pip":
        pip_install(venv, "--no-index", "--find-links", wheels, "evil")
    else:
        uv_install(venv, "--no-index", "--find-links", wheels, "evil", uv_bin=uv_bin)
    # The installer kept the wheel's own claim: the attack is real.
    assert json.loads((venv.dist_info("evil") / "direct_url.json").read_bytes()) == json.loads(forged)
    done = run_cli("check", "--all", "--python", venv.python)
    no_traceback(done)
    hook = _hooks(run_cli("check", "--all", "--python", venv.python, "--json"))[FINDER_PTH]
    if target == "a project outside":
        # What the bar cannot tell: a wheel that names a real checkout outside the environment.
        assert done.returncode == 0, done.stdout + done.stderr
        assert hook["known"] == "setuptools editable finder"
        return
    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        f"{FINDER_PTH}: WD070: evil 1.0 ships {FINDER_PTH}, which runs code at every interpreter start" in done.stdout
    )
    assert hook["known"] is None and hook["finding"]["code"] == "WD070"  # type: ignore[index]


def test_a_real_editable_install_keeps_its_finder_hook_known(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, uv_bin: Path, tmp_path: Path
) -> None:
    venv = venv_factory()
    wheel = wheel_factory(
        "evil", "1.0", {FINDER_PTH: FINDER_LINE, "__editable___evil_finder.py": b"def install():\n    pass\n"}
    )
    uv_install_editable(venv, wheel, tmp_path / "evil", uv_bin=uv_bin)
    done = run_cli("check", "--all", "--python", venv.python)
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"known: {FINDER_PTH} (setuptools editable finder)" in done.stdout
    # The same project file gone, and the same install no longer counts as editable.
    (tmp_path / "evil" / "pyproject.toml").unlink()
    again = run_cli("check", "--all", "--python", venv.python)
    assert again.returncode == 1 and f"{FINDER_PTH}: WD070" in again.stdout, again.stdout + again.stderr


def test_an_editable_copy_elsewhere_on_the_path_does_not_vouch_for_the_owner(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, uv_bin: Path, tmp_path: Path
) -> None:
    wheel = wheel_factory(
        "evil", "1.0", {FINDER_PTH: FINDER_LINE, "__editable___evil_finder.py": b"def install():\n    pass\n"}
    )
    other = venv_factory("other")
    uv_install_editable(other, wheel, tmp_path / "evil", uv_bin=uv_bin)  # a real editable evil 1.0
    venv = venv_factory()
    uv_install(venv, "--no-deps", wheel, uv_bin=uv_bin)  # the hook's owner: the same name and version, not editable
    (venv.site_packages / "zz_other.pth").write_text(f"{other.site_packages}\n", encoding="utf-8")
    done = run_cli("check", "--all", "--python", venv.python, "--json")
    no_traceback(done)
    hook = {h["path"]: h for h in json.loads(done.stdout)["startup_hooks"]}[str(venv.site_packages / FINDER_PTH)]
    assert hook["known"] is None and hook["finding"]["code"] == "WD070", hook
    assert done.returncode == 1

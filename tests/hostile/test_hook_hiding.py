"""Start-up code hidden from the hooks audit (review of c1499e3, findings 1 and 6), rebuilt in real venvs.

1. Padding: a ``.pth`` over the 16 MiB read limit was an errored read that "runs no code",
   while ``site`` reads it whole and runs its import line. Anything that cannot be read
   whole (too large, not a regular file) is now a failing hook, and no accept rule without
   pinned bytes accepts it.
2. Laundering: any wheel could ship ``x.pth`` holding ``import _editable_impl_x`` beside an
   ``_editable_impl_x.py`` of its own, and pass as the editables redirector. Editable-wheel
   hooks are now known only for an owner installed editable, named after their module.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import Planted, no_traceback
from helpers import VenvFactory, WheelFactory, record_hash, run_cli, uv_install, uv_install_editable

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

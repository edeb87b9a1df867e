"""A ``.pyc`` RECORD lists without a hash is judged by its code (issue #49): WD063."""

from __future__ import annotations

import importlib.util
import json
import marshal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Planted, no_traceback
from helpers import build_wheel, make_venv, pip_install, run_cli
from locks import Entry, write_pylock

TAG = sys.implementation.cache_tag


def _pyc(planted: Planted) -> Path:
    """beta's ``__init__`` as pip compiled it: RECORD lists it without a hash."""
    pyc = planted.site / "beta" / "__pycache__" / f"__init__.{TAG}.pyc"
    assert pyc.is_file()
    assert any(row[0] == f"beta/__pycache__/__init__.{TAG}.pyc" and row[1] == "" for row in planted.rows("beta"))
    return pyc


def _payload(pyc: Path, marker: Path) -> None:
    """The attack: the real file's 16-byte header, then code the source never held."""
    code = compile(f"open({str(marker)!r}, 'w').close()\nBETA = True\n", "beta/__init__.py", "exec")
    pyc.write_bytes(pyc.read_bytes()[:16] + marshal.dumps(code))


def _findings(done: subprocess.CompletedProcess[str], code: str = "WD063") -> list[dict[str, object]]:
    document = json.loads(done.stdout)
    return [f for d in document["distributions"] for f in d["findings"] if f["code"] == code]


def test_a_payload_with_the_real_header_is_a_finding(planted: Planted, tmp_path: Path) -> None:
    pyc = _pyc(planted)
    marker = tmp_path / "ran"
    _payload(pyc, marker)
    # The attack is real: importing beta runs the payload, while its source and RECORD are intact.
    subprocess.run([str(planted.venv.python), "-c", "import beta"], check=True, cwd=tmp_path)
    assert marker.exists()
    strict = run_cli("check", "--all", "--strict", "--python", planted.venv.python, "--json")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    (finding,) = _findings(strict)
    assert finding["path"] == f"beta/__pycache__/__init__.{TAG}.pyc"
    assert finding["kind"] == "modified"
    assert "its code is not what compiling the source gives" in str(finding["message"])
    assert str(finding["found"]).startswith("sha256=")
    named = run_cli("check", "beta", "--python", planted.venv.python)
    assert named.returncode == 1 and "WD063" in named.stdout, named.stdout
    # Integrity: no --ignore leaves it out.
    ignored = run_cli("check", "--all", "--strict", "--ignore", "WD06", "--python", planted.venv.python)
    assert ignored.returncode == 1 and "WD063" in ignored.stdout


def test_the_real_pyc_passes(planted: Planted) -> None:
    _pyc(planted)
    done = run_cli("check", "--all", "--strict", "--python", planted.venv.python, "--json")
    assert done.returncode == 0, done.stdout
    assert _findings(done) == []


@pytest.mark.parametrize(
    "body",
    [
        b"(\xff\xff\xff\x7f",  # a tuple of 2**31 - 1 items: unmarshalling it asks for 16 GiB
        b"[\xff\xff\xff\x7f",  # a list of as many
        b"\xe3" + b"\x00" * 8,  # a code object cut short
        b")\x01" * 5000,  # nested past marshal's depth
        b"N",  # None: no code object
    ],
)
def test_hostile_marshal_data_is_a_finding_and_bounded(planted: Planted, body: bytes) -> None:
    pyc = _pyc(planted)
    pyc.write_bytes(pyc.read_bytes()[:16] + body)
    done = run_cli("check", "beta", "--python", planted.venv.python, "--json")
    no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    (finding,) = _findings(done)
    assert "unmarshal" in str(finding["message"]) or "no code object" in str(finding["message"])


def test_a_pyc_for_another_interpreter_is_not_judged(planted: Planted) -> None:
    """Python 3.11 never loads a cpython-39 .pyc: it is counted as not judged, never a finding."""
    pyc = _pyc(planted)
    other = pyc.with_name("__init__.cpython-39.pyc")
    other.write_bytes(b"\x61\x0d\x0d\x0a" + bytes(12) + b"garbage")
    rows = planted.rows("beta")
    rows.append([f"beta/__pycache__/{other.name}", "", ""])
    planted.write_rows("beta", rows)
    done = run_cli("check", "beta", "--python", planted.venv.python)
    assert done.returncode == 0, done.stdout
    assert "1 unhashed .pyc not judged (another interpreter's)" in done.stdout


def test_the_magic_number_of_another_version_is_not_unmarshalled(planted: Planted) -> None:
    pyc = _pyc(planted)
    pyc.write_bytes(b"\x00\x00\x0d\x0a" + pyc.read_bytes()[4:16] + b"(\xff\xff\xff\x7f")
    assert importlib.util.MAGIC_NUMBER != b"\x00\x00\x0d\x0a"
    done = run_cli("check", "beta", "--python", planted.venv.python)
    assert done.returncode == 0, done.stdout
    assert "not judged" in done.stdout


def test_pip_and_setuptools_as_pip_installs_them_are_green(tmp_path: Path) -> None:
    """ensurepip's pip, compiled at install and recorded without hashes: every .pyc judged, none differs."""
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "v")], check=True)
    python = tmp_path / "v" / "bin" / "python"
    done = run_cli("check", "--all", "--strict", "--python", python, "--json")
    assert done.returncode == 0, done.stdout
    assert _findings(done) == []
    site = next((tmp_path / "v" / "lib").glob("python3*/site-packages"))
    assert len(list(site.glob(f"pip/**/__pycache__/*.{TAG}.pyc"))) > 100


def test_importing_the_env_never_happens(planted: Planted, tmp_path: Path) -> None:
    """The judge compiles and unmarshals; it never imports the package or runs its .pyc."""
    marker = tmp_path / "ran"
    _payload(_pyc(planted), marker)
    run_cli("check", "--all", "--strict", "--python", planted.venv.python)
    assert not marker.exists()


def test_the_attack_as_reported_fails_check_all_strict_lock(tmp_path: Path) -> None:
    """``six`` installed by pip from a locked wheel, its .pyc replaced: ``check --all --strict --lock`` passed."""
    wheel = build_wheel(tmp_path / "wheels", "six", "1.17.0", {"six.py": b"PY3 = True\n"})
    venv = make_venv(tmp_path / "venv")
    pip_install(venv, "--no-index", "--no-deps", wheel)
    lock = write_pylock(tmp_path / "pylock.toml", Entry(wheel, path=f"wheels/{wheel.name}"))
    pyc = venv.site_packages / "__pycache__" / f"six.{TAG}.pyc"
    argv = ("check", "--all", "--python", venv.python, "--lock", lock, "--json")
    clean = run_cli(*argv, "--strict")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    marker = tmp_path / "ran"
    code = compile(f"open({str(marker)!r}, 'w').close()\nPY3 = True\n", "six.py", "exec")
    pyc.write_bytes(pyc.read_bytes()[:16] + marshal.dumps(code))
    subprocess.run([str(venv.python), "-c", "import six"], check=True, cwd=tmp_path)
    assert marker.exists()
    for extra in (["--strict"], []):  # --lock alone judges them too
        done = run_cli(*argv, *extra)
        assert done.returncode == 1, (extra, done.stdout + done.stderr)
        assert [f["path"] for f in _findings(done)] == [f"__pycache__/six.{TAG}.pyc"]


def test_a_kept_verdict_does_not_outlive_a_write(planted: Planted, tmp_path: Path) -> None:
    """The verdicts kept in the cache hold only while the .pyc keeps its fingerprint."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    env = {"WHEELDOCTOR_CACHE_DIR": str(cache)}
    argv = ("check", "--all", "--strict", "--python", planted.venv.python, "--json")
    for _ in range(2):  # the second run reads the kept verdicts
        done = run_cli(*argv, env=env)
        assert done.returncode == 0 and _findings(done) == [], done.stdout
    assert list(cache.rglob("*.bytecode"))
    _payload(_pyc(planted), tmp_path / "ran")
    done = run_cli(*argv, env=env)
    assert done.returncode == 1
    assert [f["path"] for f in _findings(done)] == [f"beta/__pycache__/__init__.{TAG}.pyc"]


def test_a_pyc_planted_where_uv_recorded_none_is_a_finding(planted: Planted, tmp_path: Path) -> None:
    """uv compiles nothing by default and records no .pyc: a planted one with a matching header still runs."""
    source = planted.site / "alpha" / "core.py"
    pyc = planted.site / "alpha" / "__pycache__" / f"core.{TAG}.pyc"
    assert not pyc.exists() and not any("__pycache__" in row[0] for row in planted.rows("alpha"))
    compiling = f"import py_compile; py_compile.compile({str(source)!r})"
    subprocess.run([str(planted.venv.python), "-c", compiling], check=True, cwd=tmp_path)
    assert pyc.is_file()  # what Python itself writes: the same code, so no finding
    done = run_cli("check", "alpha", "--python", planted.venv.python, "--json")
    assert (done.returncode, _findings(done)) == (0, []), done.stdout
    marker = tmp_path / "ran"
    code = compile(f"open({str(marker)!r}, 'w').close()\nANSWER = 42\n", str(source), "exec")
    pyc.write_bytes(pyc.read_bytes()[:16] + marshal.dumps(code))
    subprocess.run([str(planted.venv.python), "-c", "import alpha.core"], check=True, cwd=tmp_path)
    assert marker.exists()
    done = run_cli("check", "alpha", "--python", planted.venv.python, "--json")
    assert done.returncode == 1, done.stdout
    (finding,) = _findings(done)
    assert finding["path"] == f"alpha/__pycache__/core.{TAG}.pyc"
    assert "RECORD does not list it" in str(finding["message"])


def test_a_pyc_linked_out_of_the_site_directory_reveals_nothing(planted: Planted, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(b"the host's secret\n")
    pyc = _pyc(planted)
    pyc.unlink()
    pyc.symlink_to(secret)
    done = run_cli("check", "beta", "--python", planted.venv.python, "--json")
    assert done.returncode == 1
    (finding,) = _findings(done)
    assert finding["found"] is None and "outside its site directory" in str(finding["message"])

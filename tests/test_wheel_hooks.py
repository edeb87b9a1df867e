"""Start-up hooks caught before install: wheels built like each 2026 attack, read from a file or by range.

The attack wheels carry harmless payloads in the attacks' shapes (litellm 1.82.8's
``litellm_init.pth``, the ``<pkg>-setup.pth`` of ossf/malicious-packages #1299, a PEP 829
``.start`` file, a ``sitecustomize.py``, a hook its RECORD does not vouch for). The lock
tests serve them from the 127.0.0.1 index of :mod:`range_server`, locked by uv; the network
tests read real wheels of PyPI by range.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import marshal
import os
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import build_wheel, data_dirname, find_uv, make_venv, record_hash, run_checked, run_cli
from range_server import RangeIndex, range_index
from test_known_hooks import SURVEY
from test_schema import validate

from wheeldoctor.fetch.remote import Fetcher
from wheeldoctor.fetch.wheel_read import read_local
from wheeldoctor.formats.lock_model import locked_wheel
from wheeldoctor.formats.wheel_hooks import HOOK_COUNT, hook_kind, site_relative
from wheeldoctor.formats.wheelfile import hook_of, read_wheel
from wheeldoctor.judge.locked import locked_wheel_files
from wheeldoctor.judge.preflight import preflight

UV_ENV = {"UV_LINK_MODE": "copy", "UV_NO_PROGRESS": "1", "UV_PYTHON_DOWNLOADS": "never"}
TARGET = ["--python-version", "3.12", "--platform", "manylinux_2_28_x86_64"]
#: The size of litellm 1.82.8's litellm_init.pth (BerriAI/litellm #24521).
LITELLM_PTH_SIZE = 34_628


def litellm_pth() -> bytes:
    """One line of ``LITELLM_PTH_SIZE`` bytes that decodes a base64 payload and runs it (a harmless one here)."""
    head, tail = b"import os, subprocess, sys; exec(__import__('base64').b64decode('", b"'))\n"
    room = LITELLM_PTH_SIZE - len(head) - len(tail)
    payload = base64.b64encode(b"x = 1  # harmless\n" * room)[: room - room % 4]
    return head + payload + b"=" * (room - len(payload)) + tail


SETUP_PTH = b"import os; exec(\"print('harmless')\")  # \x1b[2J\n"
#: What each attack wheel ships: (name, version, files, the hook's name below the site directory).
ATTACKS: list[tuple[str, str, dict[str, bytes], str]] = [
    ("litellm", "1.82.8", {"litellm/__init__.py": b"", "litellm_init.pth": litellm_pth()}, "litellm_init.pth"),
    (
        "pyphetools",
        "0.9.120",
        {"pyphetools/__init__.py": b"", "pyphetools-setup.pth": SETUP_PTH},
        "pyphetools-setup.pth",
    ),
    ("tracer", "1.0", {"tracer.start": b"tracer_boot:go\n", "tracer_boot.py": b"def go(): pass\n"}, "tracer.start"),
    ("sitehack", "1.0", {"sitehack/__init__.py": b"", "sitecustomize.py": b"print('harmless')\n"}, "sitecustomize.py"),
    (
        "datahook",
        "1.0",
        {"datahook/__init__.py": b"", f"{data_dirname('datahook', '1.0')}/purelib/datahook_boot.pth": b"import this\n"},
        "datahook_boot.pth",
    ),
]
PYTEST_COV = next(s for s in SURVEY if s[0] == "pytest-cov")


def _build_attacks(directory: Path) -> list[Path]:
    wheels = [build_wheel(directory, name, version, files) for name, version, files, _ in ATTACKS]
    # A path-only .pth its RECORD does not list: it runs nothing, yet nothing vouches for its bytes.
    wheels.append(
        build_wheel(
            directory,
            "unlisted",
            "1.0",
            {"unlisted/__init__.py": b"", "unlisted.pth": b"unlisted_extra\n"},
            record_override=lambda rows: [r for r in rows if r[0] != "unlisted.pth"],
        )
    )
    # pytest-cov's known hook, byte for byte, but its RECORD gives other bytes.
    name, version, file, data, _ = PYTEST_COV
    wheels.append(
        build_wheel(
            directory,
            name,
            version,
            {"pytest_cov/__init__.py": b"", file: data},
            record_override=lambda rows: [
                [p, record_hash(b"other"), s] if p == file else [p, h, s] for p, h, s in rows
            ],
        )
    )
    return wheels


#: The hook each attack wheel is flagged for, as the text report names it: wheel file / hook.
FLAGGED = [
    *(f"{n}-{v}-py3-none-any.whl/{hook}" for n, v, _, hook in ATTACKS),
    "unlisted-1.0-py3-none-any.whl/unlisted.pth",
    f"pytest_cov-{PYTEST_COV[1]}-py3-none-any.whl/pytest-cov.pth",
]


#: uv's target for a lock of the wheels above: CPython 3.12 on x86_64 Linux (``TARGET`` selects it).
LOCKED_FOR = ["--python-version", "3.12", "--python-platform", "x86_64-manylinux_2_28"]


def _pylock(index: RangeIndex | None, tmp_path: Path, *requirements: str, target: list[str] = LOCKED_FOR) -> Path:
    """A pylock.toml by ``uv pip compile --no-deps`` from ``index`` (None: PyPI) for ``target``."""
    wanted = tmp_path / "requirements.in"
    wanted.write_text("".join(r + "\n" for r in requirements))
    lock = tmp_path / "pylock.toml"
    where = ["--index-url", index.simple] if index is not None else []
    run_checked(
        [
            find_uv(),
            "pip",
            "compile",
            "-q",
            "--no-deps",
            *target,
            "--format",
            "pylock.toml",
            *where,
            wanted,
            "-o",
            lock,
        ],
        env=UV_ENV,
    )
    return lock


@pytest.fixture
def attacks(tmp_path: Path) -> Iterator[RangeIndex]:
    directory = tmp_path / "index"
    _build_attacks(directory)
    with range_index(directory) as served:
        yield served


@pytest.mark.unit
@pytest.mark.parametrize(
    ("target", "kind"),
    [
        ("litellm_init.pth", "pth"),
        (".hidden.pth", "pth"),
        ("tracer.start", "start"),
        ("sitecustomize.py", "sitecustomize"),
        ("usercustomize.pyc", "usercustomize"),
        ("sitecustomize.cpython-312-x86_64-linux-gnu.so", "sitecustomize"),
        ("sitecustomize/__init__.py", "sitecustomize"),
        ("<data>/lib/python3.12/site-packages/x.pth", "pth"),
        ("<data>/Lib/site-packages/x.pth", "pth"),
        ("pkg/inner.pth", None),
        ("pkg/sitecustomize.py", None),
        ("sitecustomize_extra.py", None),
        ("<scripts>/x.pth", None),
        ("<data>/share/x.pth", None),
        ("<headers>/sitecustomize.py", None),
    ],
)
def test_which_install_targets_are_start_up_hooks(target: str, kind: str | None) -> None:
    relative = site_relative(target)
    assert (hook_kind(relative) if relative is not None else None) == kind


@pytest.mark.unit
@pytest.mark.parametrize(
    ("member", "placed"),
    [
        ("evil.pth", ("evil.pth", "pth")),
        ("./evil.pth", ("evil.pth", "pth")),
        ("pkg/../evil.pth", ("evil.pth", "pth")),
        ("x-1.0.data/purelib/evil.pth", ("evil.pth", "pth")),
        ("x-1.0.data/platlib/sitecustomize.py", ("sitecustomize.py", "sitecustomize")),
        ("x-1.0.data/data/lib/python3.12/site-packages/evil.start", ("evil.start", "start")),
        ("x-1.0.data/scripts/evil.pth", None),
        ("x-1.0.dist-info/evil.pth", None),
        ("evil.pth/", None),
        ("../evil.pth", None),
        ("/evil.pth", None),
    ],
)
def test_which_wheel_members_are_start_up_hooks(member: str, placed: tuple[str, str] | None) -> None:
    assert hook_of(member, "x-1.0.dist-info") == placed


def test_each_attack_wheel_file_is_flagged_before_install(tmp_path: Path) -> None:
    wheels = _build_attacks(tmp_path / "wheels")
    done = run_cli("wheels", "--no-environment", *wheels)
    assert done.returncode == 1, done.stdout + done.stderr
    failing = [line.partition(": WD070: ")[0] for line in done.stdout.splitlines() if ": WD070: " in line]
    assert sorted(failing) == sorted(FLAGGED)
    assert f"  line 1: {SETUP_PTH.decode().rstrip()!a}" in done.stdout
    assert "\x1b" not in done.stdout
    assert "which its RECORD does not list with a digest" in done.stdout
    assert "whose bytes are not those its RECORD gives" in done.stdout
    assert "startup hooks: 7 found, 6 run code, 7 failing" in done.stdout


def test_each_attack_in_a_lock_is_flagged_from_ranges_in_every_format(attacks: RangeIndex, tmp_path: Path) -> None:
    names = [f"{n}=={v}" for n, v, _, _ in ATTACKS] + ["unlisted", "pytest-cov"]
    lock = _pylock(attacks, tmp_path, *names)
    done = run_cli("wheels", "--lock", lock, *TARGET, "--no-cache")
    assert done.returncode == 1, done.stdout + done.stderr
    failing = [line.partition(": WD070: ")[0] for line in done.stdout.splitlines() if ": WD070: " in line]
    assert sorted(failing) == sorted(FLAGGED)
    assert all(s.status == 206 for s in attacks.wheel_requests())
    json_done = run_cli("wheels", "--lock", lock, *TARGET, "--no-cache", "--format", "json")
    document = json.loads(json_done.stdout)
    validate(document)
    assert json_done.returncode == 1 and document["healthy"] is False
    flagged = {h["path"]: h for h in document["startup_hooks"] if h["finding"]}
    assert sorted(flagged) == sorted(FLAGGED)
    litellm = flagged["litellm-1.82.8-py3-none-any.whl/litellm_init.pth"]
    assert litellm["finding"]["code"] == "WD070" and litellm["lines"] == [1] and litellm["owner_intact"] is True
    assert len(litellm["finding"]["found"]) == len("sha256=") + 43
    sarif = run_cli("wheels", "--lock", lock, *TARGET, "--format", "sarif")  # from the cache: same hooks
    results = json.loads(sarif.stdout)["runs"][0]["results"]
    assert sarif.returncode == 1 and sum(r["ruleId"] == "WD070" for r in results) == len(FLAGGED)
    github = run_cli("wheels", "--lock", lock, *TARGET, "--format", "github")
    assert github.returncode == 1 and github.stdout.count("::error title=") >= len(FLAGGED)
    assert "litellm_init.pth" in github.stdout


def test_a_known_hook_passes_and_is_listed_and_an_accept_rule_pins_an_attack(tmp_path: Path) -> None:
    directory = tmp_path / "index"
    name, version, file, data, known = PYTEST_COV
    build_wheel(directory, name, version, {"pytest_cov/__init__.py": b"", file: data})
    with range_index(directory) as index:
        lock = _pylock(index, tmp_path, name)
        done = run_cli("wheels", "--lock", lock, *TARGET, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"startup hooks: 1 found, 1 run code, 0 failing; known: {file} ({known})" in done.stdout
    wheel = build_wheel(tmp_path / "attack", "litellm", "1.82.8", ATTACKS[0][2])
    found = "sha256=" + record_hash(litellm_pth()).partition("=")[2]
    rule = '[[tool.wheeldoctor.accept]]\ndistribution = "litellm"\npath = "litellm_init.pth"\ncode = "WD070"\n'
    (tmp_path / "pyproject.toml").write_text(rule + f'found = "{found}"\nreason = "reviewed"\n')
    accepted = run_cli("wheels", "--no-environment", wheel, cwd=tmp_path)
    assert accepted.returncode == 0, accepted.stdout
    assert "1 failing" not in accepted.stdout and "1 accepted" in accepted.stdout
    (tmp_path / "pyproject.toml").write_text(rule + f'found = "sha256={"A" * 43}"\nreason = "other bytes"\n')
    assert run_cli("wheels", "--no-environment", wheel, cwd=tmp_path).returncode == 1


def test_a_20_mib_wheel_with_a_hook_costs_under_a_tenth_of_its_bytes(tmp_path: Path) -> None:
    # The hook first, far from the central directory at the end: it takes a range request of its own.
    files = {"big_boot.pth": litellm_pth(), **{f"big/part{i}.bin": os.urandom(5 << 20) for i in range(4)}}
    files["big/__init__.py"] = b""
    wheel = build_wheel(tmp_path / "index", "big", "1.0", files)
    data = wheel.read_bytes()
    with range_index(wheel.parent) as index:
        locked = locked_wheel(
            "big",
            filename=wheel.name,
            url=index.file_url(wheel.name),
            path=None,
            sha256=hashlib.sha256(data).hexdigest(),
            size=len(data),
            base="/",
        )
        (fetched,) = Fetcher(cache_dir=str(tmp_path / "cache")).fetch_all([locked])
        sent = sum(s.sent for s in index.wheel_requests())
        assert [(h.relative, h.data) for h in fetched.hooks] == [("big_boot.pth", litellm_pth())]
        assert sent == fetched.fetched and sent < 0.10 * len(data), (sent, len(data))
        assert any(s.range is not None and not s.range.startswith("bytes=-") for s in index.wheel_requests())
        index.clear()
        (cached,) = Fetcher(cache_dir=str(tmp_path / "cache")).fetch_all([locked])
        assert index.log == [] and cached.source == "cache" and cached.hooks == fetched.hooks


def test_hooks_past_the_count_are_not_read_and_fail_as_running_code(tmp_path: Path) -> None:
    files = {f"p{i:03}.pth": b"some_dir\n" for i in range(HOOK_COUNT + 1)}
    wheel = build_wheel(tmp_path, "many", "1.0", files)
    result = preflight([read_wheel(str(wheel))], None)
    unread = [h for h in result.hooks.failing if h.error is not None]
    assert [h.relative for h in unread] == [f"p{HOOK_COUNT:03}.pth"]
    assert "could not be read" in (unread[0].finding.message if unread[0].finding else "")
    assert not result.healthy


def test_check_lock_judges_the_hooks_the_lock_would_add(attacks: RangeIndex, tmp_path: Path) -> None:
    lock = _pylock(attacks, tmp_path, "tracer", "litellm", target=["--python", sys.executable])
    venv = make_venv(tmp_path / "venv")
    run_checked(
        [find_uv(), "pip", "install", "-q", "--python", venv.python, "--index-url", attacks.simple, "tracer"],
        env=UV_ENV,
    )
    done = run_cli("check", "--all", "--python", venv.python, "--lock", lock, "--no-cache")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "litellm-1.82.8-py3-none-any.whl/litellm_init.pth: WD070: " in done.stdout
    # tracer is installed as locked: its .start is the installed one, judged once, not again from the lock.
    assert "tracer-1.0-py3-none-any.whl/tracer.start" not in done.stdout
    assert "tracer.start: WD070: " in done.stdout


NETWORK_KNOWN = [
    ("coverage==7.17.4", "a1_coverage.pth"),
    ("pytest-cov==5.0.0", "pytest-cov.pth"),
    ("nvidia-cutlass-dsl==4.8.1", "nvidia_cutlass_dsl_packages.pth"),
]


@pytest.mark.network
def test_real_known_hooks_pass_from_pypi_by_range(tmp_path: Path) -> None:
    lock = _pylock(None, tmp_path, *(spec for spec, _ in NETWORK_KNOWN))
    done = run_cli("wheels", "--lock", lock, *TARGET, "--no-cache", "--format", "json")
    document = json.loads(done.stdout)
    assert done.returncode == 0, [h["finding"] for h in document["startup_hooks"]]
    known = {h["path"].rpartition("/")[2]: h["known"] for h in document["startup_hooks"]}
    assert all(known.get(hook) for _, hook in NETWORK_KNOWN), known
    assert document["fetched"]["by_source"] == {"range": len(NETWORK_KNOWN)}


def test_fix_lock_installs_nothing_when_the_lock_would_bring_a_failing_hook(tmp_path: Path) -> None:
    directory = tmp_path / "index"
    build_wheel(directory, "litellm", "1.0", {"litellm/__init__.py": b""})
    build_wheel(directory, "litellm", "1.82.8", ATTACKS[0][2])
    with range_index(directory) as index:
        lock = _pylock(index, tmp_path, "litellm==1.82.8", target=["--python", sys.executable])
        venv = make_venv(tmp_path / "venv")
        run_checked(
            [find_uv(), "pip", "install", "-q", "--python", venv.python, "--index-url", index.simple, "litellm==1.0"],
            env=UV_ENV,
        )
        installers = {**UV_ENV, "UV_INDEX_URL": index.simple, "PIP_INDEX_URL": index.simple}
        planned = run_cli("fix", "--all", "--python", venv.python, "--lock", lock, "--dry-run", env=installers)
        assert "litellm-1.82.8-py3-none-any.whl#sha256=" in planned.stdout  # the plan would reinstall the locked wheel
        fixed = run_cli("fix", "--all", "--python", venv.python, "--lock", lock, "--yes", env=installers)
    assert fixed.returncode == 2, fixed.stdout + fixed.stderr
    assert "start-up hook(s) that fail (litellm-1.82.8-py3-none-any.whl/litellm_init.pth): nothing was run" in (
        fixed.stderr
    )
    assert not (venv.site_packages / "litellm_init.pth").exists()
    assert (venv.dist_info("litellm") / "METADATA").read_text().count("Version: 1.0\n") == 1


def test_a_hook_compressed_another_way_is_not_read_and_fails_as_running_code(tmp_path: Path) -> None:
    built = build_wheel(tmp_path / "built", "packed", "1.0", {"packed/__init__.py": b"", "packed.pth": b"some_dir\n"})
    wheel = tmp_path / built.name
    with zipfile.ZipFile(built) as source, zipfile.ZipFile(wheel, "w") as target:
        for info in source.infolist():
            member = source.read(info)
            info.compress_type = zipfile.ZIP_BZIP2 if info.filename == "packed.pth" else zipfile.ZIP_DEFLATED
            target.writestr(info, member)
    data = wheel.read_bytes()
    locked = locked_wheel(
        "packed", filename=wheel.name, url=None, path=None, sha256=hashlib.sha256(data).hexdigest(), size=len(data),
        base="/",
    )  # fmt: skip
    fetched = read_local(locked, str(wheel))
    assert [(h.relative, h.data) for h in fetched.hooks] == [("packed.pth", None)]
    assert "compression method 12" in (fetched.hooks[0].error or "")
    result = preflight(locked_wheel_files([fetched], []), None)
    (hook,) = result.hooks.failing
    assert hook.finding is not None and "could not be read (packed.pth uses compression method 12" in (
        hook.finding.message
    )


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_a_hook_named_with_control_characters_reaches_no_terminal_raw(tmp_path: Path, fmt: str) -> None:
    name = "\x1b[2Jevil\n.pth"
    built = build_wheel(tmp_path / "built", "evil", "1.0", {"evil/__init__.py": b"", "placeholder.pth": b"import os\n"})
    wheel = tmp_path / built.name
    with zipfile.ZipFile(built) as source, zipfile.ZipFile(wheel, "w") as target:
        for info in source.infolist():
            data = source.read(info).replace(b"placeholder.pth", f'"{name}"'.encode())
            target.writestr(name if info.filename == "placeholder.pth" else info.filename, data)
    done = run_cli("wheels", "--no-environment", wheel, "--format", fmt)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "\x1b" not in done.stdout and "\\x1b[2Jevil\\n.pth" in done.stdout


def test_wheels_names_the_config_that_accepted_a_hook_and_isolated_reads_none(tmp_path: Path) -> None:
    """The accept rule a pull request adds to pyproject.toml is said in every format; --isolated ignores it."""
    (tmp_path / ".git").mkdir()
    wheel = build_wheel(tmp_path / "attack", "litellm", "1.82.8", ATTACKS[0][2])
    found = "sha256=" + record_hash(litellm_pth()).partition("=")[2]
    (tmp_path / "pyproject.toml").write_text(
        '[tool.wheeldoctor]\n[[tool.wheeldoctor.accept]]\ndistribution = "litellm"\npath = "litellm_init.pth"\n'
        f'code = "WD070"\nfound = "{found}"\nreason = "reviewed"\n'
    )
    said = f"{tmp_path / 'pyproject.toml'} (narrows: 1 accept rule(s))"
    text = run_cli("wheels", "--no-environment", wheel, cwd=tmp_path)
    assert text.returncode == 0 and f"config: {said}" in text.stdout.splitlines(), text.stdout
    document = json.loads(run_cli("wheels", "--no-environment", wheel, "--json", cwd=tmp_path).stdout)
    assert (document["config"], document["narrowed"]) == (str(tmp_path / "pyproject.toml"), ["1 accept rule(s)"])
    validate(document)
    sarif = json.loads(run_cli("wheels", "--no-environment", wheel, "--format", "sarif", cwd=tmp_path).stdout)
    assert sarif["runs"][0]["properties"]["config"] == said
    isolated = run_cli("wheels", "--no-environment", wheel, "--isolated", cwd=tmp_path)
    assert isolated.returncode == 1 and "config:" not in isolated.stdout


@pytest.mark.parametrize(
    "member", ["sitecustomize/__init__.pyc", "usercustomize/__init__.pyc", "sitecustomize/__init__.abi3.so"]
)
def test_a_customize_package_without_source_is_a_hook_in_a_wheel_and_installed(tmp_path: Path, member: str) -> None:
    """The import system runs a package's sourceless ``__init__.pyc``, or an extension ``__init__``, as readily."""
    code = compile("import sys; sys.stderr.write('HOOK RAN\\n')", "x", "exec")
    payload = importlib.util.MAGIC_NUMBER + b"\0" * 12 + marshal.dumps(code)
    wheel = build_wheel(tmp_path / "w", "sneaky", "1.0", {"sneaky/__init__.py": b"", member: payload})
    said = run_cli("wheels", "--no-environment", wheel)
    assert said.returncode == 1, said.stdout
    assert f"sneaky-1.0-py3-none-any.whl/{member}: WD070" in said.stdout, said.stdout
    site = tmp_path / "site"
    (site / member).parent.mkdir(parents=True)
    (site / member).write_bytes(payload)
    checked = run_cli("check", "--all", "--path", site)
    assert checked.returncode == 1, checked.stdout
    assert f"{member}: WD071" in checked.stdout, checked.stdout

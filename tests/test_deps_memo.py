"""The deps memo: a run whose inputs are those of an earlier run takes its judgement, and says the same.

Every environment is a real venv (uv and pip, ``--no-deps`` so that conflicts stay), every
run a real ``python -m wheeldoctor deps`` process. A hit is told from a miss by what it
imports: a hit parses no requirement, so packaging's requirement parser is never imported.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest
from helpers import (
    Venv,
    WheelFactory,
    build_wheel,
    copy_venv,
    find_interpreter,
    find_uv,
    make_venv,
    pip_install,
    run_checked,
    run_cli,
    uv_install,
)

from wheeldoctor.engine import cache, store
from wheeldoctor.engine.deps_memo import DepsMemo, memo_for
from wheeldoctor.judge.compat import check_compatibility
from wheeldoctor.judge.deps import check_dependencies
from wheeldoctor.judge.requirements import Requirements
from wheeldoctor.model.environment import Environment
from wheeldoctor.where.target import Target, load_target

FORMATS = ("text", "json", "github", "junit", "sarif")
PARSERS = {"packaging.requirements", "packaging.markers", "packaging.specifiers"}


@pytest.fixture(scope="session")
def conflicted_template(tmp_path_factory: pytest.TempPathFactory, uv_bin: Path, uv_cache: Path) -> Venv:
    """Missing and incompatible requirements, one through an extra, an unmet Requires-Python, a bad line."""
    root = tmp_path_factory.mktemp("deps-memo")
    venv = make_venv(root / "venv", uv_bin=uv_bin, cache_dir=uv_cache)
    wheel = partial(build_wheel, root / "wheels")
    pip_install(
        venv,
        "--no-index",
        "--no-deps",
        "--ignore-requires-python",
        wheel("lib", "1.0", {"lib/__init__.py": b""}),
        wheel("helper", "1.0", {"helper/__init__.py": b""}, extras={"fast": ["speedy>=3"]}),
        wheel("future", "1.0", {"future/__init__.py": b""}, requires_python=">=3.99"),
    )
    # pip cannot evaluate the last marker while installing; uv takes it.
    app = ["lib>=2", "gone>=1", "helper[fast]", 'lib; os_name ~= "x"']
    uv_install(venv, "--no-deps", wheel("app", "1.0", {"app/__init__.py": b""}, requires=app), uv_bin=uv_bin)
    metadata = venv.dist_info("lib") / "METADATA"
    metadata.write_text(metadata.read_text() + "Requires-Dist: this is [not valid\n")
    return venv


@pytest.fixture
def conflicted(conflicted_template: Venv, tmp_path: Path) -> Venv:
    """This test's own copy of the conflicted venv (built once)."""
    return copy_venv(conflicted_template, tmp_path / "venv")


def deps(venv: Venv, *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """``wheeldoctor deps --python VENV ARGS`` as a process: its outcome and the modules it imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "wheeldoctor", "deps", "--python", str(venv.python), *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr[-2000:]
    times = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    modules = {line.rsplit("|", 1)[1].strip() for line in times[1:]}
    others = "".join(line + "\n" for line in done.stderr.splitlines() if not line.startswith("import time:"))
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout, others), modules


def entries(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob("*.deps"))


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_hit_says_byte_for_byte_what_a_miss_says(conflicted: Venv, cache_dir: Path, fmt: str) -> None:
    uncached, _ = deps(conflicted, "--format", fmt, "--no-cache")
    assert uncached.returncode == 1 and not cache_dir.exists()  # --no-cache keeps nothing
    missed, imported = deps(conflicted, "--format", fmt)
    assert imported >= PARSERS and len(entries(cache_dir)) == 1
    hit, imported = deps(conflicted, "--format", fmt)
    assert not PARSERS & imported  # nothing was parsed: the judgement was the kept one
    for run in (missed, hit):
        assert (run.returncode, run.stdout, run.stderr) == (uncached.returncode, uncached.stdout, uncached.stderr)


def test_the_report_has_every_kind_of_finding(conflicted: Venv, cache_dir: Path) -> None:
    """The fixture plants what the memo must keep: so the byte comparison above covers each."""
    deps(conflicted)
    hit, _ = deps(conflicted, "--json")
    document = json.loads(hit.stdout)
    text = json.dumps(document)
    for code in (
        "WD040",
        "WD041",
        "WD030",
        "WD033",
        "speedy",
        "this is [not valid",
        ">=3.99",
        "marker cannot be evaluated",
    ):
        assert code in text, code


def _kept_and_changed(venv: Venv, change: str, wheel_factory: WheelFactory) -> None:
    metadata = venv.dist_info("lib") / "METADATA"
    if change == "version":
        metadata.write_text(metadata.read_text().replace("Version: 1.0", "Version: 2.5"))
    elif change == "requirement":
        metadata.write_text(metadata.read_text() + "Requires-Dist: absent-too>=1\n")
    elif change == "added":
        uv_install(venv, "--no-deps", wheel_factory("gone", "1.0", {"gone/__init__.py": b""}))
    elif change == "removed":
        run_checked([find_uv(), "pip", "uninstall", "--python", venv.python, "helper"])
    else:
        raise AssertionError(change)


@pytest.mark.parametrize("change", ["version", "requirement", "added", "removed"])
def test_a_changed_environment_is_judged_again(
    conflicted: Venv, cache_dir: Path, wheel_factory: WheelFactory, change: str
) -> None:
    deps(conflicted, "--json")
    before, _ = deps(conflicted, "--json")
    _kept_and_changed(conflicted, change, wheel_factory)
    after, imported = deps(conflicted, "--json")
    fresh, _ = deps(conflicted, "--json", "--no-cache")
    assert imported >= PARSERS  # judged again
    assert after.stdout == fresh.stdout != before.stdout


def test_each_input_is_in_the_key(conflicted: Venv, cache_dir: Path) -> None:
    """The same environment with another interpreter's markers or tags, or any distribution read differently, misses."""
    env = load_target(Target(python=str(conflicted.python)), with_tags=True, with_records=False)
    memo = DepsMemo(str(cache_dir), "target")
    assert memo.get(env) is None
    judgement = check_dependencies(Requirements.of(env)), check_compatibility(env)
    assert memo.keep(env, judgement)
    assert DepsMemo(str(cache_dir), "target").get(env) == judgement
    assert DepsMemo(str(cache_dir), "another target").get(env) is None
    markers = tuple((k, "3.99" if k == "python_version" else v) for k, v in env.markers)
    first, *rest = env.distributions
    assert first.metadata is not None
    changed: list[Environment] = [
        replace(env, markers=markers),
        replace(env, tags=(*(env.tags or ()), "py2-none-any")),
        replace(env, tags=None),
        replace(env, python="/elsewhere/bin/python"),
        replace(env, paths=env.paths[::-1]),
        replace(env, distributions=tuple(rest)),
        replace(env, distributions=(*rest, first)),
        replace(env, distributions=(replace(first, active=False), *rest)),
        replace(env, distributions=(replace(first, installer="conda"), *rest)),
        replace(env, distributions=(replace(first, wheel_tags=("py2-none-any",)), *rest)),
        replace(env, distributions=(replace(first, metadata=replace(first.metadata, requires_python="<3")), *rest)),
        replace(env, distributions=(replace(first, metadata=replace(first.metadata, provides_extra=("x",))), *rest)),
        replace(env, distributions=(replace(first, metadata=None), *rest)),
    ]
    for other in changed:
        assert DepsMemo(str(cache_dir), "target").get(other) is None, other


def test_another_interpreter_at_the_same_target_is_judged_again(
    tmp_path: Path, cache_dir: Path, wheel_factory: WheelFactory, uv_bin: Path
) -> None:
    """A venv made again in place for another Python: same ``--python``, other markers and tags."""
    versions = [v for v in ("3.10", "3.11", "3.12", "3.13") if find_interpreter(v) is not None]
    if len(versions) < 2:
        pytest.skip("needs two Python versions")
    wheel = wheel_factory(
        "only-old", "1.0", {"only_old/__init__.py": b""}, requires=[f'gone; python_version == "{versions[0]}"']
    )
    outputs = []
    for version in versions[:2]:
        shutil.rmtree(tmp_path / "venv", ignore_errors=True)
        venv = make_venv(tmp_path / "venv", str(find_interpreter(version)), uv_bin=uv_bin)
        uv_install(venv, "--no-deps", wheel)
        run, imported = deps(venv, "--json")
        assert imported >= PARSERS
        outputs.append(json.loads(run.stdout)["summary"])
    assert outputs[0] != outputs[1]


def test_options_that_name_another_target_keep_their_own(conflicted: Venv, cache_dir: Path) -> None:
    """``--path`` judges with the markers of the layout's interpreter, and is kept apart from ``--python``."""
    deps(conflicted)
    site = str(conflicted.site_packages)
    by_path = run_cli("deps", "--json", "--path", site)
    again = run_cli("deps", "--json", "--path", site)
    fresh = run_cli("deps", "--json", "--path", site, "--no-cache")
    assert by_path.stdout == again.stdout == fresh.stdout
    assert len(entries(cache_dir)) == 2


def _forge(conflicted: Venv, cache_dir: Path) -> tuple[Path, Environment, DepsMemo]:
    env = load_target(Target(python=str(conflicted.python)), with_tags=True, with_records=False)
    memo = memo_for(str(cache_dir), str(conflicted.python), ())
    assert memo is not None
    return Path(cache.entry_path(str(cache_dir), memo._target, ".deps")), env, memo


def test_no_cache_never_reads_the_memo(conflicted: Venv, cache_dir: Path) -> None:
    """A judgement kept under the right key says "healthy": a run with the cache believes it; ``--no-cache`` not."""
    path, env, memo = _forge(conflicted, cache_dir)
    judgement = check_dependencies(Requirements.of(env)), check_compatibility(env)
    healthy = (replace(judgement[0], conflicts=(), problems=()), replace(judgement[1], findings=()))
    assert memo.keep(env, healthy) and path.is_file()
    believed, _ = deps(conflicted, "--json")
    bypassed, _ = deps(conflicted, "--json", "--no-cache")
    assert believed.returncode == 0 and bypassed.returncode == 1


def _sealed(value: object, header: bytes | None = None) -> bytes:
    return store.seal(header or store.header("deps", 1), value)


@pytest.mark.parametrize(
    "damage",
    [
        "truncated",
        "flipped",
        "other code",
        "not a tuple",
        "bad row",
        "bad code",
        "bad kind",
        "wrong target",
        "wrong key",
    ],
)
def test_a_forged_or_damaged_entry_is_a_miss(conflicted: Venv, cache_dir: Path, damage: str) -> None:
    expected, _ = deps(conflicted, "--json", "--no-cache")
    path, env, memo = _forge(conflicted, cache_dir)
    judgement = check_dependencies(Requirements.of(env)), check_compatibility(env)
    assert judgement[0].conflicts and memo.keep(env, judgement)
    data = path.read_bytes()
    target, digest, _, _, kept = store.unseal(store.header("deps", 1), data)  # type: ignore[misc]
    conflicts, problems, *others = kept
    row = conflicts[0]
    other_code = store.header("deps", 1).replace(store.code(), b"0" * len(store.code()))
    forged = {
        "truncated": data[:-7],
        "flipped": data[:-1] + bytes([data[-1] ^ 1]),
        "other code": _sealed((target, digest, (), (), kept), other_code),
        "not a tuple": _sealed([target, digest, (), (), kept]),
        "bad row": _sealed((target, digest, (), (), (((*row[:-1], [1]), *conflicts[1:]), problems, *others))),
        "bad code": _sealed((target, digest, (), (), (conflicts, (("WD999", *problems[0][1:]),), *others))),
        "bad kind": _sealed((target, digest, (), (), (((*row[:5], "gone", *row[6:]),), problems, *others))),
        "wrong target": _sealed(("elsewhere", digest, (), (), ((), (), *others))),
        "wrong key": _sealed((target, "0" * 64, (), (), ((), (), *others))),
    }[damage]
    path.write_bytes(forged)
    assert memo.get(env) is None
    run, imported = deps(conflicted, "--json")
    assert imported >= PARSERS
    assert (run.returncode, run.stdout) == (expected.returncode, expected.stdout)


def test_an_untrusted_cache_directory_is_not_used(conflicted: Venv, cache_dir: Path) -> None:
    _, env, memo = _forge(conflicted, cache_dir)
    judgement = check_dependencies(Requirements.of(env)), check_compatibility(env)
    assert memo.keep(env, judgement)
    os.chmod(cache_dir, 0o777)  # writable by others: cache.usable refuses it
    try:
        assert memo.get(env) is None
    finally:
        os.chmod(cache_dir, 0o700)
    assert memo.get(env) == judgement

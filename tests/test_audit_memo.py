"""The audit memo: an audit taken from it is the one the walk finds, and any change it depends on is seen."""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    Venv,
    build_wheel,
    cli_json,
    copy_venv,
    make_venv,
    pip_install,
    uv_install,
)

from wheeldoctor.engine import audit, cache, store, verify
from wheeldoctor.engine.audit import audit_data
from wheeldoctor.model.environment import Environment
from wheeldoctor.where import ownership, system_files, unowned
from wheeldoctor.where.environment import Reading, load_environment
from wheeldoctor.where.filesystem import ReadError


def _settle() -> None:
    """Wait until just-written files and directories are old enough to be kept (see cache.SETTLE_NS)."""
    time.sleep(2 * cache.SETTLE_NS / 1e9)


@pytest.fixture(scope="session")
def installed_template(tmp_path_factory: pytest.TempPathFactory, uv_bin: Path, uv_cache: Path) -> Venv:
    """A venv with a package by pip and one by uv, a start-up hook, and files nobody recorded: built once."""
    root = tmp_path_factory.mktemp("audit-memo")
    venv = make_venv(root / "venv", uv_bin=uv_bin, cache_dir=uv_cache)
    files = {"alpha/__init__.py": b"", "alpha/sub/deep/core.py": b"x = 1\n", "alpha/data/table.csv": b"a,b\n"}
    pip_install(venv, "--no-deps", build_wheel(root / "wheels", "alpha", "1.0", files))
    beta = build_wheel(root / "wheels", "beta", "2.0", {"beta.py": b"", "beta_hook.pth": b"import beta\n"})
    uv_install(venv, "--no-deps", beta, uv_bin=uv_bin, cache_dir=uv_cache)
    site = venv.site_packages
    for planted in ("sneaky.py", "notes.txt", "evilpkg/__init__.py", "alpha/sub/deep/extra.py"):
        (site / planted).parent.mkdir(parents=True, exist_ok=True)
        (site / planted).write_text("")
    return venv


@pytest.fixture
def installed(installed_template: Venv, tmp_path: Path) -> Venv:
    """This test's own copy of the template, settled."""
    venv = copy_venv(installed_template, tmp_path / "venv")
    _settle()
    return venv


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One item per walk of a site directory done in this process (a memo's audit does none)."""
    done: list[int] = []
    real = unowned._walk_from

    def counting(*args: Any, **kwargs: Any) -> Any:
        done.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(unowned, "_walk_from", counting)
    return done


def _env(venv: Venv) -> Environment:
    return load_environment("test", [str(venv.site_packages)], [str(venv.prefix)], reading=Reading(defer_records=True))


def _hooks(venv: Venv) -> list[str]:
    return [str(venv.site_packages / "beta_hook.pth")]


def _audit(venv: Venv, cache_dir: Path | None) -> list[Any]:
    """The audit, its lists in order."""
    found = audit_data(_env(venv), _hooks(venv), None if cache_dir is None else str(cache_dir))
    return [sorted(part) if isinstance(part, list) else part for part in found]


def _unowned(audit: list[Any], venv: Venv) -> set[str]:
    return {Path(path).relative_to(venv.site_packages).as_posix() for path, *_ in audit[1]}


def test_a_second_audit_takes_the_memo_and_finds_the_same(installed: Venv, tmp_path: Path, walks: list[int]) -> None:
    plain = _audit(installed, None)
    assert _unowned(plain, installed) == {"sneaky.py", "notes.txt", "evilpkg/__init__.py", "alpha/sub/deep/extra.py"}
    assert [owner[1] for owner in plain[0]] == ["beta"]  # the hook's owner
    walks.clear()
    cache_dir = tmp_path / "cache"
    assert _audit(installed, cache_dir) == plain and walks == [1]  # nothing kept yet: walked
    assert len(list(cache_dir.glob("*.audit"))) == 1
    walks.clear()
    assert _audit(installed, cache_dir) == plain
    assert walks == []  # taken from the memo


def _new_unowned_deep(site: Path) -> None:
    (site / "alpha" / "sub" / "deep" / "planted.py").write_text("")


def _unowned_file_removed(site: Path) -> None:
    (site / "alpha" / "sub" / "deep" / "extra.py").unlink()


def _file_becomes_directory(site: Path) -> None:
    (site / "notes.txt").unlink()
    (site / "notes.txt").mkdir()
    (site / "notes.txt" / "inside.py").write_text("")


def _record_rewritten_in_place(site: Path) -> None:
    """RECORD loses a row, written in place: no directory changes, only RECORD's own fingerprint."""
    [dist_info] = site.glob("alpha-*.dist-info")
    record = dist_info / "RECORD"
    text = record.read_text()
    kept = [line for line in text.splitlines(keepends=True) if not line.startswith("alpha/data/table.csv,")]
    assert len(kept) < len(text.splitlines())
    with open(record, "r+") as f:
        f.write("".join(kept))
        f.truncate()


def _top_level_directory_planted(site: Path) -> None:
    (site / "newtop" / "inner").mkdir(parents=True)
    (site / "newtop" / "inner" / "mod.py").write_text("")


def _hook_unrecorded(site: Path) -> None:
    """beta's RECORD no longer lists its hook: the hook has no owner now."""
    [dist_info] = site.glob("beta-*.dist-info")
    record = dist_info / "RECORD"
    record.write_text("".join(line for line in record.read_text().splitlines(True) if "beta_hook.pth" not in line))


CHANGES: dict[str, Callable[[Path], None]] = {
    "new unowned file deep in a package": _new_unowned_deep,
    "unowned file removed": _unowned_file_removed,
    "file replaced by a directory": _file_becomes_directory,
    "RECORD rewritten in place": _record_rewritten_in_place,
    "top-level directory planted": _top_level_directory_planted,
    "hook no longer recorded": _hook_unrecorded,
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_change_is_seen(installed: Venv, tmp_path: Path, walks: list[int], change: str) -> None:
    cache_dir = tmp_path / "cache"
    before = _audit(installed, cache_dir)
    assert _audit(installed, cache_dir) == before  # kept now
    CHANGES[change](installed.site_packages)
    walks.clear()
    after = _audit(installed, cache_dir)
    assert walks == [1]  # walked again
    assert after == _audit(installed, None) != before  # what the files say now, not what they said


def test_other_hooks_are_a_miss(installed: Venv, tmp_path: Path, walks: list[int]) -> None:
    cache_dir = tmp_path / "cache"
    _audit(installed, cache_dir)
    walks.clear()
    assert audit_data(_env(installed), [], str(cache_dir))[0] == []
    assert walks == [1]


def test_what_changed_too_recently_is_not_kept(installed: Venv, tmp_path: Path, walks: list[int]) -> None:
    (installed.site_packages / "alpha" / "sub" / "fresh.py").write_text("")  # moves alpha/sub just now
    cache_dir = tmp_path / "cache"
    _audit(installed, cache_dir)
    assert not list(cache_dir.glob("*.audit"))
    _settle()
    _audit(installed, cache_dir)
    walks.clear()
    _audit(installed, cache_dir)
    assert walks == []


def _memo_file(cache_dir: Path) -> Path:
    [found] = cache_dir.glob("*.audit")
    return found


def _rewrite_kept(cache_dir: Path, change: Callable[..., tuple[object, ...]]) -> None:
    """Write the memo again, sealed as ever (checksum and header hold), with ``change`` of what it kept."""
    memo = _memo_file(cache_dir)
    data = memo.read_bytes()
    header = data[: data.index(b"\n") + 1]
    kept = store.unseal(header, data)
    assert isinstance(kept, tuple)
    memo.write_bytes(store.seal(header, change(*kept)))


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],
        lambda data: data[:-1] + bytes([data[-1] ^ 1]),
        lambda data: b"",
        lambda data: data.replace(b"wheeldoctor-audit 3 ", b"wheeldoctor-audit 2 ", 1),
    ],
    ids=["truncated", "flipped", "empty", "another version"],
)
def test_a_damaged_memo_is_a_miss_and_is_written_again(
    installed: Venv, tmp_path: Path, walks: list[int], damage: Callable[[bytes], bytes]
) -> None:
    cache_dir = tmp_path / "cache"
    plain = _audit(installed, cache_dir)
    memo = _memo_file(cache_dir)
    memo.write_bytes(damage(memo.read_bytes()))
    walks.clear()
    assert _audit(installed, cache_dir) == plain and walks == [1]
    walks.clear()
    assert _audit(installed, cache_dir) == plain and walks == []  # written again


@pytest.mark.parametrize(
    "result",
    [None, [], [[], [], [], 0], [[], [("a", "b", None)], [], 0, []], [[], [], [], "0", []], {"a": 1}],
    ids=["none", "empty", "short", "short-row", "count-as-text", "dict"],
)
def test_a_kept_result_of_another_shape_is_a_miss(
    installed: Venv, tmp_path: Path, walks: list[int], result: object
) -> None:
    """A memo whose checksum and header hold but whose result is not an audit's (never written by us)."""
    cache_dir = tmp_path / "cache"
    plain = _audit(installed, cache_dir)
    _rewrite_kept(cache_dir, lambda key, inputs, paths, fingerprints, _: (key, inputs, paths, fingerprints, result))
    walks.clear()
    assert _audit(installed, cache_dir) == plain and walks == [1]


def test_nothing_is_kept_for_an_environment_read_with_system_lists(installed: Venv, tmp_path: Path) -> None:
    """dpkg's or conda's lists were read before the audit could fingerprint them."""
    env = _env(installed)
    assert audit._audit_memo(env, (), str(tmp_path)) is not None
    listed = Environment(**{**{f: getattr(env, f) for f in env.__dataclass_fields__}, "system_files": {"/x": "pkg"}})
    assert audit._audit_memo(listed, (), str(tmp_path)) is None
    assert audit._audit_memo(env, (), None) is None


def test_check_all_with_the_memo_finds_what_no_cache_finds(
    installed: Venv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WHEELDOCTOR_CACHE_DIR", str(tmp_path / "cache"))
    documents = [cli_json("check", "--all", "--python", installed.python)[1] for _ in range(3)]
    assert list((tmp_path / "cache").glob("*.audit"))
    (installed.site_packages / "alpha" / "sub" / "deep" / "planted.py").write_text("")
    documents.append(cli_json("check", "--all", "--python", installed.python)[1])
    fresh = cli_json("check", "--all", "--python", installed.python, "--no-cache")[1]
    for doc in (*documents, fresh):
        doc.pop("elapsed", None)
    assert documents[0] == documents[1] == documents[2] != documents[3]
    assert documents[3]["unowned"] == fresh["unowned"] and documents[3]["startup_hooks"] == fresh["startup_hooks"]


@pytest.mark.parametrize("jobs", [1, 2, 4])
def test_the_audit_is_a_task_of_the_verifications_workers_and_its_memo_holds_there(
    installed: Venv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forks: list[int], jobs: int
) -> None:
    """Forked workers verify (as for a big environment) and one of them audits: the same audit as in one
    process, taken from the memo while it holds (the memo is not written again), walked again once not."""
    from wheeldoctor.commands import check as command

    def audit(cache_dir: Path | None) -> tuple[object, object]:
        store_dir = None if cache_dir is None else str(cache_dir)
        result = command.run_check(
            _env(installed), command.CheckRequest(jobs=jobs, cache_dir=store_dir, processes=True)
        )
        return result.unowned, result.hooks

    here = audit(tmp_path / "threads")  # too few files to fork: this process audits
    assert not forks and list((tmp_path / "threads").glob("*.audit"))
    monkeypatch.setattr(verify, "PROCESS_MIN_FILES", 1)
    cache_dir = tmp_path / "cache"
    assert audit(cache_dir) == here and len(forks) == jobs
    written = _memo_file(cache_dir).stat().st_mtime_ns
    assert audit(cache_dir) == here
    assert _memo_file(cache_dir).stat().st_mtime_ns == written  # it held: nothing was written again
    (installed.site_packages / "alpha" / "sub" / "deep" / "planted.py").write_text("")
    changed = audit(cache_dir)
    assert changed != here and audit(None) == changed


def test_the_unowned_files_come_in_path_order(installed: Venv) -> None:
    """The listing must not change with the directory order."""
    paths = [row[0] for row in audit_data(_env(installed), ())[1]]
    assert paths == sorted(paths) and len(paths) >= 4


def test_no_cache_keeps_no_audit(installed: Venv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WHEELDOCTOR_CACHE_DIR", str(tmp_path / "cache"))
    cli_json("check", "--all", "--python", installed.python, "--no-cache")
    assert not list((tmp_path / "cache").glob("*.audit"))
    cli_json("check", "--all", "--python", installed.python)
    assert list((tmp_path / "cache").glob("*.audit"))


def test_a_listing_that_fails_for_a_passing_reason_is_not_kept(
    installed: Venv, tmp_path: Path, walks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = _audit(installed, None)
    real = os.scandir
    failing = str(installed.site_packages / "evilpkg")

    def scandir(path: Any) -> Any:
        if path == failing:
            raise OSError(errno.EMFILE, "Too many open files")
        return real(path)

    monkeypatch.setattr(unowned.os, "scandir", scandir)
    cache_dir = tmp_path / "cache"
    assert _audit(installed, cache_dir) != plain  # evilpkg/ unseen this once
    assert not list(cache_dir.glob("*.audit"))
    monkeypatch.setattr(unowned.os, "scandir", real)
    assert _audit(installed, cache_dir) == plain


def test_a_record_that_fails_to_read_for_a_passing_reason_is_not_kept(
    installed: Venv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = _audit(installed, None)
    real = ownership.read_regular

    def read_regular(path: str, limit: int) -> Any:
        if path.endswith("RECORD") and "alpha-" in path:
            return ReadError(message="Input/output error")
        return real(path, limit)

    monkeypatch.setattr(ownership, "read_regular", read_regular)
    cache_dir = tmp_path / "cache"
    assert _audit(installed, cache_dir) != plain  # alpha's files all unowned this once
    assert not list(cache_dir.glob("*.audit"))
    monkeypatch.setattr(ownership, "read_regular", real)
    assert _audit(installed, cache_dir) == plain


@pytest.fixture
def late_dpkg(installed: Venv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """dpkg's ``info`` directory, which the audit reads itself: the venv's site directory taken as below /usr."""
    monkeypatch.setattr(system_files, "_SYSTEM_ROOTS", (str(installed.site_packages) + os.sep,))
    admin = tmp_path / "dpkg"  # not .../var/lib/dpkg: its root is /
    (admin / "info").mkdir(parents=True)
    monkeypatch.setattr(system_files, "DEFAULT_ADMINDIR", str(admin))
    for top_level in ("sneaky.py", "notes.txt"):  # unowned files below the top only
        (installed.site_packages / top_level).unlink()
    return admin / "info"


def test_dpkg_lists_read_late_are_kept_by_their_fingerprints(
    installed: Venv, tmp_path: Path, walks: list[int], late_dpkg: Path
) -> None:
    site = installed.site_packages
    listing = late_dpkg / "python3-evil.list"
    listing.write_text(f"/.\n{site}/evilpkg\n{site}/evilpkg/__init__.py\n")
    _settle()
    cache_dir = tmp_path / "cache"
    before = _audit(installed, cache_dir)
    assert _unowned(before, installed) == {"alpha/sub/deep/extra.py"}  # evilpkg/ is dpkg's
    walks.clear()
    assert _audit(installed, cache_dir) == before and walks == []  # kept, dpkg's lists and all
    with open(listing, "r+") as f:  # in place, as no package manager does: only the list's fingerprint moves
        f.write("/.\n")
        f.truncate()
    after = _audit(installed, cache_dir)
    assert walks == [1]
    assert after == _audit(installed, None) != before
    assert _unowned(after, installed) == {"alpha/sub/deep/extra.py", "evilpkg/__init__.py"}


def test_a_symlink_resolved_for_dpkg_is_kept_by_where_it_lies(
    installed: Venv, tmp_path: Path, walks: list[int], late_dpkg: Path
) -> None:
    """``linked.py`` reaches dpkg's file through a link outside every walked directory; re-pointing it is seen."""
    site = installed.site_packages
    for choice in ("A", "B"):
        (site / choice).mkdir()
        (site / choice / "target.py").write_text("")
    via = tmp_path / "via"
    via.symlink_to(site / "A")
    (site / "linked.py").symlink_to(via / "target.py")
    (late_dpkg / "pkg.list").write_text(f"/.\n{site}/A\n{site}/A/target.py\n")
    _settle()
    cache_dir = tmp_path / "cache"
    before = _audit(installed, cache_dir)
    assert "linked.py" not in _unowned(before, installed)  # dpkg's, through the link
    via.unlink()
    via.symlink_to(site / "B")
    walks.clear()
    after = _audit(installed, cache_dir)
    assert walks == [1]
    assert after == _audit(installed, None) != before
    assert "linked.py" in _unowned(after, installed)


@pytest.mark.parametrize("path", [0, 2**70, None, b"/"], ids=["descriptor", "huge", "none", "bytes"])
def test_a_kept_path_of_another_type_is_a_miss(installed: Venv, tmp_path: Path, walks: list[int], path: object) -> None:
    cache_dir = tmp_path / "cache"
    plain = _audit(installed, cache_dir)
    _rewrite_kept(
        cache_dir,
        lambda key, inputs, paths, fingerprints, result: (key, inputs, (path, *paths[1:]), fingerprints, result),
    )
    walks.clear()
    assert _audit(installed, cache_dir) == plain and walks == [1]

"""The shipped registry of known hooks kept in the cache directory: the same entries as parsing it, or a miss."""

from __future__ import annotations

from pathlib import Path

import pytest

from wheeldoctor.engine import registry_memo
from wheeldoctor.judge.known_hooks import find_known, parse_registry, registry_text, shipped

pytestmark = pytest.mark.unit


def _kept(cache_dir: Path) -> Path:
    [path] = cache_dir.glob("*.known-hooks")
    return path


def test_the_kept_registry_is_the_parsed_one(tmp_path: Path) -> None:
    cache_dir = str(tmp_path / "cache")
    assert registry_memo.shipped_hooks(None) == shipped()
    first = registry_memo.shipped_hooks(cache_dir)  # parsed, then kept
    assert first == parse_registry(registry_text()) == shipped()
    assert _kept(tmp_path / "cache").stat().st_size > 0
    assert registry_memo.shipped_hooks(cache_dir) == first  # read back


def test_a_kept_registry_of_other_bytes_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache_dir = str(tmp_path / "cache")
    registry_memo.shipped_hooks(cache_dir)
    edited = registry_text().replace(b'name = "setuptools distutils shim"', b'name = "edited shim"')
    assert edited != registry_text()
    monkeypatch.setattr(registry_memo, "registry_text", lambda: edited)
    names = {hook.name for hook in registry_memo.shipped_hooks(cache_dir)}
    assert "edited shim" in names and "setuptools distutils shim" not in names


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[:-10],  # cut short: the checksum fails
        lambda data: data.replace(b"wheeldoctor-known-hooks 2", b"wheeldoctor-known-hooks 9"),  # another writer
        lambda data: b"",
    ],
)
def test_a_damaged_kept_registry_is_parsed_again(tmp_path: Path, damage: object) -> None:
    cache_dir = str(tmp_path / "cache")
    registry_memo.shipped_hooks(cache_dir)
    kept = _kept(tmp_path / "cache")
    kept.write_bytes(damage(kept.read_bytes()))  # type: ignore[operator]
    assert registry_memo.shipped_hooks(cache_dir) == shipped()


@pytest.mark.parametrize(
    "value",
    [
        None,
        ("digest", ()),  # another registry's digest
        "not a tuple",
        (None, ((1, (), "", (), "", "pth", False, False),)),
    ],
)
def test_a_kept_value_of_another_shape_is_refused(value: object) -> None:
    assert registry_memo._hooks(value, "a" * 64) is None
    digest = "b" * 64
    kept = ("n", ("x",), "*.pth", ("l",), "s", "pth", False, True)
    assert registry_memo._hooks((digest, (kept,)), digest) is not None
    assert registry_memo._hooks((digest, ((*kept[:3], "l", *kept[4:]),)), digest) is None  # lines: text
    assert registry_memo._hooks((digest, (kept[:6],)), digest) is None  # no named, no editable: an older memo
    assert registry_memo._hooks((digest, ((*kept[:7], 1),)), digest) is None  # editable: not a bool
    (hook,) = registry_memo._hooks((digest, (kept,)), digest) or ()
    assert (hook.named, hook.editable) == (False, True)  # every field kept, the editable-only rule included


def test_a_hook_that_runs_nothing_reads_no_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> tuple[()]:
        raise AssertionError("the registry was read")

    monkeypatch.setattr("wheeldoctor.judge.known_hooks.shipped", refuse)
    assert find_known("pth", "distutils-precedence.pth", "setuptools", ()) is None

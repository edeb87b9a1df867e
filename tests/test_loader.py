"""The loader's search, step by step, as glibc's ld.so takes it: files on disk, nothing loaded."""

from __future__ import annotations

from pathlib import Path

import pytest
from native_objects import elf_bytes

from wheeldoctor.formats.ld_cache import CacheEntry
from wheeldoctor.where.loader import LibrarySearch, SystemLibraries, default_dirs, expand

pytestmark = pytest.mark.unit

X86_64 = (64, True, 62)
I386 = (32, True, 3)


def lib(directory: Path, name: str, *, bits: int = 64, machine: int = 62) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_bytes(elf_bytes(bits=bits, machine=machine, soname=name.encode()))
    return path


def search(tmp_path: Path, cache: dict[str, tuple[CacheEntry, ...]] | None = None) -> LibrarySearch:
    system = SystemLibraries(cache="ld.so.cache", entries=cache or {}, default_dirs=(str(tmp_path / "default"),))
    return LibrarySearch(system, {})


def test_rpath_then_runpath_then_the_cache_then_the_default_directories(tmp_path: Path) -> None:
    for place in ("rpath", "runpath", "cached", "default"):
        lib(tmp_path / place, "libx.so.1")
    cache = {"libx.so.1": (CacheEntry("libx.so.1", str(tmp_path / "cached/libx.so.1"), 0x0303),)}
    rpath = [(str(tmp_path / "rpath"), "RPATH")]
    runpath = [str(tmp_path / "runpath")]
    assert search(tmp_path, cache).find("libx.so.1", X86_64, rpath, runpath).via == "RPATH"  # type: ignore[union-attr]
    found = search(tmp_path, cache).find("libx.so.1", X86_64, [], runpath)
    assert found is not None and (found.via, found.path) == ("RUNPATH", str(tmp_path / "runpath/libx.so.1"))
    found = search(tmp_path, cache).find("libx.so.1", X86_64, [], [])
    assert found is not None and found.via == "ld.so.cache"
    found = search(tmp_path).find("libx.so.1", X86_64, [], [])
    assert found is not None and found.via == "default directories"
    assert search(tmp_path).find("libnothere.so.1", X86_64, rpath, runpath) is None


def test_a_candidate_of_another_class_or_machine_is_passed_over(tmp_path: Path) -> None:
    lib(tmp_path / "a", "libx.so.1", bits=32, machine=3)
    lib(tmp_path / "b", "libx.so.1", machine=183)
    lib(tmp_path / "c", "libx.so.1")
    (tmp_path / "d").mkdir()
    (tmp_path / "d/libx.so.1").write_text("GROUP ( libx.so.1 )")  # a linker script, as /usr/lib/libc.so
    dirs = [str(tmp_path / d) for d in "dabc"]
    found = search(tmp_path).find("libx.so.1", X86_64, [], dirs)
    assert found is not None and found.path == str(tmp_path / "c/libx.so.1")
    found = search(tmp_path).find("libx.so.1", I386, [], dirs)
    assert found is not None and found.path == str(tmp_path / "a/libx.so.1")


def test_the_cache_takes_the_first_entry_for_the_abi_and_no_other(tmp_path: Path) -> None:
    lib(tmp_path / "i386", "libx.so.1", bits=32, machine=3)
    lib(tmp_path / "hw", "libx.so.1")
    lib(tmp_path / "x86_64", "libx.so.1")
    cache = {
        "libx.so.1": (
            CacheEntry("libx.so.1", str(tmp_path / "i386/libx.so.1"), 0x0003),
            CacheEntry("libx.so.1", str(tmp_path / "hw/libx.so.1"), 0x0303, (1 << 62) | 1),
            CacheEntry("libx.so.1", str(tmp_path / "x86_64/libx.so.1"), 0x0303),
        )
    }
    found = search(tmp_path, cache).find("libx.so.1", X86_64, [], [])
    assert found is not None and found.path == str(tmp_path / "x86_64/libx.so.1")
    found = search(tmp_path, cache).find("libx.so.1", I386, [], [])
    assert found is not None and found.path == str(tmp_path / "i386/libx.so.1")
    # An entry whose file is gone: the loader falls through to the default directories, not to another entry.
    gone = {"libx.so.1": (CacheEntry("libx.so.1", str(tmp_path / "gone/libx.so.1"), 0x0303), *cache["libx.so.1"])}
    assert search(tmp_path, gone).find("libx.so.1", X86_64, [], []) is None
    lib(tmp_path / "default", "libx.so.1")
    found = search(tmp_path, gone).find("libx.so.1", X86_64, [], [])
    assert found is not None and found.via == "default directories"


def test_a_name_with_a_slash_is_not_searched_for(tmp_path: Path) -> None:
    lib(tmp_path / "default/sub", "libx.so.1")
    assert search(tmp_path).find("sub/libx.so.1", X86_64, [], [str(tmp_path / "default")]) is None


def test_ld_library_path_of_this_process_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lib(tmp_path / "llp", "libx.so.1")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path / "llp"))
    assert search(tmp_path).find("libx.so.1", X86_64, [], []) is None


@pytest.mark.parametrize(
    ("paths", "expanded"),
    [
        ("$ORIGIN", ("/o/dir",)),
        ("${ORIGIN}/../lib", ("/o/dir/../lib",)),
        ("$ORIGIN/x:/abs//:/abs", ("/o/dir/x", "/abs")),
        ("$ORIGINAL/x", ()),  # not a token: a relative-looking literal, "$ORIGINAL/x", is dropped
        ("/p/$PLATFORM", ("/p/x86_64",)),
        ("/usr/$LIB/x", ("/usr/lib64/x", "/usr/lib/x", "/usr/lib/x86_64-linux-gnu/x")),
        ("/a/$FOO", ("/a/$FOO",)),  # an unknown token stays as written
        ("relative:::./here", ()),  # the process's working directory: not searched
        ("", ()),
        ("/", ("/",)),
    ],
)
def test_directory_lists_expand_as_the_loader_expands_them(paths: str, expanded: tuple[str, ...]) -> None:
    assert expand(paths, "/o/dir", X86_64) == expanded


def test_a_token_without_a_value_drops_its_directory() -> None:
    assert expand("/p/$PLATFORM:/q", "/o", (64, True, 9999)) == ("/q",)


def test_default_directories_cover_multiarch_and_lib64_layouts() -> None:
    dirs = default_dirs(X86_64)
    assert dirs[:2] == ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu")
    assert {"/lib64", "/usr/lib64", "/lib", "/usr/lib"} <= set(dirs)
    assert "/lib32" in default_dirs(I386) and "/lib/i386-linux-gnu" in default_dirs(I386)

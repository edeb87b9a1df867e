"""ld.so.cache read as the loader reads it: every format ldconfig writes, and hostile bytes refused."""

from __future__ import annotations

import contextlib
import random
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from native_objects import build_object

from wheeldoctor.formats.ld_cache import NEW_MAGIC, OLD_MAGIC, CacheEntry, LdCacheError, parse_ld_cache


def _ldconfig_p(cache: Path) -> list[tuple[str, str]]:
    out = subprocess.run(["ldconfig", "-p", "-C", str(cache)], capture_output=True, text=True, check=True).stdout
    return re.findall(r"^\s+(\S+) \(.*\) => (\S+)$", out, flags=re.MULTILINE)


@pytest.mark.parametrize("layout", ["new", "old", "compat"])
def test_every_format_ldconfig_writes_reads_as_ldconfig_prints_it(tmp_path: Path, layout: str) -> None:
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    if not Path(ldconfig).exists():
        pytest.skip("needs ldconfig")
    libs = tmp_path / "lib"
    build_object(libs, "libwdcache.so.7", marker=tmp_path / "loaded", soname="libwdcache.so.7")
    conf = tmp_path / "ld.so.conf"
    conf.write_text(f"{libs}\n")
    cache = tmp_path / f"{layout}.cache"
    # -X: no links made; the system's trusted directories are read too, as on any host.
    done = subprocess.run(
        [ldconfig, "-c", layout, "-C", str(cache), "-f", str(conf), "-X"], capture_output=True, check=False
    )
    if done.returncode != 0 or not cache.exists():
        pytest.skip(f"ldconfig cannot write the {layout} format here")
    entries = parse_ld_cache(cache.read_bytes())
    assert [(e.name, e.path) for e in entries] == _ldconfig_p(cache)
    assert ("libwdcache.so.7", str(libs / "libwdcache.so.7")) in [(e.name, e.path) for e in entries]
    assert not (tmp_path / "loaded").exists()


def _new(
    entries: list[tuple[int, int, int, int]], strings: bytes, *, flags: int = 2, count: int | None = None
) -> bytes:
    header = NEW_MAGIC + struct.pack("<IIB3xI12x", len(entries) if count is None else count, len(strings), flags, 0)
    body = b"".join(struct.pack("<iIIIQ", f, k, v, 0, h) for f, k, v, h in entries)
    return header + body + strings


@pytest.mark.unit
def test_new_format_strings_count_from_its_header() -> None:
    strings = b"libz.so.1\0/lib/libz.so.1\0"
    base = 48 + 24
    data = _new([(0x0303, base, base + 10, 0)], strings)
    assert parse_ld_cache(data) == (CacheEntry("libz.so.1", "/lib/libz.so.1", 0x0303, 0),)


@pytest.mark.unit
def test_old_format_with_the_new_after_it_reads_the_new_part() -> None:
    old = OLD_MAGIC + b"\0" + struct.pack("=I", 1) + struct.pack("=iII", 1, 0, 0)
    old += bytes(-len(old) % 8)
    strings = b"libn.so.2\0/new/libn.so.2\0"
    new = _new([(0x0303, 72, 82, 0)], strings)
    assert parse_ld_cache(old + new) == (CacheEntry("libn.so.2", "/new/libn.so.2", 0x0303, 0),)


@pytest.mark.unit
def test_old_format_alone_counts_strings_from_after_its_entries() -> None:
    strings = b"libo.so.3\0/old/libo.so.3\0"
    data = OLD_MAGIC + b"\0" + struct.pack("=I", 1) + struct.pack("=iII", 3, 0, 10) + strings
    assert parse_ld_cache(data) == (CacheEntry("libo.so.3", "/old/libo.so.3", 3, 0),)


@pytest.mark.unit
def test_a_hwcaps_entry_is_told_apart() -> None:
    assert CacheEntry("a", "b", 0x0303, (1 << 62) | 2).hwcaps_subdirectory
    assert not CacheEntry("a", "b", 0x0303, 0).hwcaps_subdirectory


@pytest.mark.unit
@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"", "no known magic"),
        (b"glibc-ld.so.cache1.0" + bytes(40), "no known magic"),
        (NEW_MAGIC + bytes(10), "truncated"),
        (OLD_MAGIC, "truncated"),
        (_new([], b"", count=1_000_000), "do not fit"),
        (_new([(3, 1 << 30, 0, 0)], b"x\0"), "outside the string table"),
        (_new([(3, 72, 72, 0)], b"unterminated"), "no end"),
        (_new([], b"", flags=1), "marked invalid"),
        (_new([], b"", flags=3), "other byte order"),
        (OLD_MAGIC + b"\0" + struct.pack("=I", 0xFFFFFFFF), "do not fit"),
    ],
)
def test_what_the_loader_would_not_use_is_refused_with_a_reason(data: bytes, says: str) -> None:
    with pytest.raises(LdCacheError, match=says):
        parse_ld_cache(data)


@pytest.mark.unit
def test_random_damage_never_escapes_as_another_exception() -> None:
    strings = b"libz.so.1\0/lib/libz.so.1\0libc.so.6\0/lib/libc.so.6\0"
    data = _new([(0x0303, 72 + 24, 82 + 24, 0), (0x0303, 97 + 24, 107 + 24, 0)], strings)
    assert len(parse_ld_cache(data)) == 2
    rng = random.Random(48)
    for _ in range(3000):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        with contextlib.suppress(LdCacheError):
            parse_ld_cache(bytes(damaged))

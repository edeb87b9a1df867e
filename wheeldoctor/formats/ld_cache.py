"""``/etc/ld.so.cache`` as glibc's loader reads it: the old format, the new one, or both in one file.

ldconfig writes the new format (``glibc-ld.so.cache1.1``) since glibc 2.32, and before that
the old one (``ld.so-1.7.0``) with the new one after it; the loader reads the new part
where there is one. Each entry maps a library's name to the path of the file that
provides it, with flags that say which ABI the file is for (see :data:`ABI_FLAGS`).
Every count and offset is checked against the data's size before it is used.
"""

from __future__ import annotations

import struct
import sys
from typing import NamedTuple

OLD_MAGIC = b"ld.so-1.7.0"
NEW_MAGIC = b"glibc-ld.so.cache1.1"
#: The new format's header: magic and version, nlibs, len_strings, flags, padding, extension_offset, unused.
_NEW_HEADER = 48
_NEW_ENTRY = 24
_OLD_HEADER = 16
_OLD_ENTRY = 12
#: The longest name or path read from the string table.
MAX_STRING = 4096

#: The flags glibc's loader accepts for an entry (``_dl_cache_check_flags``), by ELF class and
#: machine: FLAG_ELF_LIBC6 (3) and the ABI bits ldconfig sets. Elsewhere the loader takes 1 or 3.
ABI_FLAGS: dict[tuple[int, int], frozenset[int]] = {
    (64, 62): frozenset({0x0303}),  # x86-64: FLAG_X8664_LIB64
    (32, 62): frozenset({0x0803}),  # x32: FLAG_X8664_LIBX32
    (64, 183): frozenset({0x0A03}),  # aarch64: FLAG_AARCH64_LIB64
    (64, 21): frozenset({0x0503}),  # ppc64: FLAG_POWERPC_LIB64
    (64, 22): frozenset({0x0403}),  # s390x: FLAG_S390_LIB64
    (64, 2): frozenset({0x0103}),  # sparc64: FLAG_SPARC_LIB64
}
GENERIC_FLAGS = frozenset({1, 3})


class CacheEntry(NamedTuple):
    """One entry: a library's name, the file that provides it, and the ABI flags ldconfig gave it.

    A named tuple: one is made per entry, some thousands per cache.
    """

    name: str
    path: str
    flags: int
    hwcap: int = 0
    """The new format's hwcap field; entries for a glibc-hwcaps subdirectory set bit 62."""

    @property
    def hwcaps_subdirectory(self) -> bool:
        """Whether the entry is for a ``glibc-hwcaps/LEVEL`` subdirectory (chosen by the CPU at run time)."""
        return (self.hwcap >> 32) & ~0x3FF == 1 << 30


class LdCacheError(ValueError):
    """The data is no ld.so.cache the loader would use; the message says why."""


def parse_ld_cache(data: bytes) -> tuple[CacheEntry, ...]:
    """The entries of an ld.so.cache, in the file's order (the loader takes the first that fits).

    Raises :class:`LdCacheError` for data the loader would not use.
    """
    if data.startswith(NEW_MAGIC):
        return _new(data, 0)
    if not data.startswith(OLD_MAGIC):
        raise LdCacheError("not an ld.so.cache (no known magic)")
    if len(data) < _OLD_HEADER:
        raise LdCacheError("truncated")
    order = "="  # the old format is in the byte order of the host that wrote it
    (count,) = struct.unpack_from(order + "I", data, 12)
    if (len(data) - _OLD_HEADER) // _OLD_ENTRY < count:
        raise LdCacheError(f"{count} entries do not fit in {len(data)} bytes")
    table = _OLD_HEADER + count * _OLD_ENTRY
    new = table + (-table % 8)  # ALIGN_CACHE: the new header is 8-byte aligned
    if data[new : new + len(NEW_MAGIC)] == NEW_MAGIC:
        return _new(data, new)
    return tuple(
        _entry(data, table, flags, key, value, 0)
        for flags, key, value in struct.iter_unpack(order + "iII", data[_OLD_HEADER:table])
    )


def _new(data: bytes, start: int) -> tuple[CacheEntry, ...]:
    """The new format's entries; its string offsets count from ``start``, where its header is."""
    if len(data) - start < _NEW_HEADER:
        raise LdCacheError("truncated")
    endian = data[start + 28] & 3
    if endian == 1:
        raise LdCacheError("marked invalid by ldconfig")
    order = {2: "<", 3: ">"}.get(endian, "=")
    if endian and order != ("<" if sys.byteorder == "little" else ">"):
        raise LdCacheError("written for the other byte order")
    (count,) = struct.unpack_from(order + "I", data, start + 20)
    first = start + _NEW_HEADER
    if (len(data) - first) // _NEW_ENTRY < count:
        raise LdCacheError(f"{count} entries do not fit in {len(data)} bytes")
    entries = data[first : first + count * _NEW_ENTRY]
    return tuple(
        _entry(data, start, flags, key, value, hwcap)
        for flags, key, value, _, hwcap in struct.iter_unpack(order + "iIIIQ", entries)
    )


def _entry(data: bytes, base: int, flags: int, key: int, value: int, hwcap: int) -> CacheEntry:
    return CacheEntry(_string(data, base + key), _string(data, base + value), flags, hwcap)


def _string(data: bytes, offset: int) -> str:
    end = data.find(b"\0", offset, offset + MAX_STRING)
    if not 0 <= offset < len(data) or end < 0:
        raise LdCacheError("a string offset lies outside the string table, or its string has no end")
    return data[offset:end].decode("utf-8", "surrogateescape")

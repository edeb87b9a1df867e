"""A wheel's RECORD and METADATA out of its zip: the end record, the central directory, two members.

Pure: bytes in through a ``read(start, end)`` callable, values out. ``zipfile`` builds an
object of about 500 bytes per entry (a wheel of small entries holds 22,000 per MiB of
central directory); this scans the central directory's bytes and keeps only the entries
asked for, so the memory is the directory's size whatever the count. Every number read from
the archive is checked against the archive's size and the caller's limits before it is used.
Stored and deflated members are read (as PEP 427 allows); the CRC-32 is checked.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

_END = struct.Struct("<4s4H2LH")
_END_SIGNATURE = b"PK\x05\x06"
_LOCATOR = struct.Struct("<4sLQL")
_LOCATOR_SIGNATURE = b"PK\x06\x07"
_END64 = struct.Struct("<4sQ2H2L4Q")
_END64_SIGNATURE = b"PK\x06\x06"
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")
_CENTRAL_SIGNATURE = b"PK\x01\x02"
_LOCAL = struct.Struct("<4s2B4HL2L2H")
_LOCAL_SIGNATURE = b"PK\x03\x04"
#: The end record sits in the last 22 bytes plus a comment of at most 65,535.
END_SEARCH = _END.size + 0xFFFF
_UTF8_FLAG = 0x800
_ENCRYPTED_FLAG = 0x1
_STORED, _DEFLATED = 0, 8

Read = Callable[[int, int], bytes]
"""``read(start, end)``: exactly the archive's bytes ``start`` to ``end`` (exclusive), or an OSError."""


class ZipError(ValueError):
    """The archive cannot be read as a wheel's zip; the message says why, in one line."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Directory:
    """Where the central directory lies, as the end record says (offsets already shifted for data before the zip)."""

    offset: int
    size: int
    entries: int
    shift: int
    """Bytes before the zip proper (an archive appended to something else): added to every offset."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """One member as the central directory describes it."""

    name: str
    raw_name: bytes
    header_offset: int
    compress_size: int
    file_size: int
    method: int
    crc: int
    flags: int


def end_record(tail: bytes, size: int, *, limit: int) -> Directory:
    """The central directory's place, from the archive's last bytes (``tail``, which ends at ``size``).

    Raises :class:`ZipError` when there is no end record, the zip spans disks, or the
    directory is larger than ``limit`` bytes or lies outside the archive.
    """
    at = tail.rfind(_END_SIGNATURE, max(0, len(tail) - END_SEARCH))
    if at < 0 or len(tail) - at < _END.size:
        raise ZipError("no end of central directory record")
    _, disk, cd_disk, _, entries, cd_size, cd_offset, _ = _END.unpack_from(tail, at)
    where = size - len(tail) + at  # the end record's offset in the archive
    if 0xFFFF in (entries, disk, cd_disk) or 0xFFFFFFFF in (cd_size, cd_offset):
        entries, cd_size, cd_offset, disk, cd_disk, where = _zip64(tail, at, where)
    if disk or cd_disk:
        raise ZipError("spans several disks")
    shift = where - cd_size - cd_offset
    if cd_size > limit:
        raise ZipError(f"its central directory is {cd_size} bytes, more than {limit}")
    if shift < 0 or cd_offset + shift + cd_size > size:
        raise ZipError("its central directory lies outside the file")
    return Directory(offset=cd_offset + shift, size=cd_size, entries=entries, shift=shift)


def _zip64(tail: bytes, at: int, where: int) -> tuple[int, int, int, int, int, int]:
    locator = at - _LOCATOR.size
    record = locator - _END64.size  # as zipfile does: the zip64 end record just before its locator
    if record < 0 or tail[locator : locator + 4] != _LOCATOR_SIGNATURE:
        raise ZipError("no zip64 end of central directory locator")
    if tail[record : record + 4] != _END64_SIGNATURE:
        raise ZipError("no zip64 end of central directory record")
    _, _, _, _, disk, cd_disk, _, entries, cd_size, cd_offset = _END64.unpack_from(tail, record)
    return entries, cd_size, cd_offset, disk, cd_disk, where - _LOCATOR.size - _END64.size


def scan(directory: bytes, place: Directory, suffixes: tuple[bytes, ...]) -> list[Entry]:
    """The entries whose name ends with one of ``suffixes`` (ASCII), in directory order.

    A name is UTF-8 where its flag says so, else cp437, as ``zipfile`` reads it. A name
    holding a NUL byte (which ``zipfile`` would cut short there) or a count of entries that
    is not the end record's raises :class:`ZipError`: two readers must not see two archives.
    """
    found = []
    pos = 0
    count = 0
    while pos < len(directory):
        if directory[pos : pos + 4] != _CENTRAL_SIGNATURE or pos + _CENTRAL.size > len(directory):
            raise ZipError(f"bad central directory entry at byte {pos}")
        fields = _CENTRAL.unpack_from(directory, pos)
        flags, method, crc, compress_size, file_size = fields[5], fields[6], fields[9], fields[10], fields[11]
        name_len, extra_len, comment_len, header_offset = fields[12], fields[13], fields[14], fields[18]
        start = pos + _CENTRAL.size
        pos = start + name_len + extra_len + comment_len
        if pos > len(directory):
            raise ZipError("a central directory entry runs past the directory")
        count += 1
        raw = directory[start : start + name_len]
        if b"\0" in raw:
            raise ZipError("a member's name holds a NUL byte")
        if not raw.endswith(suffixes):
            continue
        name = raw.decode("utf-8" if flags & _UTF8_FLAG else "cp437", "surrogateescape")
        extra = directory[start + name_len : start + name_len + extra_len]
        sizes = _zip64_extra(extra, file_size, compress_size, header_offset)
        found.append(
            Entry(
                name=name,
                raw_name=raw,
                file_size=sizes[0],
                compress_size=sizes[1],
                header_offset=sizes[2] + place.shift,
                method=method,
                crc=crc,
                flags=flags,
            )
        )
    if count != place.entries:
        raise ZipError(f"the end record counts {place.entries} entries, the central directory {count}")
    return found


def _zip64_extra(extra: bytes, file_size: int, compress_size: int, offset: int) -> tuple[int, int, int]:
    """The sizes and offset, from the zip64 extra field (id 1) where the 32-bit fields are all ones."""
    values = [file_size, compress_size, offset]
    if 0xFFFFFFFF not in values:
        return file_size, compress_size, offset
    pos = 0
    while pos + 4 <= len(extra):
        kind, length = struct.unpack_from("<2H", extra, pos)
        if kind == 1:
            data = extra[pos + 4 : pos + 4 + length]
            held = iter(struct.unpack_from(f"<{len(data) // 8}Q", data))
            try:
                values = [next(held) if v == 0xFFFFFFFF else v for v in values]
            except StopIteration:
                raise ZipError("a zip64 extra field is too short") from None
            return values[0], values[1], values[2]
        pos += 4 + length
    raise ZipError("a zip64 size with no zip64 extra field")


def span(entry: Entry, *, slack: int = 1024) -> tuple[int, int]:
    """The bytes to read for ``entry``: its local header, a guess at its extra field, and its data."""
    start = entry.header_offset
    return start, start + _LOCAL.size + len(entry.raw_name) + slack + entry.compress_size


def read_member(read: Read, entry: Entry, size: int, *, limit: int) -> bytes:
    """``entry``'s bytes, decompressed and checked against its CRC-32; at most ``limit`` bytes.

    Raises :class:`ZipError` when it is encrypted, compressed another way, larger than
    ``limit``, outside the archive of ``size`` bytes, or its bytes are not what the
    directory says.
    """
    if entry.flags & _ENCRYPTED_FLAG:
        raise ZipError(f"{entry.name} is encrypted")
    if entry.method not in (_STORED, _DEFLATED):
        raise ZipError(f"{entry.name} uses compression method {entry.method} (stored or deflated only)")
    if entry.file_size > limit or entry.compress_size > limit:
        raise ZipError(f"{entry.name} is larger than {limit} bytes")
    header_end = entry.header_offset + _LOCAL.size
    if header_end > size:
        raise ZipError(f"{entry.name}: its local header lies outside the file")
    header = read(entry.header_offset, header_end)
    signature, _, _, _, _, _, _, _, _, _, name_len, extra_len = _LOCAL.unpack(header)
    if signature != _LOCAL_SIGNATURE:
        raise ZipError(f"{entry.name}: bad local header")
    start = header_end + name_len + extra_len
    end = start + entry.compress_size
    if end > size:
        raise ZipError(f"{entry.name}: its data lies outside the file")
    named = read(header_end, start)[:name_len]
    if named != entry.raw_name:
        raise ZipError(f"{entry.name}: the local header names another file")
    data = read(start, end)
    if entry.method == _DEFLATED:
        inflate = zlib.decompressobj(-15)
        try:
            data = inflate.decompress(data, entry.file_size + 1)
        except zlib.error as e:
            raise ZipError(f"{entry.name}: bad deflate data ({e})") from None
    if len(data) != entry.file_size:
        raise ZipError(f"{entry.name}: {len(data)} bytes where the directory says {entry.file_size}")
    if zlib.crc32(data) != entry.crc:
        raise ZipError(f"{entry.name}: CRC-32 mismatch")
    return data


def top_level(entries: Iterable[Entry], suffix: str) -> list[Entry]:
    """The entries directly inside a top-level ``*.dist-info`` directory whose name ends with ``suffix``."""
    return [e for e in entries if e.name.count("/") == 1 and e.name.endswith(suffix)]

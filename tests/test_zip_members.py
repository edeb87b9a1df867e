"""formats/zip_members.py against zipfile: the same members out of real archives, one error class for bad ones."""

from __future__ import annotations

import io
import random
import struct
import zipfile

import pytest

from wheeldoctor.formats import zip_members
from wheeldoctor.formats.zip_members import ZipError

pytestmark = pytest.mark.unit

SUFFIXES = (b".dist-info/RECORD", b".dist-info/METADATA")
LIMIT = 1 << 20


def _archive(members: dict[str, bytes], *, compression: int = zipfile.ZIP_DEFLATED, prefix: bytes = b"") -> bytes:
    buffer = io.BytesIO()
    buffer.write(prefix)
    with zipfile.ZipFile(buffer, "a" if prefix else "w", compression=compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _read(data: bytes, *, limit: int = LIMIT) -> dict[str, bytes]:
    """What zip_members reads of ``data``: every RECORD and METADATA member, by name."""

    def read(start: int, end: int) -> bytes:
        assert 0 <= start <= end <= len(data)
        return data[start:end]

    place = zip_members.end_record(data[-zip_members.END_SEARCH :], len(data), limit=limit)
    entries = zip_members.scan(data[place.offset : place.offset + place.size], place, SUFFIXES)
    return {e.name: zip_members.read_member(read, e, len(data), limit=LIMIT) for e in entries}


WHEEL = {
    "pkg/__init__.py": b"x = 1\n",
    "pkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n",
    "pkg-1.0.dist-info/RECORD": b"pkg/__init__.py,sha256=abc,6\n" * 50,
}


@pytest.mark.parametrize("compression", [zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED], ids=["deflated", "stored"])
@pytest.mark.parametrize("prefix", [b"", b"#!/bin/sh\nexit 0\n" * 10], ids=["plain", "after other bytes"])
def test_the_members_are_zipfiles(compression: int, prefix: bytes) -> None:
    data = _archive(WHEEL, compression=compression, prefix=prefix)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        expected = {n: archive.read(n) for n in archive.namelist() if n.endswith(("RECORD", "METADATA"))}
    assert _read(data) == expected


def test_zip64_end_records_and_more_than_65535_entries() -> None:
    members = {f"pkg/m{i}.py": b"" for i in range(70_000)}
    members["pkg-1.0.dist-info/RECORD"] = b"pkg/m0.py,,\n"
    data = _archive(members, compression=zipfile.ZIP_STORED)
    assert b"PK\x06\x06" in data[-200:]
    assert _read(data, limit=16 << 20) == {"pkg-1.0.dist-info/RECORD": b"pkg/m0.py,,\n"}


def test_a_zip64_member_and_utf8_and_cp437_names() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("pkg-1.0.dist-info/RECORD", "w", force_zip64=True) as member:
            member.write(b"r\n")
        archive.writestr("pkgé-1.0.dist-info/METADATA", b"Name: x\n")
    assert _read(buffer.getvalue()) == {"pkg-1.0.dist-info/RECORD": b"r\n", "pkgé-1.0.dist-info/METADATA": b"Name: x\n"}


def test_a_central_directory_over_the_limit_is_refused_from_the_end_record() -> None:
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 1, 1, 0xFFFFFFF0, 0, 0)
    with pytest.raises(ZipError, match="central directory is 4294967280 bytes"):
        zip_members.end_record(b"\0" * 100 + end, 122, limit=LIMIT)


def test_two_readers_never_see_two_archives() -> None:
    """A NUL in a name (zipfile cuts the name there) and an entry count that is not the end record's are errors."""
    data = _archive({"pkg-1.0.dist-info/RECORD#.txt": b"r\n"}).replace(b"RECORD#", b"RECORD\0")
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.namelist() == ["pkg-1.0.dist-info/RECORD"]  # what zipfile, and so pip, would read
    with pytest.raises(ZipError, match="NUL"):
        _read(data)
    data = _archive(WHEEL)
    at = data.rfind(b"PK\x05\x06")
    forged = data[: at + 8] + struct.pack("<2H", 2, 2) + data[at + 12 :]
    with pytest.raises(ZipError, match="counts 2 entries"):
        _read(forged)


def test_a_member_larger_than_the_limit_or_a_bomb_is_refused_unread() -> None:
    data = _archive({"pkg-1.0.dist-info/RECORD": b"\0" * (2 * LIMIT)})
    with pytest.raises(ZipError, match="larger than"):
        _read(data)
    # The directory says 10 bytes; the deflate stream holds 2 MiB of zeros: cut at 11 bytes, then refused.
    small = _archive({"pkg-1.0.dist-info/RECORD": b"\0" * (2 * LIMIT)})
    at = small.find(b"PK\x01\x02")
    forged = small[: at + 24] + struct.pack("<L", 10) + small[at + 28 :]
    with pytest.raises(ZipError, match="bytes where the directory says 10"):
        _read(forged)


def test_random_damage_is_a_zip_error_or_a_correct_read() -> None:
    """Bytes flipped anywhere: never another exception, never a member whose CRC does not hold."""
    data = bytearray(_archive(WHEEL))
    good = _read(bytes(data))
    rng = random.Random(49)
    for _ in range(3000):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        try:
            found = _read(bytes(damaged))
        except ZipError:
            continue
        for name, member in found.items():
            assert good.get(name, member) == member or name not in good

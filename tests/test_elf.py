"""The ELF reader: what the loader reads, from real objects and from hostile bytes, within its bounds."""

from __future__ import annotations

import random
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from native_objects import build_object, elf_bytes

from wheeldoctor.formats.elf import MAX_READ, MAX_STRING, read_elf
from wheeldoctor.model.native import ElfObject, ElfProblem


class Counting:
    """``pread`` over bytes, counting what was asked for."""

    def __init__(self, data: bytes) -> None:
        self.data, self.read = data, 0

    def __call__(self, offset: int, size: int) -> bytes:
        chunk = self.data[offset : offset + size]
        self.read += len(chunk)
        return chunk


def parse(data: bytes) -> ElfObject | ElfProblem:
    return read_elf(Counting(data), len(data))


@pytest.mark.unit
@pytest.mark.parametrize("bits", [32, 64])
@pytest.mark.parametrize("little", [True, False])
def test_names_and_identity_of_each_class_and_byte_order(bits: int, little: bool) -> None:
    data = elf_bytes(
        bits=bits,
        little=little,
        machine=3 if bits == 32 else 62,
        needed=[b"libcudart.so.12", b"libc.so.6"],
        soname=b"libx.so.1",
        rpath=b"$ORIGIN/../lib",
        runpath=b"$ORIGIN:/opt/x",
    )
    found = parse(data)
    assert found == ElfObject(
        bits=bits,
        little_endian=little,
        machine=3 if bits == 32 else 62,
        type=3,
        soname="libx.so.1",
        needed=("libcudart.so.12", "libc.so.6"),
        rpath="$ORIGIN/../lib",
        runpath="$ORIGIN:/opt/x",
    )


@pytest.mark.unit
def test_the_last_entry_of_a_tag_wins_as_in_the_loader() -> None:
    data = bytearray(elf_bytes(soname=b"first.so", extra_dynamic=[(14, 1)]))
    found = parse(bytes(data))  # index 1 is the start of "first.so"'s text: the same string
    assert isinstance(found, ElfObject) and found.soname == "first.so"
    two = elf_bytes(needed=[b"a.so", b"b.so"], extra_dynamic=[(14, 1)])  # a DT_SONAME after the table's own
    got = parse(two)
    assert isinstance(got, ElfObject) and got.soname == "a.so" and got.needed == ("a.so", "b.so")


@pytest.mark.unit
def test_undecodable_names_keep_their_bytes() -> None:
    found = parse(elf_bytes(needed=[b"lib\xff.so"]))
    assert isinstance(found, ElfObject)
    assert found.needed[0].encode("utf-8", "surrogateescape") == b"lib\xff.so"


@pytest.mark.unit
@pytest.mark.parametrize("data", [b"", b"\x7fEL", b"#!/bin/sh\n", b"GROUP ( /lib/libc.so.6 )\n" * 10])
def test_what_is_no_elf_object_says_so(data: bytes) -> None:
    found = parse(data)
    assert isinstance(found, ElfProblem) and not found.elf


@pytest.mark.unit
def test_an_object_without_a_dynamic_segment_needs_nothing() -> None:
    data = bytearray(elf_bytes(needed=[b"a.so"]))
    struct.pack_into("<I", data, 64 + 56, 4)  # the PT_DYNAMIC header becomes a PT_NOTE
    assert parse(bytes(data)) == ElfObject(bits=64, little_endian=True, machine=62, type=3)


def _patched(offset: int, fmt: str, value: int) -> bytes:
    data = bytearray(elf_bytes(needed=[b"libz.so.1"], soname=b"x.so"))
    struct.pack_into(fmt, data, offset, value)
    return bytes(data)


@pytest.mark.unit
@pytest.mark.parametrize(
    ("data", "says"),
    [
        (_patched(4, "<B", 3), "no known class"),
        (_patched(5, "<B", 0), "no known class"),
        (_patched(32, "<Q", 1 << 62), "beyond the end"),  # e_phoff
        (_patched(54, "<H", 40), "program headers of 40 bytes"),  # e_phentsize
        (_patched(56, "<H", 0xFFFF), "over the limit"),  # e_phnum
        (_patched(64 + 56 + 8, "<Q", 1 << 40), "beyond the end"),  # PT_DYNAMIC's p_offset
        (_patched(64 + 56 + 32, "<Q", 1 << 40), "beyond the end"),  # PT_DYNAMIC's p_filesz
    ],
)
def test_hostile_headers_are_refused_with_a_reason(data: bytes, says: str) -> None:
    found = parse(data)
    assert isinstance(found, ElfProblem) and found.elf
    assert says in found.message


def _dynamic_value(data: bytes, tag: int) -> int:
    """The offset of the value of the first dynamic entry with ``tag`` in a 64-bit little-endian elf_bytes()."""
    dynamic = struct.unpack_from("<Q", data, 64 + 56 + 8)[0]
    while True:
        t, _ = struct.unpack_from("<qQ", data, dynamic)
        if t == tag:
            return dynamic + 8
        dynamic += 16


@pytest.mark.unit
@pytest.mark.parametrize(
    ("tag", "value", "says"),
    [
        (5, 1 << 40, "no loaded segment"),  # DT_STRTAB
        (10, 1, "outside the string table"),  # DT_STRSZ ends before the names
        (1, 1 << 30, "outside the string table"),  # DT_NEEDED's index
    ],
)
def test_hostile_dynamic_entries_are_refused_with_a_reason(tag: int, value: int, says: str) -> None:
    data = bytearray(elf_bytes(needed=[b"libz.so.1"], soname=b"x.so"))
    struct.pack_into("<Q", data, _dynamic_value(bytes(data), tag), value)
    found = parse(bytes(data))
    assert isinstance(found, ElfProblem) and says in found.message


@pytest.mark.unit
def test_a_name_without_its_end_is_refused() -> None:
    long = b"l" * (MAX_STRING + 10)
    found = parse(elf_bytes(needed=[long]))
    assert isinstance(found, ElfProblem) and f"longer than {MAX_STRING}" in found.message
    data = elf_bytes(needed=[b"libz.so.1"])
    cut = data.index(b"libz.so.1") + 4
    cut_table = bytearray(data)
    struct.pack_into("<Q", cut_table, _dynamic_value(data, 10), cut - data.index(b"\0libz"))  # DT_STRSZ ends mid-name
    found = parse(bytes(cut_table))
    assert isinstance(found, ElfProblem) and "unterminated" in found.message


@pytest.mark.unit
def test_a_dynamic_segment_without_its_end_over_the_limit_is_refused() -> None:
    data = elf_bytes(needed=[b"a.so"], extra_dynamic=[(0x6FFFFFF0, 0)] * 5000)
    dynamic = struct.unpack_from("<Q", data, 64 + 56 + 8)[0]
    patched = bytearray(data)
    # every entry after the first few, DT_NULL included, becomes a harmless tag: no end in sight
    for offset in range(dynamic + 16 * 3, len(data), 16):
        struct.pack_into("<q", patched, offset, 0x6FFFFFF0)
    found = parse(bytes(patched))
    assert isinstance(found, ElfProblem) and "over the" in found.message


@pytest.mark.unit
def test_no_file_is_read_past_the_byte_limit() -> None:
    # 2000 names spread 4 KiB apart: each needs a window of its own, more than the limit in all.
    names = [b"n%04d" % i + b"x" * (MAX_STRING - 7) for i in range(2000)]
    data = elf_bytes(needed=names)
    counting = Counting(data)
    found = read_elf(counting, len(data))
    assert isinstance(found, ElfProblem) and "limit" in found.message
    assert counting.read <= MAX_READ


@pytest.mark.unit
def test_every_truncation_and_random_damage_is_a_problem_or_an_object_never_an_exception() -> None:
    data = elf_bytes(needed=[b"libcudart.so.12", b"libc.so.6"], soname=b"x.so", runpath=b"$ORIGIN")
    for cut in range(len(data)):
        counting = Counting(data[:cut])
        assert isinstance(read_elf(counting, cut), (ElfObject, ElfProblem))
        assert counting.read <= MAX_READ
    rng = random.Random(48)
    for _ in range(3000):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 6)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        counting = Counting(bytes(damaged))
        assert isinstance(read_elf(counting, len(damaged)), (ElfObject, ElfProblem))
        assert counting.read <= MAX_READ


@pytest.mark.unit
def test_a_file_that_shrinks_while_read_is_a_problem() -> None:
    data = elf_bytes(needed=[b"libz.so.1"])
    found = read_elf(lambda offset, size: data[offset : offset + size][: size // 2], len(data))
    assert isinstance(found, ElfProblem) and "cut short" in found.message


def _readelf(path: Path) -> dict[str, object]:
    out = subprocess.run(["readelf", "-dW", str(path)], capture_output=True, text=True, check=True).stdout
    one = lambda tag: next(iter(re.findall(rf"\({tag}\).*\[(.*)\]", out)), None)  # noqa: E731
    return {
        "needed": tuple(re.findall(r"\(NEEDED\).*\[(.*)\]", out)),
        "soname": one("SONAME"),
        "rpath": one("RPATH"),
        "runpath": one("RUNPATH"),
    }


def test_objects_built_by_gcc_read_as_readelf_reads_them(tmp_path: Path) -> None:
    if shutil.which("readelf") is None:
        pytest.skip("needs readelf")
    marker = tmp_path / "loaded"
    lib = tmp_path / "lib"
    cudart = build_object(lib, "libcudart.so.12", marker=marker, soname="libcudart.so.12")
    cublas = build_object(
        lib, "libcublas.so.12", marker=marker, soname="libcublas.so.12", needs=[cudart], rpath="$ORIGIN"
    )
    ext = build_object(
        tmp_path / "pkg",
        "_ext.cpython-311-x86_64-linux-gnu.so",
        marker=marker,
        needs=[cudart, cublas],
        runpath="$ORIGIN/../lib:/nonexistent/$PLATFORM",
    )
    for path in (cudart, cublas, ext):
        data = path.read_bytes()
        found = parse(data)
        assert isinstance(found, ElfObject)
        assert {"needed": found.needed, "soname": found.soname, "rpath": found.rpath, "runpath": found.runpath} == (
            _readelf(path)
        )
    stripped = tmp_path / "stripped.so"
    shutil.copy(ext, stripped)
    if shutil.which("strip"):
        subprocess.run(["strip", "--strip-all", "--remove-section=.shstrtab", str(stripped)], check=False)
        assert parse(stripped.read_bytes()) == parse(ext.read_bytes())  # program headers are what count
    assert not marker.exists()

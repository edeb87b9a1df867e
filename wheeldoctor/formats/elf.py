"""ELF objects as the dynamic loader reads them: class, machine, and what the dynamic section names.

Only what ld.so reads to find an object's dependencies is read: the file header, the
program headers, the ``PT_DYNAMIC`` segment, and the strings its ``DT_NEEDED``,
``DT_SONAME``, ``DT_RPATH`` and ``DT_RUNPATH`` entries point to in the ``DT_STRTAB`` table,
found through the ``PT_LOAD`` segments as the loader finds it. Section headers are never
read, so a stripped object reads the same. Every number is checked against the file's
size and the limits below before it is used, and no more than :data:`MAX_READ` bytes are
read from one file; the bytes come through the caller's ``pread``, so this module does no
I/O of its own and never loads anything.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from wheeldoctor.model.native import Arch, ElfObject, ElfProblem

#: At most this many bytes are read from one file, whatever its headers say.
MAX_READ = 1 << 20
#: The program header table's size limit (glibc has none; real objects have a dozen entries).
MAX_PHDRS = 64 << 10
#: The dynamic segment's size limit (16 bytes an entry; real objects have under a hundred).
MAX_DYNAMIC = 64 << 10
#: One name or search path: the longest a path may be on Linux (PATH_MAX, with its NUL).
MAX_STRING = 4096
#: The first read: the file header and, in nearly every object, the program headers after it.
HEAD = 4096

MAGIC = b"\x7fELF"
ET_EXEC, ET_DYN = 2, 3
PT_LOAD, PT_DYNAMIC = 1, 2
DT_NULL, DT_NEEDED, DT_STRTAB, DT_STRSZ, DT_SONAME, DT_RPATH, DT_RUNPATH = 0, 1, 5, 10, 14, 15, 29

#: Per class: the file header's fields after e_ident, the program header, a dynamic entry.
_LAYOUT = {
    32: ("HHIIIIIHHHHHH", "IIIIIIII", "iI"),
    64: ("HHIQQQIHHHHHH", "IIQQQQQQ", "qQ"),
}

Pread = Callable[[int, int], bytes]
"""``pread(offset, size)``: at most ``size`` bytes of the file from ``offset`` (fewer at its end)."""


class _Bad(Exception):
    """A check failed: the message says which."""


class _Budget:
    """The caller's ``pread``, held to the file's size and to :data:`MAX_READ` bytes in all."""

    def __init__(self, pread: Pread, size: int) -> None:
        self._pread, self.size, self._left = pread, size, MAX_READ

    def read(self, offset: int, size: int, what: str) -> bytes:
        if offset < 0 or size < 0 or offset + size > self.size:
            raise _Bad(f"{what}: beyond the end of the file")
        if size > self._left:
            raise _Bad(f"reading {what} would pass the {MAX_READ}-byte limit")
        self._left -= size
        data = self._pread(offset, size)
        if len(data) != size:
            raise _Bad(f"{what} was cut short (the file shrank while it was read)")
        return data


def read_elf(pread: Pread, size: int) -> ElfObject | ElfProblem:
    """The object behind ``pread`` (a file of ``size`` bytes), or why it cannot be read."""
    budget = _Budget(pread, size)
    try:
        head = budget.read(0, min(HEAD, size), "the file header")
    except _Bad as e:
        return ElfProblem(str(e), elf=False)
    if head[:4] != MAGIC:
        return ElfProblem("not an ELF object", elf=False)
    try:
        return _parse(budget, head)
    except _Bad as e:
        return ElfProblem(str(e))


def read_arch(head: bytes) -> Arch | None:
    """The class, byte order and machine of the object whose first bytes (20 or more) are ``head``;
    None for anything else: what the loader checks of a candidate before it loads it."""
    if len(head) < 20 or head[:4] != MAGIC or head[6] != 1:
        return None
    bits = {1: 32, 2: 64}.get(head[4])
    little = {1: True, 2: False}.get(head[5])
    if bits is None or little is None:
        return None
    (machine,) = struct.unpack_from("<H" if little else ">H", head, 18)
    return (bits, little, machine)


def _parse(budget: _Budget, head: bytes) -> ElfObject:
    if len(head) < 16:
        raise _Bad("the file header is truncated")
    bits = {1: 32, 2: 64}.get(head[4])
    little = {1: True, 2: False}.get(head[5])
    if bits is None or little is None or head[6] != 1:
        raise _Bad("the file header names no known class, byte order or version")
    order = "<" if little else ">"
    header, phdr, dyn = (struct.Struct(order + f) for f in _LAYOUT[bits])
    if len(head) < 16 + header.size:
        raise _Bad("the file header is truncated")
    e_type, machine, _, _, phoff, _, _, _, phentsize, phnum, _, _, _ = header.unpack_from(head, 16)
    if phentsize != phdr.size and phnum:
        raise _Bad(f"program headers of {phentsize} bytes, not {phdr.size}")
    if phnum * phdr.size > MAX_PHDRS:
        raise _Bad(f"{phnum} program headers, over the limit of {MAX_PHDRS // phdr.size}")
    span = phnum * phdr.size
    table = head[phoff : phoff + span] if phoff + span <= len(head) else budget.read(phoff, span, "the program headers")
    loads: list[tuple[int, int, int]] = []
    dynamic: tuple[int, int] | None = None
    for i in range(phnum):
        fields = phdr.unpack_from(table, i * phdr.size)
        if bits == 32:
            p_type, p_offset, p_vaddr, _, p_filesz = fields[:5]
        else:
            p_type, _, p_offset, p_vaddr, _, p_filesz = fields[:6]
        if p_type == PT_LOAD:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == PT_DYNAMIC:
            dynamic = (p_offset, p_filesz)
    found = ElfObject(bits=bits, little_endian=little, machine=machine, type=e_type)
    if dynamic is None:
        return found  # statically linked: it needs nothing
    return _dynamic(budget, found, dyn, dynamic, loads)


def _dynamic(
    budget: _Budget, found: ElfObject, dyn: struct.Struct, dynamic: tuple[int, int], loads: list[tuple[int, int, int]]
) -> ElfObject:
    offset, filesz = dynamic
    data = budget.read(offset, min(filesz, MAX_DYNAMIC), "the dynamic segment")
    needed: list[int] = []
    last: dict[int, int] = {}  # the loader keeps the last entry of a tag (glibc's get-dynamic-info)
    for tag, value in dyn.iter_unpack(data[: len(data) - len(data) % dyn.size]):
        if tag == DT_NULL:
            break
        if tag == DT_NEEDED:
            needed.append(value)
        elif tag in (DT_STRTAB, DT_STRSZ, DT_SONAME, DT_RPATH, DT_RUNPATH):
            last[tag] = value
    else:
        if filesz > MAX_DYNAMIC:
            raise _Bad(f"the dynamic segment is over the {MAX_DYNAMIC}-byte limit")
    wanted = [*needed, *(last[t] for t in (DT_SONAME, DT_RPATH, DT_RUNPATH) if t in last)]
    if not wanted:
        return found
    if DT_STRTAB not in last or DT_STRSZ not in last:
        raise _Bad("the dynamic section names strings but has no string table")
    table = _file_offset(last[DT_STRTAB], loads)
    strings = _Strings(budget, table, min(last[DT_STRSZ], budget.size - table))
    texts = {index: strings.get(index) for index in sorted(set(wanted))}
    return ElfObject(
        bits=found.bits,
        little_endian=found.little_endian,
        machine=found.machine,
        type=found.type,
        soname=texts[last[DT_SONAME]] if DT_SONAME in last else None,
        needed=tuple(texts[i] for i in needed),
        rpath=texts[last[DT_RPATH]] if DT_RPATH in last else None,
        runpath=texts[last[DT_RUNPATH]] if DT_RUNPATH in last else None,
    )


def _file_offset(address: int, loads: list[tuple[int, int, int]]) -> int:
    """Where the loaded address lies in the file, by the PT_LOAD segment that maps it."""
    for vaddr, offset, filesz in loads:
        if vaddr <= address < vaddr + filesz:
            return address - vaddr + offset
    raise _Bad("the string table lies in no loaded segment")


class _Strings:
    """NUL-terminated strings of the string table, read a window at a time (neighbours share one)."""

    def __init__(self, budget: _Budget, offset: int, size: int) -> None:
        self._budget, self._offset, self._size = budget, offset, size
        self._start, self._window = 0, b""

    def get(self, index: int) -> str:
        if not 0 <= index < self._size:
            raise _Bad("a name points outside the string table")
        at = index - self._start
        end = self._window.find(b"\0", at) if 0 <= at < len(self._window) else -1
        if end < 0:
            span = min(MAX_STRING, self._size - index)
            self._start, self._window, at = index, self._budget.read(self._offset + index, span, "the string table"), 0
            end = self._window.find(b"\0")
            if end < 0:
                limit = "unterminated" if span < MAX_STRING else f"longer than {MAX_STRING} bytes"
                raise _Bad(f"a name in the string table is {limit}")
        return self._window[at:end].decode("utf-8", "surrogateescape")

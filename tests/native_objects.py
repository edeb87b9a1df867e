"""Native objects for the tests: real ones built by gcc, and ELF files written byte by byte.

Every library built here has a constructor that appends its name to a marker file when
anything loads it: a test that finds the marker file written knows that something ran it.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

GCC = shutil.which("gcc") or shutil.which("cc")

_SOURCE = r"""
#include <stdio.h>
__attribute__((constructor)) static void wd_loaded(void) {
    FILE *f = fopen(WD_MARKER, "a");
    if (f) { fputs(WD_NAME "\n", f); fclose(f); }
}
int WD_SYMBOL(void) { return 1; }
"""


def need_gcc() -> str:
    """The C compiler, or skip the test."""
    if GCC is None:
        pytest.skip("needs gcc")
    return GCC


def build_object(
    directory: Path,
    file_name: str,
    *,
    marker: Path,
    soname: str | None = None,
    needs: Sequence[Path] = (),
    runpath: str | None = None,
    rpath: str | None = None,
) -> Path:
    """Compile a shared object ``directory/file_name`` and return its path.

    ``needs``: libraries built here that it links against (each becomes a DT_NEEDED of its
    SONAME); ``runpath`` or ``rpath``: its DT_RUNPATH or DT_RPATH, written as given
    (``$ORIGIN/../lib``). Loading it, by any means, appends ``file_name`` to ``marker``.
    """
    gcc = need_gcc()
    directory.mkdir(parents=True, exist_ok=True)
    source = directory / f".{file_name}.c"
    source.write_text(_SOURCE)
    out = directory / file_name
    symbol = "wd_" + "".join(c if c.isalnum() else "_" for c in file_name)
    cmd = [
        gcc,
        "-shared",
        "-fPIC",
        "-o",
        str(out),
        str(source),
        f'-DWD_MARKER="{marker}"',
        f'-DWD_NAME="{file_name}"',
        f"-DWD_SYMBOL={symbol}",
        "-Wl,--no-as-needed",
    ]
    if soname is not None:
        cmd.append(f"-Wl,-soname,{soname}")
    for lib in needs:
        cmd += [f"-L{lib.parent}", f"-l:{lib.name}"]
    if runpath is not None:
        cmd += ["-Wl,--enable-new-dtags", f"-Wl,-rpath,{runpath}"]
    if rpath is not None:
        cmd += ["-Wl,--disable-new-dtags", f"-Wl,-rpath,{rpath}"]
    subprocess.run(cmd, check=True, capture_output=True)
    source.unlink()
    return out


def elf_bytes(
    *,
    bits: int = 64,
    little: bool = True,
    machine: int = 62,
    elf_type: int = 3,
    needed: Sequence[bytes] = (),
    soname: bytes | None = None,
    rpath: bytes | None = None,
    runpath: bytes | None = None,
    extra_dynamic: Sequence[tuple[int, int]] = (),
) -> bytes:
    """A minimal ELF object written field by field: one PT_LOAD over the whole file, a PT_DYNAMIC.

    The string table and dynamic section follow the program headers; addresses equal file
    offsets. ``extra_dynamic`` entries go before DT_NULL, as written.
    """
    order = "<" if little else ">"
    ehdr_size, phdr_size, dyn_size = (52, 32, 8) if bits == 32 else (64, 56, 16)
    strings = bytearray(b"\0")

    def add(text: bytes) -> int:
        strings.extend(text + b"\0")
        return len(strings) - len(text) - 1

    entries = [(1, add(n)) for n in needed]
    for tag, text in ((14, soname), (15, rpath), (29, runpath)):
        if text is not None:
            entries.append((tag, add(text)))
    strtab = ehdr_size + 2 * phdr_size
    dynamic = strtab + len(strings)
    dynamic += -dynamic % 8
    entries += [(5, strtab), (10, len(strings)), *extra_dynamic, (0, 0)]
    total = dynamic + dyn_size * len(entries)
    ident = b"\x7fELF" + bytes([1 if bits == 32 else 2, 1 if little else 2, 1]) + bytes(9)
    if bits == 32:
        ehdr = struct.pack(
            order + "HHIIIIIHHHHHH", elf_type, machine, 1, 0, ehdr_size, 0, 0, ehdr_size, phdr_size, 2, 0, 0, 0
        )
        load = struct.pack(order + "IIIIIIII", 1, 0, 0, 0, total, total, 5, 0x1000)
        dyn = struct.pack(order + "IIIIIIII", 2, dynamic, dynamic, dynamic, total - dynamic, total - dynamic, 6, 4)
        table = b"".join(struct.pack(order + "iI", t, v) for t, v in entries)
    else:
        ehdr = struct.pack(
            order + "HHIQQQIHHHHHH", elf_type, machine, 1, 0, ehdr_size, 0, 0, ehdr_size, phdr_size, 2, 0, 0, 0
        )
        load = struct.pack(order + "IIQQQQQQ", 1, 5, 0, 0, 0, total, total, 0x1000)
        dyn = struct.pack(order + "IIQQQQQQ", 2, 6, dynamic, dynamic, dynamic, total - dynamic, total - dynamic, 8)
        table = b"".join(struct.pack(order + "qQ", t, v) for t, v in entries)
    body = ident + ehdr + load + dyn + bytes(strings)
    return body + bytes(dynamic - len(body)) + table

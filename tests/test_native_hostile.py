"""Hostile shared objects: names that would drive a terminal, FIFOs, loops, and search lists long and odd.

Everything read from the environment is hostile: what an ELF object names reaches the
reports only made inert, and no file makes the scan block, loop or read without bound.
"""

from __future__ import annotations

import json
import os
import sysconfig
import time
from pathlib import Path

from helpers import VenvFactory, build_wheel, pip_install, run_cli
from native_objects import elf_bytes

from wheeldoctor.model.native import Provider
from wheeldoctor.where.native import scan_native
from wheeldoctor.where.target import Target, load_target

EXT = sysconfig.get_config_var("EXT_SUFFIX") or ".cpython-311-x86_64-linux-gnu.so"
EVIL = b"lib\x1b[2J\x1b]8;;http://x\x07evil\n::error::x.so.1"


def test_names_that_would_drive_a_terminal_reach_every_format_inert(venv_factory: VenvFactory, tmp_path: Path) -> None:
    long_runpath = b":".join(b"/nonexistent/%d/$ORIGIN/$LIB/$PLATFORM" % i for i in range(100))
    wheel = build_wheel(
        tmp_path / "wheels",
        "wdevil",
        "1.0",
        {
            "wdevil/__init__.py": b"",
            f"wdevil/_evil{EXT}": elf_bytes(needed=[EVIL, b"libc.so.6"], runpath=long_runpath[:4000]),
            f"wdevil/_rpath{EXT}": elf_bytes(needed=[b"libwdnowhere.so.1"], rpath=b"$ORIGIN/\xff\xfe/\x1b[31m"),
        },
    )
    venv = venv_factory()
    pip_install(venv, "--no-index", "--no-deps", wheel)
    for fmt in ("text", "github", "junit", "sarif"):
        done = run_cli("check", "--all", "--python", venv.python, "--format", fmt)
        assert done.returncode == 1, done.stderr
        assert "\x1b" not in done.stdout and "\x07" not in done.stdout, fmt
        assert not any(line.startswith("::error::x.so.1") for line in done.stdout.splitlines()), fmt  # no command
    done = run_cli("check", "--all", "--python", venv.python, "--json")
    document = json.loads(done.stdout)
    codes = sorted(f["finding"]["code"] for f in document["native"]["findings"])
    assert codes == ["WD090", "WD090"]
    assert "\x1b" not in done.stdout  # escaped as JSON writes it


def test_fifos_loops_and_missing_objects_are_passed_over_without_blocking(
    venv_factory: VenvFactory, tmp_path: Path
) -> None:
    names = ["libfifo.so.1", "libloop.so.1", "libgone.so.1", "libdir.so.1", "libok.so.1"]
    files = {f"wdodd/lib/{n}": elf_bytes(soname=n.encode(), needed=[b"libc.so.6"]) for n in names}
    wheel = build_wheel(tmp_path / "wheels", "wdodd", "1.0", {"wdodd/__init__.py": b"", **files})
    venv = venv_factory()
    pip_install(venv, "--no-index", "--no-deps", wheel)
    lib = venv.site_packages / "wdodd" / "lib"
    (lib / "libfifo.so.1").unlink()
    os.mkfifo(lib / "libfifo.so.1")
    (lib / "libloop.so.1").unlink()
    os.symlink("libloop.so.1", lib / "libloop.so.1")
    (lib / "libgone.so.1").unlink()
    (lib / "libdir.so.1").unlink()
    (lib / "libdir.so.1").mkdir()
    start = time.monotonic()
    scan = scan_native(load_target(Target(python=str(venv.python))))
    assert time.monotonic() - start < 60  # a FIFO opened for reading would block for ever
    assert [o.recorded for o in scan.objects] == ["wdodd/lib/libok.so.1"]
    assert scan.objects[0].needs[0].provider is Provider.SYSTEM

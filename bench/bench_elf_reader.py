"""Benchmark: wheeldoctor's ELF reader against pyelftools on every shared object of a tree.

Both read what the loader needs (DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH) from every
file named like a shared object below the directories given, and must agree on each. The
two alternate, round by round, in one process; each round's CPU time (user+sys) and the
bytes each asked of the file are printed, with the median and best, and the cost of
importing each reader in a fresh interpreter. pyelftools is not a dependency: give the
directory it is installed in, for instance::

    pip install --target /tmp/pyelftools pyelftools
    python bench/bench_elf_reader.py --pyelftools /tmp/pyelftools .venv/lib/python3.11/site-packages
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from wheeldoctor.formats.elf import read_elf  # noqa: E402
from wheeldoctor.model.native import ElfObject  # noqa: E402

SHARED = re.compile(r"\.so(\.[0-9]+)*$")
Dynamic = tuple[tuple[str, ...], str | None, str | None, str | None]


class Counted:
    """A file read through ``pread``, counting the bytes asked for."""

    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_RDONLY)
        self.bytes = 0

    def pread(self, offset: int, size: int) -> bytes:
        data = os.pread(self.fd, size, offset)
        self.bytes += len(data)
        return data


class CountedStream:
    """A binary stream for pyelftools, counting the bytes it reads."""

    def __init__(self, path: str) -> None:
        self.f = open(path, "rb")  # noqa: SIM115
        self.bytes = 0

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(n)
        self.bytes += len(data)
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.f.seek(offset, whence)

    def tell(self) -> int:
        return self.f.tell()


def ours(path: str) -> tuple[Dynamic | None, int]:
    reader = Counted(path)
    try:
        found = read_elf(reader.pread, os.fstat(reader.fd).st_size)
    finally:
        os.close(reader.fd)
    if not isinstance(found, ElfObject):
        return None, reader.bytes
    return (found.needed, found.soname, found.rpath, found.runpath), reader.bytes


def theirs(path: str) -> tuple[Dynamic | None, int]:
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    stream = CountedStream(path)
    try:
        elf = ELFFile(stream)  # type: ignore[arg-type]
        needed: list[str] = []
        soname = rpath = runpath = None
        for segment in elf.iter_segments():
            if segment["p_type"] != "PT_DYNAMIC":
                continue
            for tag in segment.iter_tags():
                kind = tag.entry.d_tag
                if kind == "DT_NEEDED":
                    needed.append(tag.needed)
                elif kind == "DT_SONAME":
                    soname = tag.soname
                elif kind == "DT_RPATH":
                    rpath = tag.rpath
                elif kind == "DT_RUNPATH":
                    runpath = tag.runpath
        return (tuple(needed), soname, rpath, runpath), stream.bytes
    except ELFError:
        return None, stream.bytes
    finally:
        stream.f.close()


def objects(roots: list[str]) -> list[str]:
    found = []
    for root in roots:
        for parent, _, names in os.walk(root):
            for name in names:
                path = os.path.join(parent, name)
                if SHARED.search(name) and not os.path.islink(path):
                    found.append(path)
    return sorted(found)


def cpu() -> float:
    return time.process_time()


def one_round(read: Callable[[str], tuple[Dynamic | None, int]], paths: list[str]) -> tuple[float, int, list[object]]:
    start, total, answers = cpu(), 0, []
    for path in paths:
        answer, read_bytes = read(path)
        answers.append(answer)
        total += read_bytes
    return cpu() - start, total, answers


def import_cost(code: str, extra: str) -> float:
    """Median wall time of importing a reader in a fresh interpreter, less a bare start."""

    def run(snippet: str) -> float:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), extra]))
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: byte-code written once, then used
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", snippet], check=True, env=env)
        return time.perf_counter() - start

    bare = statistics.median(run("pass") for _ in range(7))
    return statistics.median(run(code) for _ in range(7)) - bare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="+", help="directories to read every shared object below")
    parser.add_argument("--pyelftools", required=True, help="the directory pyelftools is installed in")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    sys.path.insert(0, args.pyelftools)
    paths = objects(args.roots)
    print(f"{len(paths)} files, {sum(os.path.getsize(p) for p in paths) / 2**20:.0f} MiB")
    times: dict[str, list[float]] = {"wheeldoctor": [], "pyelftools": []}
    read_bytes: dict[str, int] = {}
    answers: dict[str, list[object]] = {}
    readers = {"wheeldoctor": ours, "pyelftools": theirs}
    for i in range(args.rounds):
        order = list(readers) if i % 2 == 0 else list(reversed(readers))
        for name in order:
            spent, total, said = one_round(readers[name], paths)
            times[name].append(spent)
            read_bytes[name], answers[name] = total, said
    differ = [p for p, a, b in zip(paths, answers["wheeldoctor"], answers["pyelftools"], strict=True) if a != b]
    for name, spent in times.items():
        print(
            f"{name:12} median {statistics.median(spent) * 1000:7.1f} ms CPU, best {min(spent) * 1000:7.1f} ms, "
            f"{read_bytes[name] / 2**20:7.2f} MiB read ({read_bytes[name] / len(paths) / 1024:.1f} KiB a file)"
        )
    # A command has imported the package, dataclasses and enum already: only the rest is counted.
    base = "import wheeldoctor, dataclasses, enum, struct"
    ours_import = import_cost(f"{base}, wheeldoctor.formats.elf", args.pyelftools) - import_cost(base, args.pyelftools)
    theirs_import = import_cost("import elftools.elf.elffile", args.pyelftools)
    print(f"import: wheeldoctor.formats.elf {ours_import * 1000:.1f} ms, pyelftools {theirs_import * 1000:.1f} ms")
    print(f"answers differ on {len(differ)} file(s)" + "".join(f"\n  {p}" for p in differ[:10]))


if __name__ == "__main__":
    main()

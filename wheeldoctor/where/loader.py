"""Where glibc's dynamic loader finds a needed library, worked out from files alone: nothing is loaded.

For an object's DT_NEEDED name (``_dl_map_object`` in glibc's ``elf/dl-load.c``), in order:

1. DT_RPATH, unless the object has a DT_RUNPATH: its own, then those of the objects that
   loaded it, up the chain, then the interpreter's (the executable's).
2. ``LD_LIBRARY_PATH``: never. It belongs to the process that will run the environment,
   which is not this one; wheeldoctor's own would say something about the wrong process.
3. DT_RUNPATH.
4. ``/etc/ld.so.cache``: the first entry of that name whose flags are the object's ABI
   (entries for ``glibc-hwcaps`` subdirectories, chosen by the CPU at run time, are left out).
5. The default directories.

A candidate must be a regular file of the object's class, byte order and machine; one that
is not is passed over, as the loader passes it over. In a directory list, ``$ORIGIN`` is the
directory of the path the object was found at, ``$PLATFORM`` the machine's name as the
kernel gives it (``x86_64``, ``aarch64``, ``i686``), and ``$LIB`` each of the values glibc
is built with across distributions (``lib64``, ``lib``, ``lib/x86_64-linux-gnu``); a relative
directory (the process's working directory) is not searched. A name with a slash is a path,
not searched for.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from wheeldoctor.formats.elf import read_arch
from wheeldoctor.formats.ld_cache import ABI_FLAGS, GENERIC_FLAGS, CacheEntry, LdCacheError, parse_ld_cache
from wheeldoctor.model.native import Arch
from wheeldoctor.where.filesystem import ReadError, open_regular, read_regular

LD_SO_CACHE = "/etc/ld.so.cache"
#: An ld.so.cache larger than this is not read (a real one is some hundred KiB).
MAX_CACHE = 16 << 20
#: A directory of more entries than this is not listed: its candidates are stat'ed one by one.
MAX_LISTING = 100_000

#: ``$PLATFORM`` by e_machine: the kernel's AT_PLATFORM string.
PLATFORMS = {62: "x86_64", 183: "aarch64", 3: "i686", 21: "ppc64le", 22: "s390x", 40: "v7l", 243: "riscv64"}
#: The multiarch directory name (Debian, Ubuntu) by e_machine.
TRIPLETS = {
    62: "x86_64-linux-gnu",
    183: "aarch64-linux-gnu",
    3: "i386-linux-gnu",
    21: "powerpc64le-linux-gnu",
    22: "s390x-linux-gnu",
    40: "arm-linux-gnueabihf",
    243: "riscv64-linux-gnu",
}

_DST = re.compile(r"\$(?:\{(ORIGIN|LIB|PLATFORM)\}|(ORIGIN|LIB|PLATFORM)(?![A-Za-z0-9_]))")

Inode = tuple[int, int]
"""(st_dev, st_ino): which file a path is, however it was reached."""
Note = Callable[[str], None]
"""Takes a path's fingerprint before it is read or listed (:meth:`wheeldoctor.where.fingerprint.Read.note`)."""


@dataclass(frozen=True, slots=True)
class Found:
    """A needed library found: the path the loader opens, the file it is, and which step found it."""

    path: str
    inode: Inode
    via: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemLibraries:
    """The system's side of the search: ld.so.cache's entries by name, and the default directories."""

    cache: str | None
    """The ld.so.cache read; None when there was none to read."""
    entries: Mapping[str, tuple[CacheEntry, ...]] = field(default_factory=dict)
    problem: str | None = None
    """Why the ld.so.cache could not be used, when it could not."""
    default_dirs: tuple[str, ...] | None = None
    """The default directories; None: glibc's for the object's machine (:func:`default_dirs`)."""


def read_system(
    cache: str = LD_SO_CACHE, default: tuple[str, ...] | None = None, note: Note | None = None
) -> SystemLibraries:
    """The ld.so.cache at ``cache`` (none there is no problem: the loader then uses the directories)."""
    if note is not None:
        note(cache)
    data = read_regular(cache, MAX_CACHE)
    if isinstance(data, ReadError):
        if data.missing:
            return SystemLibraries(cache=None, default_dirs=default)
        return SystemLibraries(cache=cache, problem=f"{cache} {data.message}", default_dirs=default)
    try:
        entries = parse_ld_cache(data)
    except LdCacheError as e:
        return SystemLibraries(cache=cache, problem=f"{cache}: {e}", default_dirs=default)
    by_name: dict[str, list[CacheEntry]] = {}
    for entry in entries:
        by_name.setdefault(entry.name, []).append(entry)
    return SystemLibraries(cache=cache, entries={k: tuple(v) for k, v in by_name.items()}, default_dirs=default)


def default_dirs(arch: Arch) -> tuple[str, ...]:
    """The directories glibc searches last, for an object of ``arch``, as distributions build it.

    Debian's multiarch directories, then ``lib64`` (or ``lib32``), then ``lib``: every
    layout at once, so that no distribution's library is missed; a candidate of another
    machine is passed over anyway.
    """
    bits, _, machine = arch
    triplet = TRIPLETS.get(machine)
    dirs = [f"/lib/{triplet}", f"/usr/lib/{triplet}"] if triplet else []
    suffix = "64" if bits == 64 else "32"
    return (*dirs, f"/lib{suffix}", f"/usr/lib{suffix}", "/lib", "/usr/lib")


def expand(paths: str | None, origin: str, arch: Arch) -> tuple[str, ...]:
    """A DT_RPATH or DT_RUNPATH list as absolute directories: tokens expanded, relative and empty ones dropped."""
    if not paths:
        return ()
    found: dict[str, None] = {}
    # glibc's $LIB is its slibdir without the leading slash: lib64 (Fedora), lib/x86_64-linux-gnu (Debian), lib.
    triplet = TRIPLETS.get(arch[2])
    lib_names = (f"lib{arch[0]}", "lib", *((f"lib/{triplet}",) if triplet else ()))
    platform = PLATFORMS.get(arch[2])
    for entry in paths.split(":"):
        for one in _substituted(entry, origin, lib_names, platform):
            if one.startswith("/"):
                found[one.rstrip("/") or "/"] = None
    return tuple(found)


def _substituted(entry: str, origin: str, lib_names: Sequence[str], platform: str | None) -> list[str]:
    """``entry`` with each token replaced: one string per ``$LIB`` name; none where a token has no value."""
    done = [""]
    at = 0
    for match in _DST.finditer(entry):
        token = match.group(1) or match.group(2)
        values = {"ORIGIN": [origin], "PLATFORM": [platform] if platform else [], "LIB": list(lib_names)}[token]
        if not values:
            return []  # the loader drops a directory whose token it cannot fill
        literal = entry[at : match.start()]
        done = [d + literal + v for d in done for v in dict.fromkeys(values)]
        at = match.end()
    return [d + entry[at:] for d in done]


class LibrarySearch:
    """Finds needed libraries as the loader would; each candidate path is looked at once.

    ``arch_of`` answers for files already read (the environment's own objects, by inode)
    so that their headers are not read again; ``note`` is told every directory listed and
    every candidate looked at, before it is.
    """

    def __init__(self, system: SystemLibraries, arch_of: Mapping[Inode, Arch], note: Note | None = None) -> None:
        self._system = system
        self._arch_of = arch_of
        self._note = note
        self._candidates: dict[str, tuple[Inode, Arch | None] | None] = {}
        self._listings: dict[str, frozenset[str] | None] = {}
        self._found: dict[tuple[str, Arch, tuple[str, ...], tuple[str, ...]], Found | None] = {}

    def find(self, name: str, arch: Arch, rpath: Sequence[tuple[str, str]], runpath: Sequence[str]) -> Found | None:
        """Where ``name``, needed by an object of ``arch``, is found: ``rpath`` as (directory, which
        RPATH) pairs, in order, searched only for an object without a RUNPATH; ``runpath`` its RUNPATH."""
        key = (name, arch, tuple(d for d, _ in rpath), tuple(runpath))
        if key in self._found:
            return self._found[key]
        found = self._search(name, arch, rpath, runpath)
        self._found[key] = found
        return found

    def _search(self, name: str, arch: Arch, rpath: Sequence[tuple[str, str]], runpath: Sequence[str]) -> Found | None:
        if "/" in name:
            return None  # a path (relative to the working directory, or absolute): not searched for
        for directory, via in rpath:
            if (found := self._try(directory, name, arch, via)) is not None:
                return found
        for directory in runpath:
            if (found := self._try(directory, name, arch, "RUNPATH")) is not None:
                return found
        if (found := self._cached(name, arch)) is not None:
            return found
        for directory in self._system.default_dirs or default_dirs(arch):
            if (found := self._try(directory, name, arch, "default directories")) is not None:
                return found
        return None

    def _cached(self, name: str, arch: Arch) -> Found | None:
        """ld.so.cache's answer: the first entry whose flags fit; the loader tries no other."""
        accepted = ABI_FLAGS.get((arch[0], arch[2]), GENERIC_FLAGS)
        for entry in self._system.entries.get(name, ()):
            if entry.hwcaps_subdirectory or entry.flags not in accepted:
                continue
            seen = self._look(entry.path)
            if seen is None or seen[1] != arch:
                return None
            return Found(entry.path, seen[0], "ld.so.cache")
        return None

    def _try(self, directory: str, name: str, arch: Arch, via: str) -> Found | None:
        path = f"{directory}/{name}" if directory != "/" else f"/{name}"
        seen = self._look(path)
        if seen is None or seen[1] != arch:
            return None
        return Found(path, seen[0], via)

    def _look(self, path: str) -> tuple[Inode, Arch | None] | None:
        """The file at ``path`` and its arch (None: no ELF object); None when there is no regular file."""
        if path in self._candidates:
            return self._candidates[path]
        directory, _, name = path.rpartition("/")
        names = self._listing(directory or "/")
        seen = self._candidates[path] = None if names is not None and name not in names else self._read(path)
        return seen

    def _listing(self, directory: str) -> frozenset[str] | None:
        """The names in ``directory``, listed once: most candidates are absent, and a name not
        listed needs no stat. None where it cannot be listed whole (each candidate is stat'ed then)."""
        if directory not in self._listings:
            if self._note is not None:
                self._note(directory)
            self._listings[directory] = _names_in(directory)
        return self._listings[directory]

    def _read(self, path: str) -> tuple[Inode, Arch | None] | None:
        if self._note is not None:
            self._note(path)
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        inode = (st.st_dev, st.st_ino)
        if inode in self._arch_of:
            return inode, self._arch_of[inode]
        opened = open_regular(path)
        if isinstance(opened, ReadError):
            return None
        fd, _ = opened
        try:
            head = os.pread(fd, 64, 0)
        except OSError:
            return None
        finally:
            os.close(fd)
        return inode, read_arch(head)


def _names_in(directory: str) -> frozenset[str] | None:
    """The entries of ``directory`` (none if it does not exist); None past :data:`MAX_LISTING` or unlistable."""
    names: set[str] = set()
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if len(names) >= MAX_LISTING:
                    return None
                names.add(entry.name)
    except (FileNotFoundError, NotADirectoryError):
        return frozenset()
    except (OSError, ValueError):
        return None
    return frozenset(names)

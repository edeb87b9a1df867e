"""The environment's shared objects, read, and each library they need found as the loader would find it.

Which files: every path a RECORD of an active distribution lists whose name is a shared
object's (``NAME.so``, ``NAME.so.12``, ``NAME.cpython-312-x86_64-linux-gnu.so``): the
extension modules, the libraries beside them, and those the ``nvidia-*`` wheels provide.
Each is read once (:mod:`wheeldoctor.formats.elf`, a bounded read) by the ``read`` the caller
gives, by default :func:`read_shared_object`; what a file reads as depends on its bytes
alone, so a caller may answer from a cache kept by the file's fingerprint.

Then the loader's search (:mod:`wheeldoctor.where.loader`) runs from every extension
module, as importing it would load it (the RPATHs of the objects that load a library are
searched for its own needs, as glibc searches them), and for every other object on its own.
A need the search does not find, but that a library of the environment has as its SONAME,
is found ``loaded-first``: packages preload such libraries by path (torch, the nvidia
wheels), and the loader then takes the loaded one by its name. Nothing is ever loaded.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from wheeldoctor.formats.elf import read_elf
from wheeldoctor.formats.record import first_columns_containing
from wheeldoctor.model.environment import Environment, InstalledDistribution
from wheeldoctor.model.fingerprint import Identity, identity
from wheeldoctor.model.native import Arch, ElfObject, ElfProblem, NativeScan, Need, Provider, SharedObject
from wheeldoctor.model.sitedirs import dir_prefix, resolve_recorded
from wheeldoctor.where.environment import METADATA_LIMIT
from wheeldoctor.where.filesystem import ReadError, open_regular, read_regular
from wheeldoctor.where.fingerprint import Read
from wheeldoctor.where.loader import Found, Inode, LibrarySearch, Note, SystemLibraries, expand, read_system

#: A shared object's file name: ``.so``, then any number of ``.N`` version parts.
SHARED_NAME = re.compile(r"\.so(?:\.[0-9]+)*$")
#: A Python extension module's file name (``importlib.machinery.EXTENSION_SUFFIXES``' forms).
EXTENSION_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.(?:cpython|pypy|graalpy)[^./]*|\.abi3)?\.so$")
#: Past this many (object, inherited RPATHs) expansions the search stops following loaders'
#: RPATHs into more objects: a bound on the work hostile chains of RPATHs could make.
MAX_EXPANSIONS = 200_000

Reader = Callable[[str], tuple[Identity | None, ElfObject | ElfProblem]]
"""Reads one file: its fingerprint (None when it could not be opened) and what it reads as."""


def read_shared_object(path: str) -> tuple[Identity | None, ElfObject | ElfProblem]:
    """One file read as the loader reads it; only a regular file is opened (see :mod:`.filesystem`)."""
    opened = open_regular(path)
    if isinstance(opened, ReadError):
        return None, ElfProblem(opened.message, elf=False)
    fd, st = opened
    try:
        return identity(st), read_elf(lambda offset, size: os.pread(fd, size, offset), st.st_size)
    except OSError as e:
        return identity(st), ElfProblem(e.strerror or str(e))
    finally:
        os.close(fd)


@dataclass(slots=True, kw_only=True)
class _Object:
    """One shared object while its needs are worked out."""

    path: str
    recorded: str
    dist: InstalledDistribution
    inode: Inode | None
    elf: ElfObject | None
    problem: ElfProblem | None
    extension: bool
    loaded: bool = False
    needs: list[Need] | None = None


def scan_native(
    env: Environment,
    *,
    system: SystemLibraries | None = None,
    read: Reader = read_shared_object,
    interpreter: str | None = None,
    noted: Read | None = None,
) -> NativeScan:
    """Every shared object of ``env``'s active distributions, with where each of its needs is found.

    ``system`` is the system's side of the search (by default :func:`~.loader.read_system`);
    ``interpreter`` is the executable whose RPATH and machine count (by default ``env``'s,
    else this one's). ``noted`` takes the fingerprint of every path before it is read
    (RECORDs, objects, the interpreter, ld.so.cache, each directory searched and each file
    found there), for a memo to keep the result by (see :mod:`wheeldoctor.engine.native_memo`).
    """
    exe = os.path.realpath(interpreter or env.python or sys.executable)
    note = noted.note if noted is not None else None
    return _scan(env, system or read_system(note=note), read, exe, noted)


def _scan(env: Environment, system: SystemLibraries, read: Reader, exe: str, noted: Read | None) -> NativeScan:
    """The scan itself; ``noted`` takes the fingerprint of every path before it is read."""
    note = noted.note if noted is not None else None
    interpreter = _interpreter(exe, read, noted)
    arch = interpreter.arch if interpreter is not None else None
    objects = [
        _read(path, recorded, dist, extension, read, noted) for dist, path, recorded, extension in _recorded(env, note)
    ]
    by_inode = {o.inode: o for o in objects if o.inode is not None and o.elf is not None}
    search = LibrarySearch(system, {i: o.elf.arch for i, o in by_inode.items() if o.elf is not None}, note=note)
    own_rpath = _interpreter_rpath(exe, interpreter)
    walk = _Walk(search, by_inode, _by_soname(objects), own_rpath)
    ours = [o for o in objects if o.elf is not None and (arch is None or o.elf.arch == arch)]
    walk.run([o for o in ours if o.extension], loaded=True)
    walk.run(ours, loaded=False)
    return NativeScan(
        arch=arch,
        objects=tuple(_shared(o, arch) for o in objects if o.elf is not None or o.problem is None or o.problem.elf),
        cache=system.cache,
        cache_problem=system.problem,
        default_dirs=system.default_dirs or (),
        interpreter_rpath=own_rpath,
    )


def recorded_shared_objects(dist: InstalledDistribution, note: Note | None = None) -> list[str]:
    """The paths ``dist``'s RECORD lists with a shared object's name, as written.

    A RECORD the verification did not parse here (deferred: its workers did, or the cache
    settled it) is read for its first column alone; one with a quoted field is parsed whole,
    as the csv module reads it.
    """
    if dist.record is not None:
        return [p for p in dist.record.listed if ".so" in p and SHARED_NAME.search(p) is not None]
    if not dist.record_deferred:
        return []
    record = os.path.join(dist.path, "RECORD")
    if note is not None:
        note(record)
    data = read_regular(record, METADATA_LIMIT)
    if isinstance(data, ReadError):
        return []
    listed = first_columns_containing(data.decode("utf-8", "surrogateescape"), ".so")
    return [p for p in dict.fromkeys(listed) if SHARED_NAME.search(p) is not None]


def _recorded(env: Environment, note: Note | None) -> Iterator[tuple[InstalledDistribution, str, str, bool]]:
    """(distribution, absolute path, path as recorded, an extension module?) for each shared object listed.

    An extension module has a tagged name (``.cpython-312-x86_64-linux-gnu.so``, ``.abi3.so``),
    or a plain one (``_speedups.so``) in a package directory (one with an ``__init__.py``).
    """
    for dist in env.active():
        prefix = dir_prefix(dist.location)
        for recorded in sorted(recorded_shared_objects(dist, note)):
            path = resolve_recorded(recorded, prefix, dist.location, dist.root)
            if path is None:
                continue
            name = recorded.rpartition("/")[2]
            extension = EXTENSION_NAME.match(name) is not None and (name.count(".") > 1 or _in_package(path, note))
            yield dist, path, recorded, extension


def _in_package(path: str, note: Note | None) -> bool:
    """Whether ``path`` lies in a package directory: one with an ``__init__.py``."""
    init = os.path.join(os.path.dirname(path), "__init__.py")
    if note is not None:
        note(init)
    return os.path.isfile(init)


def _read(
    path: str, recorded: str, dist: InstalledDistribution, extension: bool, read: Reader, noted: Read | None
) -> _Object:
    if noted is not None:
        noted.note(path)
    fingerprint, found = read(path)
    if noted is not None and fingerprint is None and noted.fingerprints.get(path) is not None:
        noted.doubt()  # there, but not read (a permission, an I/O error): what was read is not what is there
    inode = (fingerprint[4], fingerprint[3]) if fingerprint is not None else None
    elf = found if isinstance(found, ElfObject) else None
    problem = found if isinstance(found, ElfProblem) else None
    return _Object(path=path, recorded=recorded, dist=dist, inode=inode, elf=elf, problem=problem, extension=extension)


def _interpreter(path: str, read: Reader, noted: Read | None) -> ElfObject | None:
    if noted is not None:
        noted.note(path)
    _, found = read(path)
    return found if isinstance(found, ElfObject) else None


def _interpreter_rpath(path: str, exe: ElfObject | None) -> tuple[str, ...]:
    """The executable's DT_RPATH (ignored where it has a RUNPATH), ``$ORIGIN`` its (real) directory."""
    if exe is None or exe.runpath is not None:
        return ()
    return expand(exe.rpath, os.path.dirname(path), exe.arch)


def _by_soname(objects: list[_Object]) -> dict[tuple[Arch, str], _Object]:
    """The environment's libraries by (arch, SONAME): the first by path where several share one."""
    found: dict[tuple[Arch, str], _Object] = {}
    for o in sorted(objects, key=lambda o: o.path):
        if o.elf is not None and o.elf.soname is not None:
            found.setdefault((o.elf.arch, o.elf.soname), o)
    return found


#: Which of two findings of one need a report keeps: found by the search, then loaded first.
_RANK = {Provider.ENVIRONMENT: 2, Provider.SYSTEM: 2, Provider.LOADED_FIRST: 1, Provider.UNRESOLVED: 0}


class _Walk:
    """The loader's search from a set of objects, following what each loads (with its RPATHs)."""

    def __init__(
        self,
        search: LibrarySearch,
        by_inode: dict[Inode, _Object],
        by_soname: dict[tuple[Arch, str], _Object],
        interpreter_rpath: tuple[str, ...],
    ) -> None:
        self._search, self._by_inode, self._by_soname = search, by_inode, by_soname
        self._interpreter = tuple((d, "RPATH of the interpreter") for d in interpreter_rpath)
        self._expanded: set[tuple[str, tuple[str, ...]]] = set()

    def run(self, starts: list[_Object], *, loaded: bool) -> None:
        """Search from each of ``starts`` as loaded directly (by import, or by path); mark what is
        reached ``loaded`` when it is; objects already searched with the same RPATHs are not again."""
        stack: list[tuple[_Object, tuple[str, ...]]] = [(o, ()) for o in reversed(starts)]
        while stack:
            obj, inherited = stack.pop()
            obj.loaded = obj.loaded or loaded
            key = (obj.path, inherited)
            if key in self._expanded or len(self._expanded) >= MAX_EXPANSIONS:
                continue
            self._expanded.add(key)
            assert obj.elf is not None
            own = expand(obj.elf.rpath, os.path.dirname(obj.path), obj.elf.arch) if obj.elf.runpath is None else ()
            found = self._needs(obj.elf, os.path.dirname(obj.path), own, inherited)
            needs = [need for need, _ in found]
            obj.needs = needs if obj.needs is None else [_better(a, b) for a, b in zip(obj.needs, needs, strict=True)]
            passed_on = tuple(dict.fromkeys((*own, *inherited)))  # the chain of loaders' RPATHs, nearest first
            stack.extend((child, passed_on) for _, child in reversed(found) if child is not None)

    def _needs(
        self, elf: ElfObject, origin: str, own: tuple[str, ...], inherited: tuple[str, ...]
    ) -> list[tuple[Need, _Object | None]]:
        """Each need of ``elf`` and, where the environment provides it, the object that does."""
        if elf.runpath is None:
            rpath = [(d, "RPATH") for d in own]
            rpath += [(d, "RPATH of a loader") for d in inherited if d not in own]
            rpath += self._interpreter
            runpath: tuple[str, ...] = ()
        else:
            rpath, runpath = [], expand(elf.runpath, origin, elf.arch)
        return [self._need(name, elf.arch, rpath, runpath) for name in elf.needed]

    def _need(
        self, name: str, arch: Arch, rpath: list[tuple[str, str]], runpath: tuple[str, ...]
    ) -> tuple[Need, _Object | None]:
        found: Found | None = self._search.find(name, arch, rpath, runpath)
        if found is not None:
            child = self._by_inode.get(found.inode)
            provider = Provider.ENVIRONMENT if child is not None else Provider.SYSTEM
            owner = child.dist.name if child is not None else None
            return Need(name=name, provider=provider, path=found.path, owner=owner, via=found.via), child
        first = self._by_soname.get((arch, name))
        if first is not None:
            need = Need(name=name, provider=Provider.LOADED_FIRST, path=first.path, owner=first.dist.name, via="SONAME")
            return need, first
        return Need(name=name, provider=Provider.UNRESOLVED), None


def _better(kept: Need, new: Need) -> Need:
    return new if _RANK[new.provider] > _RANK[kept.provider] else kept


def _shared(o: _Object, arch: Arch | None) -> SharedObject:
    return SharedObject(
        path=o.path,
        recorded=o.recorded,
        owner=o.dist.name,
        version=o.dist.version,
        location=o.dist.location,
        elf=o.elf,
        problem=o.problem,
        foreign=o.elf is not None and arch is not None and o.elf.arch != arch,
        extension=o.extension,
        loaded=o.loaded,
        needs=tuple(o.needs or ()),
    )

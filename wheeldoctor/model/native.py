"""Native libraries as the dynamic loader sees them: ELF objects, what each needs, and where it is found.

Plain data: :mod:`wheeldoctor.formats.elf` reads an :class:`ElfObject` from a file,
:mod:`wheeldoctor.where.loader` finds each needed library as glibc's loader would, and
:mod:`wheeldoctor.judge.native` judges the result. What one file reads as depends on its
bytes alone, so it can be kept by the file's fingerprint; where its needs are found
depends on the other files, and is worked out every run.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

#: e_machine values, named as the loader's ``$PLATFORM`` and the reports name them.
MACHINES = {
    3: "i386",
    8: "mips",
    20: "ppc",
    21: "ppc64",
    22: "s390",
    40: "arm",
    62: "x86_64",
    183: "aarch64",
    243: "riscv",
    258: "loongarch",
}

Arch = tuple[int, bool, int]
"""What the loader requires of two objects linked together: class (32, 64), little-endian, e_machine."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ElfObject:
    """An ELF object's identity for the loader and its dynamic section's names, as written.

    ``rpath`` and ``runpath`` are the raw colon-separated lists (``$ORIGIN`` unexpanded);
    names are decoded as file names are (undecodable bytes kept as surrogates).
    """

    bits: int
    """32 or 64 (EI_CLASS)."""
    little_endian: bool
    machine: int
    """e_machine (62 for x86-64, 183 for aarch64, 3 for i386)."""
    type: int
    """e_type: 3 for a shared object (or a position-independent executable), 2 for a fixed-address executable."""
    soname: str | None = None
    needed: tuple[str, ...] = ()
    rpath: str | None = None
    runpath: str | None = None

    @property
    def arch(self) -> Arch:
        """Class, byte order and machine: what the loader requires a dependency to share."""
        return (self.bits, self.little_endian, self.machine)


def arch_name(arch: Arch) -> str:
    """``x86_64``, ``i386``, ``arm (32-bit)``, ``machine 99 (64-bit)``: for reports."""
    bits, _, machine = arch
    name = MACHINES.get(machine, f"machine {machine}")
    return name if bits == 64 or name == "i386" else f"{name} ({bits}-bit)"


@dataclass(frozen=True, slots=True)
class ElfProblem:
    """Why an object's dynamic section could not be read; ``elf`` is False when it is no ELF file at all."""

    message: str
    elf: bool = True


class Provider(str, Enum):
    """Where a needed library comes from; the JSON ``provider`` field."""

    #: The loader's search finds a file that a distribution of the environment installed.
    ENVIRONMENT = "environment"
    #: Not on the object's search path, but a library of the environment has that SONAME: it
    #: serves once loaded first (as torch and the nvidia wheels preload theirs by path).
    LOADED_FIRST = "loaded-first"
    #: The loader's search finds a file no distribution recorded: the system's (ld.so.cache,
    #: default directories), or one a path names outside the records (conda's ``lib``).
    SYSTEM = "system"
    UNRESOLVED = "unresolved"


@dataclass(frozen=True, slots=True, kw_only=True)
class Need:
    """One DT_NEEDED entry and where it is found."""

    name: str
    provider: Provider
    path: str | None = None
    """The file found (as the loader opens it); None when none is."""
    owner: str | None = None
    """The distribution that installed it, when one of the environment's did."""
    via: str | None = None
    """Which step found it: ``RUNPATH``, ``RPATH``, ``RPATH of a loader``, ``ld.so.cache``,
    ``default directories``, ``SONAME``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SharedObject:
    """One file of the environment that the loader could load, and what it needs."""

    path: str
    """Absolute, as RECORD resolves it."""
    recorded: str
    """As RECORD writes it (relative to ``location``)."""
    owner: str
    version: str
    location: str
    elf: ElfObject | None
    problem: ElfProblem | None = None
    """Why it could not be read (``elf`` is None then)."""
    foreign: bool = False
    """Built for another class or machine than the interpreter: never loaded by it, not judged."""
    extension: bool = False
    """Named as a Python extension module: the interpreter loads it on import."""
    loaded: bool = False
    """An extension module, or needed (transitively) by one: a failure to load it fails an import."""
    needs: tuple[Need, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class NativeScan:
    """The environment's shared objects, each need found (or not) as the loader would find it."""

    arch: Arch | None
    """The interpreter's; None when it could not be read (every object is then judged)."""
    objects: tuple[SharedObject, ...]
    cache: str | None
    """The ld.so.cache read, or None when there is none."""
    cache_problem: str | None = None
    """Why the ld.so.cache could not be used, if it could not."""
    default_dirs: tuple[str, ...] = ()
    interpreter_rpath: tuple[str, ...] = ()
    """The interpreter's own DT_RPATH, expanded: every object without a RUNPATH searches it too."""

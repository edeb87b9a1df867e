"""Files as seen on disk: what was asked of each, and what was found.

Plain data every stage shares: the disk stage produces it, the checks judge it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from enum import Enum
from typing import NamedTuple

Progress = Callable[[int, int], None]
"""Called as ``progress(files, bytes)`` after each file, from worker threads."""


class FileStatus(str, Enum):
    """What happened when a file was looked at."""

    HASHED = "hashed"
    #: A regular file whose size matched no candidate, so it was deliberately not read.
    SIZE_ONLY = "size-only"
    MISSING = "missing"
    NOT_REGULAR = "not-regular"
    UNREADABLE = "unreadable"
    CHANGED = "changed"


# HashRequest, Fingerprint and FileState are immutable named tuples rather than frozen
# dataclasses: one of each is made per recorded file, and on tens of thousands of small
# files a frozen dataclass's __init__ (a setattr per field) costs more than the hashing.


class HashRequest(NamedTuple):
    """A file to digest with ``algorithms``.

    ``sizes``, when given, are the sizes at which the bytes could match anything
    recorded: a file of another size is stat'ed but never read, unless ``evidence``
    asks for it to be read anyway (it is a finding already): then its whole digest is
    taken, and, for each of ``sizes`` below its size, the digest of that many first
    bytes (``FileState.prefixes``), in the same pass.
    """

    path: str
    algorithms: frozenset[str]
    sizes: frozenset[int] | None = None
    evidence: bool = False

    @property
    def size_hint(self) -> int:
        """Expected size, for scheduling the biggest files first."""
        return max(self.sizes) if self.sizes else 0


class Fingerprint(NamedTuple):
    """What identifies one version of a file's content without reading it."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    device: int

    @classmethod
    def of(cls, st: os.stat_result) -> Fingerprint:
        """Take the fingerprint of a stat result."""
        return cls(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


class FileState(NamedTuple):
    """The outcome for one file: its size and digests, or why there are none."""

    status: FileStatus
    size: int | None = None
    digests: tuple[tuple[str, bytes], ...] = ()
    detail: str = ""
    links: int = 1
    fingerprint: Fingerprint | None = None
    #: The digests came from the cache: they were not computed by this process.
    cached: bool = False
    #: For a file read as evidence: (recorded size below its own, digests of that many first bytes).
    prefixes: tuple[tuple[int, tuple[tuple[str, bytes], ...]], ...] = ()

    def prefix_digest(self, size: int, algorithm: str) -> bytes | None:
        """The raw digest of the first ``size`` bytes with ``algorithm``, if it was computed."""
        for cut, digests in self.prefixes:
            if cut == size:
                return next((value for name, value in digests if name == algorithm), None)
        return None

    def digest(self, algorithm: str) -> bytes | None:
        """The raw digest for ``algorithm``, if it was computed."""
        for name, value in self.digests:
            if name == algorithm:
                return value
        return None


Known = Callable[[str], FileState | None]
"""Digests already known for a path (HASHED, with the fingerprint they were taken at), or None."""

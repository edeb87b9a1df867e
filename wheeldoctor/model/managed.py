"""Who manages a distribution: the tool that installed it, and that tool's own record of its files.

Plain data, read once per environment by :mod:`wheeldoctor.where.managers` and judged by
:mod:`wheeldoctor.judge.managed`. A system package manager (dpkg, rpm, conda) keeps its
own digests of what it installed; for the distributions it manages those decide, not RECORD.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple


class Tool(str, Enum):
    """The tool that manages a distribution's files; the JSON ``managed_by.tool``."""

    DPKG = "dpkg"
    RPM = "rpm"
    CONDA = "conda"
    PIP = "pip"
    UV = "uv"
    UNKNOWN = "unknown"

    @property
    def system(self) -> bool:
        """A package manager of the system or of conda: pip and uv must not touch its files."""
        return self in (Tool.DPKG, Tool.RPM, Tool.CONDA)


class DistroFile(NamedTuple):
    """One file as the package manager recorded it: absolute path, digest, size when known.

    A named tuple: one is made per packaged file.
    """

    path: str
    algorithm: str
    """``md5`` for dpkg's md5sums, ``sha256`` for conda's paths_data."""
    digest: bytes
    size: int | None = None


class DistroVerdict(NamedTuple):
    """What the manager's own verifier said about one file (``rpm -V``)."""

    path: str
    missing: bool
    flags: str
    """rpm's attribute flags as printed (``S.5....T.``): S size, 5 digest, M mode, ..."""


@dataclass(frozen=True, slots=True)
class ManagedBy:
    """The manager of one distribution and its record of the distribution's files.

    ``files`` empty and ``verdicts`` None means the manager keeps no usable record here
    (``unverifiable`` then says why, when that matters); the caller falls back to RECORD.
    """

    tool: Tool
    package: str | None = None
    """The system package that ships the distribution (``python3-yaml``), when there is one."""
    version: str | None = None
    """The package's version as its manager spells it (``6.0-3+b2``)."""
    record: str | None = None
    """Where the manager's record was read (``/var/lib/dpkg/info/python3-yaml.md5sums``)."""
    files: tuple[DistroFile, ...] = ()
    skipped: frozenset[str] = frozenset()
    """Paths the manager deliberately did not install (dpkg's path-exclude): missing is fine."""
    verdicts: tuple[DistroVerdict, ...] | None = None
    """``rpm -V``'s findings, when rpm itself was asked: only altered files are listed."""
    unverifiable: str | None = None
    """Why the manager's record could not be used, when it could not."""
    detail: str | None = None
    """How the manager was recognised (``INSTALLER``, ``/var/lib/dpkg/info/python3-yaml.list``)."""

    @property
    def judges(self) -> bool:
        """Whether the manager's record, not RECORD, decides this distribution's verdict."""
        return self.tool.system and (bool(self.files) or self.verdicts is not None or self.unverifiable is not None)

"""An environment as read once: its distributions, their metadata and RECORDs, as plain data."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from wheeldoctor.model.findings import Finding
from wheeldoctor.model.managed import ManagedBy
from wheeldoctor.model.record import Record
from wheeldoctor.model.startup import Startup


@dataclass(frozen=True, slots=True)
class MetadataDir:
    """A ``.dist-info`` or ``.egg-info`` entry found in a site directory."""

    path: str
    location: str
    key: str
    """The name from the directory, normalised as ``importlib.metadata`` does for lookups."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Metadata:
    """The parts of METADATA that the checks use, still as text (packaging parses them)."""

    name: str
    version: str
    requires_dist: tuple[str, ...] = ()
    requires_python: str | None = None
    provides_extra: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class InstalledDistribution:
    """One installed distribution: where its metadata is, and its parsed RECORD."""

    name: str
    """Canonical name (PEP 503) when metadata was read; the lookup key otherwise."""
    version: str
    path: str
    location: str
    root: str
    """The environment root that every recorded path must stay inside."""
    installer: str | None
    record: Record | None
    problems: tuple[Finding, ...] = ()
    metadata: Metadata | None = None
    active: bool = True
    wheel_tags: tuple[str, ...] = ()
    record_identity: tuple[int, int, int, int, int] | None = None
    """RECORD's fingerprint (size, mtime_ns, ctime_ns, inode, device), taken before it was
    read; None if it changed too recently to key the verification cache on."""
    managed_by: ManagedBy | None = None
    """Who manages its files (see :mod:`wheeldoctor.where.managers`); None when not asked."""
    record_deferred: bool = False
    """RECORD is read later, where it is verified (see :func:`with_record`): ``record`` and
    ``record_identity`` are still None and no finding about RECORD is in ``problems``."""

    @property
    def directory(self) -> str:
        """The metadata directory's own name (``six-1.17.0.dist-info``)."""
        return os.path.basename(self.path)

    @property
    def legacy(self) -> bool:
        """Whether this is an ``.egg-info`` install, which has no RECORD by design."""
        return self.path.lower().endswith(".egg-info")

    @property
    def system_managed(self) -> bool:
        """Whether a system package manager or conda holds it: its files are that manager's to judge."""
        return self.managed_by is not None and self.managed_by.tool.system


@dataclass(frozen=True, slots=True, kw_only=True)
class LockedSource:
    """Where a lock takes a package from, for its reinstall: at most one of these is set."""

    index: str | None = None
    """The index URL (``https://…/simple``): the reinstall asks it alone for ``NAME==VERSION``."""
    wheel: str | None = None
    """The locked wheel itself: an absolute local path, or an http(s) URL (``NAME @ URL``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Environment:
    """An environment as read once: its search path and every distribution on it."""

    label: str
    python: str | None
    paths: tuple[str, ...]
    prefixes: tuple[str, ...]
    distributions: tuple[InstalledDistribution, ...]
    markers: tuple[tuple[str, str], ...] = field(default=())
    tags: tuple[str, ...] | None = None
    """The target interpreter's supported wheel tags, best first; None when not gathered."""
    startup: Startup | None = None
    """How ``paths`` was built, with the site directories and the .pth files read there."""
    externally_managed: str | None = None
    """The interpreter's PEP 668 ``EXTERNALLY-MANAGED`` marker, when it has one and is no venv."""
    venv: str | None = None
    """The venv's prefix, when the interpreter runs one: its pip installs there, and nowhere else."""
    managers: tuple[str, ...] = ()
    """Which package managers' records were read for this environment, for the report."""
    system_files: Mapping[str, str] = field(default_factory=dict)
    """Path -> the system package (dpkg's, conda's) that installed it, for the files those
    managers list under the site directories and the standard library; empty when none was read."""
    locked: Mapping[str, str] = field(default_factory=dict)
    """Canonical name -> the version the lock given with ``--lock`` pins (name and version
    validated for a command line): what a repair reinstalls. Empty without a lock."""
    locked_sources: Mapping[str, LockedSource] = field(default_factory=dict)
    """Canonical name -> where the lock takes it from (validated for a command line); a
    reinstall at the locked version takes it from there. Empty without a lock."""

    def active(self) -> list[InstalledDistribution]:
        """The distributions Python would use: the first of each name."""
        return [d for d in self.distributions if d.active]

    def find(self, name: str) -> InstalledDistribution | None:
        """The active distribution of canonical ``name``, if installed."""
        return next((d for d in self.distributions if d.active and d.name == name), None)

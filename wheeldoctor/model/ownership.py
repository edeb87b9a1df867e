"""Who installed a file, and the files nobody did: the owners map's answers as data."""

from __future__ import annotations

import os
from dataclasses import dataclass

from wheeldoctor.model.findings import Finding

#: The ``distribution`` an accept rule names for what nobody owns: not a valid project name,
#: so no real distribution can be mistaken for it.
UNOWNED = "(unowned)"


@dataclass(frozen=True, slots=True, kw_only=True)
class Owner:
    """Who installed a file: a distribution or (``system``) a system package.

    ``recorded`` is the hash the distribution's RECORD gives for the file (``sha256=…``),
    when it gives one; ``dist_info`` the distribution's own ``.dist-info`` (or ``.egg-info``)
    directory, so that what it says about itself is read from that copy and no other.
    """

    name: str
    version: str | None
    system: bool = False
    recorded: str | None = None
    dist_info: str | None = None

    @property
    def label(self) -> str:
        """``name version`` for a distribution, ``name (system package)`` otherwise."""
        if self.system:
            return f"{self.name} (system package)"
        return f"{self.name} {self.version}"


@dataclass(frozen=True, slots=True, kw_only=True)
class UnownedFile:
    """A file nobody recorded; ``importable`` is the top-level name it makes importable, if any."""

    path: str
    site_dir: str
    importable: str | None = None
    claimed_by: str | None = None
    """A distribution that records none of its files and probably installed this one."""

    @property
    def relative(self) -> str:
        """The path below its site directory."""
        return os.path.relpath(self.path, self.site_dir)


@dataclass(frozen=True, slots=True)
class UnownedImport:
    """A top-level name that unowned files make importable: a WD072 finding and where."""

    site_dir: str
    finding: Finding

    @property
    def subject(self) -> str:
        """Whose finding it is, for accept rules' ``distribution``: nobody's."""
        return UNOWNED


@dataclass(frozen=True, slots=True, kw_only=True)
class UnownedScan:
    """Every unowned file of the site directories, and the WD072 findings among them."""

    files: tuple[UnownedFile, ...]
    importable: tuple[UnownedImport, ...]
    scanned: int
    """Files looked at, owned or not."""
    site_dirs: tuple[str, ...]

    @property
    def findings(self) -> tuple[Finding, ...]:
        """The WD072 findings, one per importable top-level name."""
        return tuple(i.finding for i in self.importable)

"""Several dist-infos of one project: stale ones in one directory, shadowed ones across sys.path.

Pure: reads ``Environment.distributions``, which keeps every metadata directory in the
order Python searches them (sys.path order, then directory listing order) and marks all
but the first of each name inactive. The first is the one Python uses: the one
``importlib.metadata`` and pip read (pip hides the rest; ``pip check`` never mentions them).

* Stale: two or more dist-infos of one project in one directory. One is left over from an
  interrupted install or upgrade; which one importlib.metadata reports depends on the
  directory's listing order, so it can change when the directory is copied. A problem.
  Which one's files are on disk is told by verifying them (:mod:`wheeldoctor.judge.stale`):
  the clean-up keeps that one, whichever Python reads first.
* Shadowed: the project is also installed in a later sys.path directory. Python never
  imports that copy; often intended (a venv over system site-packages), so a warning.

Nothing here deletes anything: the remedies are installer commands, which remove exactly
the files a dist-info's RECORD lists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from wheeldoctor.model.environment import Environment, InstalledDistribution
from wheeldoctor.model.findings import Code

if TYPE_CHECKING:  # deps reads metadata alone: the verdict's module (and the file judge) only where one is made
    from wheeldoctor.judge.stale import StaleVerdict


class DuplicateKind(str, Enum):
    """What sort of duplicate; the JSON ``kind`` field."""

    STALE = "stale"
    SHADOWED = "shadowed"


@dataclass(frozen=True, slots=True, kw_only=True)
class Duplicate:
    """Every metadata directory of one project, in the order Python searches them."""

    name: str
    distributions: tuple[InstalledDistribution, ...]
    """The first is the one Python uses."""
    stale: tuple[InstalledDistribution, ...]
    """Inactive ones sharing a directory with another of the same name."""
    shadowed: tuple[InstalledDistribution, ...]
    """Inactive ones alone in a later directory."""
    files: StaleVerdict | None = None
    """Whose files the dist-infos where Python looks first hold, where they were verified (stale ones only)."""

    @property
    def keep(self) -> InstalledDistribution:
        """The dist-info the clean-up keeps: the one whose files are on disk where that is known, else the active."""
        kept = self.files.keep if self.files is not None else None
        return next((d for d in self.distributions if kept is not None and d.path == kept.path), self.active)

    @property
    def here(self) -> tuple[InstalledDistribution, ...]:
        """Every dist-info of the project in the directory Python reads it from, the active first."""
        return tuple(d for d in self.distributions if d.location == self.active.location)

    @property
    def active(self) -> InstalledDistribution:
        """The one importlib.metadata and pip read: first on sys.path, then in directory order."""
        return self.distributions[0]

    @property
    def kind(self) -> DuplicateKind:
        """STALE when any dist-info is stale (the failing case), else SHADOWED."""
        return DuplicateKind.STALE if self.stale else DuplicateKind.SHADOWED

    @property
    def code(self) -> Code:
        """WD050 for stale dist-infos, WD051 for shadowing only."""
        return Code.DUPLICATE_DIST_INFO if self.stale else Code.SHADOWED

    @property
    def failing(self) -> bool:
        """Whether it fails the run: a stale dist-info does, shadowing alone does not."""
        return bool(self.stale)

    @property
    def message(self) -> str:
        """One line: which one Python uses and what the others are."""
        parts = [f"{len(self.distributions)} dist-infos; Python uses {_where(self.active)}"]
        keep = self.keep
        if keep is not self.active:
            parts.append(f"the files on disk are {keep.version}'s ({keep.path})")
        if self.stale:
            parts.append("stale: " + ", ".join(_where(d) for d in self.here if d is not keep))
        if self.shadowed:
            parts.append("shadowed, never imported: " + ", ".join(_where(d) for d in self.shadowed))
        return "; ".join(parts)


def _where(dist: InstalledDistribution) -> str:
    return f"{dist.path} ({dist.version})"


def find_duplicates(env: Environment, files: Mapping[str, StaleVerdict] | None = None) -> list[Duplicate]:
    """Every project with more than one metadata directory on the path, by name.

    ``files`` are the verdicts on whose files stale dist-infos hold, by name, where they were verified.
    """
    groups: dict[str, list[InstalledDistribution]] = {}
    packaged: set[tuple[str, str, str]] = set()
    for dist in env.distributions:
        managed = dist.managed_by
        if managed is not None and managed.tool.system and managed.package:
            # Debian ships a dist-info and an egg-info of one project in one package: one
            # installation that its package manager owns and removes, not a stale duplicate.
            key = (dist.name, dist.location, f"{managed.tool.value}:{managed.package}")
            if key in packaged:
                continue
            packaged.add(key)
        groups.setdefault(dist.name, []).append(dist)
    duplicates = []
    for name, dists in sorted(groups.items()):
        if len(dists) < 2:
            continue
        seen_in = {dists[0].location}
        stale: list[InstalledDistribution] = []
        shadowed: list[InstalledDistribution] = []
        for dist in dists[1:]:
            (stale if dist.location in seen_in else shadowed).append(dist)
            seen_in.add(dist.location)
        verdict = (files or {}).get(name) if stale else None
        duplicates.append(
            Duplicate(
                name=name, distributions=tuple(dists), stale=tuple(stale), shadowed=tuple(shadowed), files=verdict
            )
        )
    return duplicates


def stale_groups(env: Environment, names: set[str] | None = None) -> dict[str, tuple[InstalledDistribution, ...]]:
    """By name (of ``names``, None: every one): the dist-infos of a project sharing the directory of the active one."""
    groups: dict[str, tuple[InstalledDistribution, ...]] = {}
    for duplicate in find_duplicates(env):
        if duplicate.stale and (names is None or duplicate.name in names):
            groups[duplicate.name] = duplicate.here
    return groups

"""Several dist-infos of one project: stale ones in one directory, shadowed ones across sys.path.

Pure: reads ``Environment.distributions``, which keeps every metadata directory in the
order Python searches them (sys.path order, then directory listing order) and marks all
but the first of each name inactive. The first is the one Python uses: the one
``importlib.metadata`` and pip read (pip hides the rest; ``pip check`` never mentions them).

* Stale: two or more dist-infos of one project in one directory. One is left over from an
  interrupted install or upgrade; which one importlib.metadata reports depends on the
  directory's listing order, so it can change when the directory is copied. A problem.
* Shadowed: the project is also installed in a later sys.path directory. Python never
  imports that copy; often intended (a venv over system site-packages), so a warning.

Nothing here deletes anything: the remedies are installer commands, which remove exactly
the files a dist-info's RECORD lists.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from enum import Enum

from wheeldoctor.model.findings import Code
from wheeldoctor.where.environment import Environment, InstalledDistribution


class DuplicateKind(str, Enum):
    """What sort of duplicate; the JSON ``kind`` field."""

    STALE = "stale"
    SHADOWED = "shadowed"


@dataclass(frozen=True, slots=True)
class Duplicate:
    """Every metadata directory of one project, in the order Python searches them."""

    name: str
    distributions: tuple[InstalledDistribution, ...]
    """The first is the one Python uses."""
    stale: tuple[InstalledDistribution, ...]
    """Inactive ones sharing a directory with another of the same name."""
    shadowed: tuple[InstalledDistribution, ...]
    """Inactive ones alone in a later directory."""

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
        if self.stale:
            parts.append("stale: " + ", ".join(_where(d) for d in self.stale))
        if self.shadowed:
            parts.append("shadowed, never imported: " + ", ".join(_where(d) for d in self.shadowed))
        return "; ".join(parts)


def _where(dist: InstalledDistribution) -> str:
    return f"{dist.path} ({dist.version})"


def find_duplicates(env: Environment) -> list[Duplicate]:
    """Every project with more than one metadata directory on the path, by name."""
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
        duplicates.append(Duplicate(name, tuple(dists), tuple(stale), tuple(shadowed)))
    return duplicates


def remedy(duplicate: Duplicate, env: Environment) -> tuple[str, ...]:
    """:func:`remedy_argvs`, as lines to paste, in order."""
    return tuple(shlex.join(argv) for argv in remedy_argvs(duplicate, env))


def remedy_argvs(duplicate: Duplicate, env: Environment) -> tuple[tuple[str, ...], ...]:
    """The commands that leave one clean install where Python looks first; empty when none is stale there.

    Each uninstall removes one dist-info and exactly the files its RECORD lists, so a stale
    record may take files the live version also owns: hence the reinstall comes last.
    pip uninstalls the first distribution of a name it finds, one per call (``pip install
    --force-reinstall`` removes only that one too, leaving the stale one behind); uv removes
    every distribution of the name in the environment, or in ``--target DIR``.
    """
    active = duplicate.active
    count = 1 + sum(1 for d in duplicate.stale if d.location == active.location)
    if count == 1 or any(_system(d) for d in duplicate.distributions if d.location == active.location):
        # pip or uv would remove files a system package manager owns: that manager decides.
        return ()
    from wheeldoctor.repair.steps import pip_runner, reaching, with_override

    spec = f"{active.name}=={active.version}"
    python = reaching(active, env)
    if python is None:
        return (
            _uv("uninstall", None, "--target", active.location, active.name),
            _uv("install", None, "--target", active.location, "--no-deps", spec),
        )
    if (active.installer or "").lower() == "uv":
        return (with_override(_uv("install", python, "--reinstall-package", active.name, "--no-deps", spec), env),)
    pip = pip_runner(env)
    uninstall = with_override((*pip, "uninstall", "-y", active.name), env)
    return (*([uninstall] * count), with_override((*pip, "install", "--no-deps", spec), env))


def _system(dist: InstalledDistribution) -> bool:
    return dist.managed_by is not None and dist.managed_by.tool.system


def removal_elsewhere(duplicate: Duplicate, env: Environment) -> dict[str, str | None]:
    """For each later directory holding copies Python never imports: the command that removes them.

    None when a tool other than pip or uv installed them there: that tool must remove them.
    Optional: a copy in a base interpreter's site-packages may be that interpreter's own.
    """
    from wheeldoctor.repair.steps import RECORD_INSTALLERS

    active = duplicate.active
    commands: dict[str, str | None] = {}
    for dist in duplicate.distributions[1:]:
        if dist.location == active.location:
            continue
        known = (dist.installer or "").lower() in RECORD_INSTALLERS
        argv = _uv("uninstall", env.python, "--target", dist.location, duplicate.name) if known else None
        command = shlex.join(argv) if argv is not None else None
        if dist.location not in commands or command is None:
            commands[dist.location] = command
    return commands


def _uv(verb: str, python: str | None, *rest: str) -> tuple[str, ...]:
    target = ("--python", python) if python else ()
    return ("uv", "pip", verb, *target, *rest)

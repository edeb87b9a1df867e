"""The commands that repair dependency conflicts and duplicated projects, planned from the judge's findings."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wheeldoctor.judge.compat import CompatibilityFinding
from wheeldoctor.judge.deps import DependencyConflict
from wheeldoctor.judge.duplicates import Duplicate
from wheeldoctor.model.environment import Environment
from wheeldoctor.model.findings import Code

if TYPE_CHECKING:  # the commands' words are imported where there is something to repair: a healthy deps builds none
    from wheeldoctor.repair.cleanup import Cleanup

#: Findings a reinstall for the target interpreter fixes (a build or release that fits it).
_REFITTABLE = frozenset({Code.REQUIRES_PYTHON_UNMET, Code.TAGS_UNSUPPORTED})


@dataclass(frozen=True, slots=True, kw_only=True)
class DuplicateRepair:
    """How one duplicated project is cleaned up: what its tips print and its JSON holds."""

    remedy: tuple[str, ...]
    """The commands that leave one clean install where Python looks first (:func:`duplicate_cleanup`)."""
    elsewhere: Mapping[str, str | None]
    """For each later directory with copies Python never imports: the command that removes them, or None
    when another tool installed them (:func:`removal_elsewhere`)."""
    refused: str | None = None
    """Why there are no commands: copies no installer removes, no version known to hold the files, a name or
    version that may not enter one."""
    keep: str | None = None
    """The dist-info the clean-up keeps (its version installed again): the one whose files are on disk, where
    known; None when none may be kept."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Refit:
    """A distribution that does not fit the target interpreter; the command lets the installer pick one that does."""

    name: str
    version: str
    command: str
    """Empty where no command may be built: ``refused`` says why."""
    refused: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DepsRepairs:
    """The repairs of what ``deps`` found, made once by the command: the text tips and the JSON render them."""

    duplicates: Mapping[str, DuplicateRepair]
    """By the active dist-info's path: each duplicated project's clean-up."""
    refits: tuple[Refit, ...]
    install: str | None
    """One command asking the installer for everything wanted (:func:`install_command`); None without conflicts."""
    breaks_system_packages: bool
    """These pip and uv commands carry ``--break-system-packages`` (a PEP 668 interpreter)."""

    def duplicate(self, duplicate: Duplicate) -> DuplicateRepair:
        """The clean-up of one of the result's duplicated projects."""
        return self.duplicates[duplicate.active.path]


def deps_repairs(
    env: Environment,
    conflicts: tuple[DependencyConflict, ...],
    duplicates: Iterable[Duplicate],
    compatibility: Sequence[CompatibilityFinding],
) -> DepsRepairs:
    """The clean-up of each duplicate, a fresh install of what does not fit, one install for every conflict."""
    cleanups = {}
    for d in duplicates:
        done = duplicate_cleanup(d, env)
        refusal = done.refused if d.stale else refused(d)
        keep = d.keep.path if refusal is None else None
        cleanups[d.active.path] = DuplicateRepair(
            remedy=done.commands, elsewhere=removal_elsewhere(d, env), refused=refusal, keep=keep
        )
    unfit = {(f.dist, f.version) for f in compatibility if f.code in _REFITTABLE}
    refits = []
    for name, version in sorted(unfit):
        from wheeldoctor.repair.steps import install_argv, repair_step, untrusted

        dist = env.find(name)
        if dist is None:
            continue
        managed = dist.managed_by
        if managed is not None and managed.tool.system:
            fresh = repair_step(dist, env).command  # never pip over a system package's files
        elif (why := untrusted(dist)) is not None:
            refits.append(Refit(name=name, version=version, command="", refused=why))
            continue
        else:
            uv = (dist.installer or "").lower() == "uv"
            fresh = shlex.join(install_argv([dist.name], env, uv=uv, reinstall=dist.name))
        refits.append(Refit(name=name, version=version, command=fresh))
    install = install_command(conflicts, env)
    breaks = False
    if unfit or install is not None:
        from wheeldoctor.repair.steps import overrides_pep668

        breaks = overrides_pep668(env)
    return DepsRepairs(duplicates=cleanups, refits=tuple(refits), install=install, breaks_system_packages=breaks)


def install_command(conflicts: tuple[DependencyConflict, ...], env: Environment) -> str | None:
    """One command that asks the installer for everything wanted, so its resolver sees it all.

    uv when uv installed most of the environment, else pip.
    """
    wanted = list(dict.fromkeys(c.wanted for c in conflicts))
    if not wanted:
        return None
    from wheeldoctor.repair.steps import install_argv

    installers = [(d.installer or "").lower() for d in env.active()]
    return shlex.join(install_argv(wanted, env, uv=installers.count("uv") > installers.count("pip")))


def duplicate_cleanup(duplicate: Duplicate, env: Environment) -> Cleanup:
    """The clean-up of ``duplicate``'s dist-infos where Python looks first (see :func:`cleanup_steps`).

    It keeps the one whose files are on disk where they were verified (``duplicate.files``),
    else the one Python reads.
    """
    from wheeldoctor.judge.stale import StaleVerdict
    from wheeldoctor.repair.cleanup import cleanup

    verdict = duplicate.files or StaleVerdict(
        name=duplicate.name, dists=duplicate.here, keep=duplicate.active, why="not verified: the one Python reads"
    )
    return cleanup(verdict, env)


def refused(duplicate: Duplicate) -> str | None:
    """Why no command is built for ``duplicate``: its name or version may not enter one (``steps.untrusted``)."""
    from wheeldoctor.repair.steps import untrusted

    return untrusted(duplicate.active)


def removal_elsewhere(duplicate: Duplicate, env: Environment) -> dict[str, str | None]:
    """For each later directory holding copies Python never imports: the command that removes them.

    None when a tool other than pip or uv installed them there: that tool must remove them.
    Optional: a copy in a base interpreter's site-packages may be that interpreter's own. A copy a
    system package manager owns gets no tip at all: nothing should remove apt's pip for a venv's.
    """
    from wheeldoctor.repair.steps import RECORD_INSTALLERS, untrusted, uv_pip

    active = duplicate.active
    commands: dict[str, str | None] = {}
    if untrusted(active) is not None:
        return commands
    for dist in duplicate.distributions[1:]:
        if dist.location == active.location or dist.system_managed:
            continue  # a system package's copy under a venv's own: the layering such a venv is made for
        known = (dist.installer or "").lower() in RECORD_INSTALLERS
        argv = uv_pip("uninstall", env.python, "--target", dist.location, "--", duplicate.name) if known else None
        command = shlex.join(argv) if argv is not None else None
        if dist.location not in commands or command is None:
            commands[dist.location] = command
    return commands

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
    from wheeldoctor.repair.steps import Command, StepKind

#: Findings a reinstall for the target interpreter fixes (a build or release that fits it).
_REFITTABLE = frozenset({Code.REQUIRES_PYTHON_UNMET, Code.TAGS_UNSUPPORTED})


@dataclass(frozen=True, slots=True, kw_only=True)
class DuplicateRepair:
    """How one duplicated project is cleaned up: what its tips print and its JSON holds."""

    remedy: tuple[str, ...]
    """The commands that leave one clean install where Python looks first (:func:`remedy_steps`)."""
    elsewhere: Mapping[str, str | None]
    """For each later directory with copies Python never imports: the command that removes them, or None
    when another tool installed them (:func:`removal_elsewhere`)."""
    refused: str | None = None
    """Why there are no commands: its name or version may not enter one (:func:`refused`)."""


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
    cleanups = {
        d.active.path: DuplicateRepair(remedy=remedy(d, env), elsewhere=removal_elsewhere(d, env), refused=refused(d))
        for d in duplicates
    }
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


def remedy(duplicate: Duplicate, env: Environment) -> tuple[str, ...]:
    """:func:`remedy_argvs`, as lines to paste, in order."""
    return tuple(shlex.join(argv) for argv in remedy_argvs(duplicate, env))


def remedy_argvs(duplicate: Duplicate, env: Environment) -> tuple[tuple[str, ...], ...]:
    """:func:`remedy_steps`' words."""
    return tuple(command.argv for _, command in remedy_steps(duplicate, env))


def remedy_steps(duplicate: Duplicate, env: Environment) -> tuple[tuple[StepKind, Command], ...]:
    """The commands that leave one clean install where Python looks first; empty when none is stale there.

    Each uninstall removes one dist-info and exactly the files its RECORD lists, so a stale
    record may take files the live version also owns: hence the reinstall comes last.
    pip uninstalls the first distribution of a name it finds, one per call (``pip install
    --force-reinstall`` removes only that one too, leaving the stale one behind); uv removes
    every distribution of the name in the environment, or in ``--target DIR``.
    """
    from wheeldoctor.repair.steps import Command, StepKind, pip_runner, reaching, untrusted, with_override

    active = duplicate.active
    count = 1 + sum(1 for d in duplicate.stale if d.location == active.location)
    if count == 1 or any(d.system_managed for d in duplicate.distributions if d.location == active.location):
        # pip or uv would remove files a system package manager owns: that manager decides.
        return ()
    if untrusted(active) is not None:
        return ()  # no command from that name or version (:func:`refused` says why)
    spec = f"{active.name}=={active.version}"
    python = reaching(active, env)
    if python is None:
        return (
            (StepKind.UNINSTALL, Command("uv", _uv("uninstall", None, "--target", active.location, "--", active.name))),
            (
                StepKind.INSTALL,
                Command("uv", _uv("install", None, "--target", active.location, "--no-deps", "--", spec)),
            ),
        )
    if (active.installer or "").lower() == "uv":
        argv = with_override(_uv("install", python, "--reinstall-package", active.name, "--no-deps", "--", spec), env)
        return ((StepKind.REINSTALL, Command("uv", argv)),)
    pip = pip_runner(env)
    uninstall = (StepKind.UNINSTALL, Command("pip", with_override((*pip, "uninstall", "-y", "--", active.name), env)))
    install = (StepKind.INSTALL, Command("pip", with_override((*pip, "install", "--no-deps", "--", spec), env)))
    return (*([uninstall] * count), install)


def refused(duplicate: Duplicate) -> str | None:
    """Why no command is built for ``duplicate``: its name or version may not enter one (``steps.untrusted``)."""
    from wheeldoctor.repair.steps import untrusted

    return untrusted(duplicate.active)


def removal_elsewhere(duplicate: Duplicate, env: Environment) -> dict[str, str | None]:
    """For each later directory holding copies Python never imports: the command that removes them.

    None when a tool other than pip or uv installed them there: that tool must remove them.
    Optional: a copy in a base interpreter's site-packages may be that interpreter's own.
    """
    from wheeldoctor.repair.steps import RECORD_INSTALLERS, untrusted

    active = duplicate.active
    commands: dict[str, str | None] = {}
    if untrusted(active) is not None:
        return commands
    for dist in duplicate.distributions[1:]:
        if dist.location == active.location:
            continue
        known = (dist.installer or "").lower() in RECORD_INSTALLERS
        argv = _uv("uninstall", env.python, "--target", dist.location, "--", duplicate.name) if known else None
        command = shlex.join(argv) if argv is not None else None
        if dist.location not in commands or command is None:
            commands[dist.location] = command
    return commands


def _uv(verb: str, python: str | None, *rest: str) -> tuple[str, ...]:
    target = ("--python", python) if python else ()
    return ("uv", "pip", verb, *target, *rest)

"""The commands that repair dependency conflicts and duplicated projects, planned from the judge's findings."""

from __future__ import annotations

import shlex

from wheeldoctor.judge.deps import DependencyConflict
from wheeldoctor.judge.duplicates import Duplicate
from wheeldoctor.model.environment import Environment, InstalledDistribution
from wheeldoctor.repair.steps import (
    RECORD_INSTALLERS,
    Command,
    StepKind,
    install_argv,
    pip_runner,
    reaching,
    with_override,
)


def install_command(conflicts: tuple[DependencyConflict, ...], env: Environment) -> str | None:
    """One command that asks the installer for everything wanted, so its resolver sees it all.

    uv when uv installed most of the environment, else pip.
    """
    wanted = list(dict.fromkeys(c.wanted for c in conflicts))
    if not wanted:
        return None
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
    active = duplicate.active
    count = 1 + sum(1 for d in duplicate.stale if d.location == active.location)
    if count == 1 or any(_system(d) for d in duplicate.distributions if d.location == active.location):
        # pip or uv would remove files a system package manager owns: that manager decides.
        return ()
    spec = f"{active.name}=={active.version}"
    python = reaching(active, env)
    if python is None:
        return (
            (StepKind.UNINSTALL, Command("uv", _uv("uninstall", None, "--target", active.location, active.name))),
            (StepKind.INSTALL, Command("uv", _uv("install", None, "--target", active.location, "--no-deps", spec))),
        )
    if (active.installer or "").lower() == "uv":
        argv = with_override(_uv("install", python, "--reinstall-package", active.name, "--no-deps", spec), env)
        return ((StepKind.REINSTALL, Command("uv", argv)),)
    pip = pip_runner(env)
    uninstall = (StepKind.UNINSTALL, Command("pip", with_override((*pip, "uninstall", "-y", active.name), env)))
    install = (StepKind.INSTALL, Command("pip", with_override((*pip, "install", "--no-deps", spec), env)))
    return (*([uninstall] * count), install)


def _system(dist: InstalledDistribution) -> bool:
    return dist.managed_by is not None and dist.managed_by.tool.system


def removal_elsewhere(duplicate: Duplicate, env: Environment) -> dict[str, str | None]:
    """For each later directory holding copies Python never imports: the command that removes them.

    None when a tool other than pip or uv installed them there: that tool must remove them.
    Optional: a copy in a base interpreter's site-packages may be that interpreter's own.
    """
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

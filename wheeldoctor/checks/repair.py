"""The exact commands that repair a distribution or a clash, for the installer that installed it.

Data only: each function returns command lines (``wheeldoctor fix`` may run them).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wheeldoctor.where.environment import Environment, InstalledDistribution

if TYPE_CHECKING:  # clash imports deps, whose install_command imports this module
    from wheeldoctor.checks.clash import ClashPair


def reinstall_command(dist: InstalledDistribution, env: Environment) -> str:
    """A command that puts back ``dist``'s own bytes, without touching its dependencies.

    uv installs are repaired with uv (its cache holds the wheel); anything else with
    pip. The exact version is pinned so nothing is upgraded. An environment without
    pip of its own (a uv venv) is reached with ``pip --python``; site directories given
    without an interpreter with ``--target``.
    """
    spec = f"{dist.name}=={dist.version}"
    python = env.python
    uv = (dist.installer or "").lower() == "uv"
    if python is None:
        # Site directories without an interpreter: aim at the directory itself, never at
        # whatever environment happens to be active where the tip is pasted.
        if uv:
            words = ["uv", "pip", "install", "--target", dist.location, "--reinstall-package", dist.name]
        else:
            words = ["pip", "install", "--target", dist.location, "--upgrade", "--force-reinstall"]
        words += ["--no-deps", spec]
    elif uv:
        words = ["uv", "pip", "install", "--python", python, "--reinstall-package", dist.name, "--no-deps", spec]
    else:
        words = [*pip_runner(env), "install", "--force-reinstall", "--no-deps", spec]
    return shlex.join(words)


def pip_runner(env: Environment) -> list[str]:
    """The words that run pip on ``env``: its own pip, else ``pip --python`` (a uv venv has none)."""
    if env.python is None:
        return ["pip"]
    if env.find("pip") is not None:
        return [env.python, "-m", "pip"]
    return ["pip", "--python", env.python]


def cache_clean_command(dist: InstalledDistribution) -> str | None:
    """For a uv install whose altered files are hard links, the command that drops uv's copy.

    uv links installed files to its cache, so bytes altered in place are altered in the
    cache too, and a reinstall would link them back.
    """
    if (dist.installer or "").lower() != "uv":
        return None
    return shlex.join(["uv", "cache", "clean", dist.name])


def uninstall_command(dist: InstalledDistribution, env: Environment) -> str:
    """A command that uninstalls ``dist``, with the installer that installed it.

    Site directories without an interpreter are aimed at with ``uv pip uninstall --target``
    (pip has no such option), never at whatever environment is active where it is pasted.
    """
    if env.python is None:
        words = ["uv", "pip", "uninstall", "--target", dist.location, dist.name]
    elif (dist.installer or "").lower() == "uv":
        words = ["uv", "pip", "uninstall", "--python", env.python, dist.name]
    else:
        words = [*pip_runner(env), "uninstall", "-y", dist.name]
    return shlex.join(words)


@dataclass(frozen=True, slots=True)
class Choice:
    """One way to end a clash: keep ``keep``, remove ``remove`` (None: keep both), run ``commands`` in order."""

    keep: str
    remove: str | None
    commands: tuple[str, ...]


def keep_sequence(keep: InstalledDistribution, drop: InstalledDistribution, env: Environment) -> Choice:
    """Uninstall ``drop``, then reinstall ``keep``: uninstalling deletes every shared path, ``keep``'s too."""
    return Choice(keep.name, drop.name, (uninstall_command(drop, env), reinstall_command(keep, env)))


def pair_choices(pair: ClashPair, env: Environment) -> tuple[Choice, ...]:
    """The ways to repair a clashing pair, best first.

    An overlay has one: reinstall the overlay last, keeping both (letting the base win
    would overwrite the package that requires it). Unrelated distributions are
    alternatives: keep the winner (uninstall the other, then reinstall it), or the other.
    """
    if pair.overlay is not None:
        return (Choice(pair.winner.name, None, (reinstall_command(pair.winner, env),)),)
    return (keep_sequence(pair.winner, pair.loser, env), keep_sequence(pair.loser, pair.winner, env))

"""The exact commands that repair a distribution or a clash, for the installer that installed it.

Data only. Each command is built once, as an argument list: tips print it joined
(``shlex.join``), ``wheeldoctor fix`` runs the same list. A distribution no command can
safely repair gets a reason (:func:`refusal`) instead of a command.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wheeldoctor.where.environment import Environment, InstalledDistribution

if TYPE_CHECKING:  # clash imports deps, whose install_command imports this module
    from wheeldoctor.checks.clash import ClashPair

#: Installers that remove exactly what a dist-info's RECORD lists and that wheeldoctor
#: knows how to drive; anything else (a distro's package manager, conda, an unknown
#: tool) must repair its own files.
RECORD_INSTALLERS = frozenset({"pip", "uv"})

Argv = tuple[str, ...]


def refusal(dist: InstalledDistribution) -> str | None:
    """Why no pip or uv command may repair ``dist``; None when one may.

    Another tool's files (a distro's, conda's) are that tool's to repair: pip would
    overwrite files it does not own. Without a recorded version nothing can be pinned,
    and an unpinned reinstall may install something else.
    """
    installer = (dist.installer or "").strip()
    if installer.lower() not in RECORD_INSTALLERS:
        if not installer:
            return "no INSTALLER is recorded, so the tool that owns its files is unknown; repair it with that tool"
        return f"installed by {installer}, not pip or uv: repair it with {installer}"
    if not dist.version:
        return "no version is recorded, so a reinstall cannot be pinned to what is installed"
    return None


def reinstall_argv(dist: InstalledDistribution, env: Environment) -> Argv:
    """The command that puts back ``dist``'s own bytes, without touching its dependencies.

    uv installs are repaired with uv (its cache holds the wheel); anything else with
    pip. The exact version is pinned so nothing is upgraded. An environment without
    pip of its own (a uv venv) is reached with ``pip --python``; site directories given
    without an interpreter with ``--target``.
    """
    spec = f"{dist.name}=={dist.version}"
    python = env.python
    uv = _uses_uv(dist)
    if python is None:
        # Site directories without an interpreter: aim at the directory itself, never at
        # whatever environment happens to be active where the tip is pasted.
        if uv:
            words = ["uv", "pip", "install", "--target", dist.location, "--reinstall-package", dist.name]
        else:
            words = ["pip", "install", "--target", dist.location, "--upgrade", "--force-reinstall"]
        return (*words, "--no-deps", spec)
    if uv:
        return ("uv", "pip", "install", "--python", python, "--reinstall-package", dist.name, "--no-deps", spec)
    return (*pip_runner(env), "install", "--force-reinstall", "--no-deps", spec)


def reinstall_command(dist: InstalledDistribution, env: Environment) -> str:
    """:func:`reinstall_argv`, as a line to paste."""
    return shlex.join(reinstall_argv(dist, env))


def uninstall_argv(dist: InstalledDistribution, env: Environment) -> Argv:
    """The command that uninstalls ``dist`` (exactly what its RECORD lists), with the installer that installed it.

    Site directories without an interpreter are aimed at with ``uv pip uninstall --target``
    (pip has no such option), never at whatever environment is active where it is pasted.
    """
    if env.python is None:
        return ("uv", "pip", "uninstall", "--target", dist.location, dist.name)
    if _uses_uv(dist):
        return ("uv", "pip", "uninstall", "--python", env.python, dist.name)
    return (*pip_runner(env), "uninstall", "-y", dist.name)


def uninstall_command(dist: InstalledDistribution, env: Environment) -> str:
    """:func:`uninstall_argv`, as a line to paste."""
    return shlex.join(uninstall_argv(dist, env))


def pip_runner(env: Environment) -> list[str]:
    """The words that run pip on ``env``: its own pip, else ``pip --python`` (a uv venv has none)."""
    if env.python is None:
        return ["pip"]
    if env.find("pip") is not None:
        return [env.python, "-m", "pip"]
    return ["pip", "--python", env.python]


def cache_clean_argv(dist: InstalledDistribution) -> Argv | None:
    """For a uv install whose altered files are hard links, the command that drops uv's copy.

    uv links installed files to its cache, so bytes altered in place are altered in the
    cache too, and a reinstall would link them back.
    """
    if not _uses_uv(dist):
        return None
    return ("uv", "cache", "clean", dist.name)


def cache_clean_command(dist: InstalledDistribution) -> str | None:
    """:func:`cache_clean_argv`, as a line to paste."""
    argv = cache_clean_argv(dist)
    return shlex.join(argv) if argv is not None else None


def _uses_uv(dist: InstalledDistribution) -> bool:
    return (dist.installer or "").strip().lower() == "uv"


@dataclass(frozen=True, slots=True)
class Choice:
    """One way to end a clash: keep ``keep``, remove ``remove`` (None: keep both), run ``argvs`` in order."""

    keep: str
    remove: str | None
    argvs: tuple[Argv, ...]

    @property
    def commands(self) -> tuple[str, ...]:
        """The commands as lines to paste, in order."""
        return tuple(shlex.join(argv) for argv in self.argvs)


def keep_sequence(keep: InstalledDistribution, drop: InstalledDistribution, env: Environment) -> Choice:
    """Uninstall ``drop``, then reinstall ``keep``: uninstalling deletes every shared path, ``keep``'s too."""
    return Choice(keep.name, drop.name, (uninstall_argv(drop, env), reinstall_argv(keep, env)))


def pair_choices(pair: ClashPair, env: Environment) -> tuple[Choice, ...]:
    """The ways to repair a clashing pair, best first.

    An overlay has one: reinstall the overlay last, keeping both (letting the base win
    would overwrite the package that requires it). Unrelated distributions are
    alternatives: keep the winner (uninstall the other, then reinstall it), or the other.
    """
    if pair.overlay is not None:
        return (Choice(pair.winner.name, None, (reinstall_argv(pair.winner, env),)),)
    return (keep_sequence(pair.winner, pair.loser, env), keep_sequence(pair.loser, pair.winner, env))

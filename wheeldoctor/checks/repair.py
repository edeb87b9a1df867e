"""The exact commands that repair a distribution, for the installer that installed it.

Each command is built once, as an argument list: tips print it joined (``shlex.join``),
``fix`` runs the same list. A distribution no command can safely repair gets a reason
(:func:`refusal`) instead of a command.
"""

from __future__ import annotations

import shlex

from wheeldoctor.where.environment import Environment, InstalledDistribution

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
    """The command that removes ``dist`` (exactly what its RECORD lists) with its own installer."""
    if _uses_uv(dist) or env.python is None:
        target = ("--python", env.python) if env.python else ("--target", dist.location)
        return ("uv", "pip", "uninstall", *target, dist.name)
    return (*pip_runner(env), "uninstall", "-y", dist.name)


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

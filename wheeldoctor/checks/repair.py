"""The exact command that reinstalls a distribution, for the installer that installed it."""

from __future__ import annotations

import shlex

from wheeldoctor.where.environment import Environment, InstalledDistribution


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

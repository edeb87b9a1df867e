"""The exact command that reinstalls a distribution, for the installer that installed it."""

from __future__ import annotations

import shlex

from wheeldoctor.environment import InstalledDistribution


def reinstall_command(dist: InstalledDistribution, python: str | None) -> str:
    """A command that puts back ``dist``'s own bytes, without touching its dependencies.

    uv installs are repaired with uv (its cache holds the wheel); anything else with
    the target interpreter's pip. The exact version is pinned so nothing is upgraded.
    """
    spec = f"{dist.name}=={dist.version}"
    if (dist.installer or "").lower() == "uv":
        target = ["--python", python] if python else []
        words = ["uv", "pip", "install", *target, "--reinstall-package", dist.name, "--no-deps", spec]
    else:
        runner = [python, "-m", "pip"] if python else ["pip"]
        words = [*runner, "install", "--force-reinstall", "--no-deps", spec]
    return shlex.join(words)

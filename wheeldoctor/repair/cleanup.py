"""Stale dist-infos cleaned up: each uninstalled, then the one whose files are on disk installed again.

The same commands in ``check``'s tip, ``deps``' and ``doctor``'s, and ``fix``'s plan: made here
from a :class:`~wheeldoctor.judge.stale.StaleVerdict`, nothing run.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from wheeldoctor.judge.stale import StaleVerdict
from wheeldoctor.model.environment import Environment, InstalledDistribution
from wheeldoctor.repair.steps import Command, StepKind, pip_runner, reaching, untrusted, uv_pip, with_override


@dataclass(frozen=True, slots=True, kw_only=True)
class Cleanup:
    """How the dist-infos of one project in one directory become one: each removed, the one whose files are
    on disk installed again. The same commands in check's tip, deps' and doctor's, and ``fix``'s plan."""

    steps: tuple[tuple[StepKind, Command], ...]
    keep: InstalledDistribution
    """The dist-info kept (its version installed again): the one whose files are on disk, where that is known."""
    active: InstalledDistribution
    """The dist-info Python reads now: where it is not ``keep``, the version Python reports changes."""
    refused: str | None = None
    """Why there are no steps: copies no installer removes, no version known to hold the files, an unsafe name."""

    @property
    def commands(self) -> tuple[str, ...]:
        """The commands as lines to paste, in order."""
        return tuple(shlex.join(command.argv) for _, command in self.steps)

    @property
    def change(self) -> str | None:
        """``upgrade`` or ``downgrade`` where the version Python reports changes (its files do not); else None."""
        return version_change(self.active.version, self.keep.version)


def cleanup(verdict: StaleVerdict, env: Environment) -> Cleanup:
    """The clean-up of one project's dist-infos in one directory, keeping the one whose files are on disk."""
    dists = verdict.dists
    keep = verdict.keep or verdict.active
    why = untrusted(keep) or verdict.repairable  # a name no command may hold is said first, whatever else
    if why is None and any(d.system_managed for d in dists):
        why = "a system package manager owns one of them: pip or uv would remove its files; that manager decides"
    steps = () if why is not None else cleanup_steps(dists, keep, env)
    return Cleanup(steps=steps, keep=keep, active=verdict.active, refused=why)


def version_change(installed: str, wanted: str) -> str | None:
    """``upgrade`` or ``downgrade`` from ``installed`` to ``wanted`` (by PEP 440, else as text); None when equal."""
    if installed == wanted:
        return None
    from packaging.version import InvalidVersion, Version

    try:
        newer = Version(wanted) > Version(installed)
    except InvalidVersion:
        return "version change"
    return "upgrade" if newer else "downgrade"


def cleanup_steps(
    dists: Sequence[InstalledDistribution], keep: InstalledDistribution, env: Environment
) -> tuple[tuple[StepKind, Command], ...]:
    """The commands that leave ``keep`` alone of ``dists`` (one project's dist-infos in one directory).

    Each uninstall removes one dist-info and exactly the files its RECORD lists, so a stale
    record may take files the kept version also owns: hence the install comes last, with
    ``--force-reinstall`` so that it writes every file whatever is left. pip uninstalls the
    first distribution of a name it finds, one per call (``pip install --force-reinstall``
    removes only that one too, leaving the stale one behind); uv removes every distribution
    of the name in the environment, or in ``--target DIR``. Empty for a single dist-info,
    or a name or version that may not enter a command.
    """
    if len(dists) < 2 or untrusted(keep) is not None:
        return ()
    name, spec = keep.name, f"{keep.name}=={keep.version}"
    python = reaching(keep, env)
    if python is None:
        target = ("--target", keep.location)
        return (
            (StepKind.UNINSTALL, Command("uv", uv_pip("uninstall", None, *target, "--", name))),
            (StepKind.INSTALL, Command("uv", uv_pip("install", None, *target, "--no-deps", "--", spec))),
        )
    if (dists[0].installer or "").lower() == "uv":
        argv = with_override(uv_pip("install", python, "--reinstall-package", name, "--no-deps", "--", spec), env)
        return ((StepKind.REINSTALL, Command("uv", argv)),)
    pip = pip_runner(env)
    uninstall = (StepKind.UNINSTALL, Command("pip", with_override((*pip, "uninstall", "-y", "--", name), env)))
    install = (
        StepKind.INSTALL,
        Command("pip", with_override((*pip, "install", "--force-reinstall", "--no-deps", "--", spec), env)),
    )
    return (*([uninstall] * len(dists)), install)

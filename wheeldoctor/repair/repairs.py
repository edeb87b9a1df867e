"""A check's repairs as data: the step each broken distribution and each clash pair needs.

Pure: made once by the command from its reports and clash pairs (:func:`repairs_of`),
nothing here runs a command. The text tips and the JSON render these, and ``fix``'s plan
(:mod:`wheeldoctor.repair.plan`) runs the very same steps, so they never disagree.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from wheeldoctor.formats.wheel_hooks import hook_kind
from wheeldoctor.judge.clash import ClashPair
from wheeldoctor.judge.files import DistributionReport, Status
from wheeldoctor.judge.stale import StaleVerdict
from wheeldoctor.model.environment import Environment, InstalledDistribution
from wheeldoctor.model.findings import BREAKING_KINDS, Code, Finding, Kind
from wheeldoctor.repair.cleanup import Cleanup, cleanup
from wheeldoctor.repair.steps import (
    RECORD_INSTALLERS,
    Argv,
    Choice,
    RepairStep,
    cache_clean_argv,
    pair_choices,
    repair_step,
    uninstall_command,
    untrusted,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class DistributionRepair:
    """How one checked distribution is put right: the step its tips print and JSON's ``repair`` holds."""

    step: RepairStep
    """Its reinstall (at the lock's version, against a lock), with the manager that owns its files;
    its uninstall when it is only not in the lock (see ``unlocked``)."""
    cache_clean: Argv | None = None
    """``uv cache clean`` first: altered files are hard links, maybe into uv's cache."""
    explained: bool = False
    """Every breaking finding is a clash partner's bytes: the pair's repair covers it."""
    unlocked: bool = False
    """Every breaking finding is "not in the lock": ``step`` is its uninstall, the user's choice."""
    stale: Cleanup | None = None
    """Stale dist-infos lie beside it: this clean-up, not ``step``, is its repair."""

    @property
    def cache_clean_command(self) -> str | None:
        """``cache_clean`` as a line to paste."""
        return shlex.join(self.cache_clean) if self.cache_clean is not None else None


@dataclass(frozen=True, slots=True, kw_only=True)
class PairRepair:
    """How one clash pair is put right: the winner reinstalled last, or one side kept."""

    winner: RepairStep
    """The winner's reinstall (the whole repair of an overlay, the last step of keeping one)."""
    choices: tuple[Choice, ...]
    """Keep the winner, or keep the loser: each a sequence of commands."""


@dataclass(frozen=True, slots=True)
class Repairs:
    """The repairs of one check's findings, made once by the command: text tips and JSON render them."""

    distributions: Mapping[str, DistributionRepair]
    """By name: each broken distribution, and each unverifiable one under ``--strict``."""
    pairs: Mapping[tuple[str, str], PairRepair]
    """By the pair's two names, first and second: each of the check's clash pairs."""

    def pair(self, pair: ClashPair) -> PairRepair:
        """The repair of one of the check's pairs."""
        return self.pairs[(pair.first.name, pair.second.name)]


def repairs_of(
    env: Environment,
    reports: Sequence[DistributionReport],
    pairs: Sequence[ClashPair],
    *,
    strict: bool,
    stale: Mapping[str, StaleVerdict] | None = None,
) -> Repairs:
    """The repair of each broken distribution (unverifiable too, under ``strict``) and of each clash pair.

    A distribution with stale dist-infos beside it (``stale``, by name) is repaired by their clean-up.
    """
    in_pairs = {d.name for p in pairs for d in (p.first, p.second)}
    found: dict[str, DistributionRepair] = {}
    for report in reports:
        dist = report.dist
        if dist is None:
            continue
        if report.status is Status.BROKEN:
            hard_linked = any(
                f.kind is Kind.MODIFIED and f.content_from is None and f.links > 1 for f in report.findings
            )
            found[report.name] = DistributionRepair(
                step=distribution_step(dist, report.findings, env),
                cache_clean=cache_clean_argv(dist) if hard_linked else None,
                explained=report.name in in_pairs and explained_by_clash(report.findings),
                unlocked=only_unlocked(report.findings),
                stale=cleanup(stale[report.name], env) if stale and report.name in stale else None,
            )
        elif report.status is Status.UNVERIFIABLE and strict:
            found[report.name] = DistributionRepair(step=repair_step(dist, env))
    chosen = {
        (p.first.name, p.second.name): PairRepair(winner=repair_step(p.winner, env), choices=pair_choices(p, env))
        for p in pairs
    }
    return Repairs(found, chosen)


def explained_by_clash(findings: Iterable[Finding]) -> bool:
    """Whether every unaccepted breaking finding is another distribution's bytes (the pair's step covers it).

    The one rule for the text tips and for ``fix``'s plan."""
    breaking = [f for f in findings if f.kind in BREAKING_KINDS and f.accepted is None]
    return bool(breaking) and all(f.content_from is not None for f in breaking)


def only_unlocked(findings: Iterable[Finding]) -> bool:
    """Whether every unaccepted breaking finding is "not in the lock": a reinstall would keep it so.

    Removing it is the user's choice (or accepting it): the one rule for the text tips and ``fix``'s plan."""
    breaking = [f for f in findings if f.kind in BREAKING_KINDS and f.accepted is None]
    return bool(breaking) and all(f.kind is Kind.UNLOCKED for f in breaking)


def restored_hooks(findings: Iterable[Finding]) -> list[str]:
    """The start-up hooks a reinstall would put back: recorded hooks that are gone from disk.

    Removing a hook is how one stops it (litellm 1.82.8's ``litellm_init.pth``): a reinstall of
    the same wheel brings it back, so it is said, and ``fix`` leaves that reinstall to the user.
    """
    gone = (f.path for f in findings if f.kind is Kind.MISSING and f.accepted is None and f.path)
    return sorted(path for path in gone if hook_kind(path) is not None)


def distribution_step(dist: InstalledDistribution, findings: Iterable[Finding], env: Environment) -> RepairStep:
    """The step a broken distribution's JSON ``repair`` shows: its reinstall, or, only not in the lock, its uninstall.

    The reinstall is the very step the plan runs; the uninstall is the command the plan
    leaves to the user (see :func:`only_unlocked`)."""
    findings = tuple(findings)
    hooks = restored_hooks(findings)
    if hooks and not only_unlocked(findings):
        step = repair_step(dist, env)
        said = f"it puts back start-up hook(s) removed since the install ({', '.join(hooks)}): read them first"
        return replace(step, note=f"{said}; {step.note}" if step.note else said)
    if only_unlocked(findings):
        command = uninstall_command(dist, env)
        reason = f"not in the lock: uninstall it, or accept {Code.NOT_LOCKED.value} for it by a rule"
        tool = command.tool if command.tool in RECORD_INSTALLERS else None
        if not command.argv:  # a name or version that may not enter a command: say why there is none
            reason = untrusted(dist) or reason
        return replace(repair_step(dist, env), argv=command.argv, tool=tool, note=reason)
    return repair_step(dist, env)

"""``fix``'s plan as data: what ``check`` and ``doctor`` found -> the ordered steps that repair it.

Pure: takes the reports, clash pairs and duplicates of one run and returns a
:class:`RepairPlan`; nothing here runs a command. A check's
:class:`~wheeldoctor.repair.repairs.Repairs` (each broken distribution's and each clash
pair's typed steps, made once by the command) are what the text tips and the JSON render
and what the plan runs, so they never disagree; duplicates' commands come from
``repair/requirements.py``.

The order is the one the tips give:

1. stale dist-infos, since they decide which version is installed at all;
2. broken distributions, each preceded by ``uv cache clean`` when altered files are
   hard links into uv's cache;
3. clash pairs last: the kept side of an unrelated pair after the other is
   uninstalled, and an overlay's winner (the lower layer of a chain first), so that its
   bytes end up in every shared path.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from wheeldoctor.judge.clash import ClashPair, Relation
from wheeldoctor.judge.duplicates import Duplicate
from wheeldoctor.judge.files import DistributionReport, Status
from wheeldoctor.model.environment import Environment, InstalledDistribution
from wheeldoctor.model.findings import BREAKING_KINDS, Code, Finding, Kind
from wheeldoctor.repair.cleanup import version_change
from wheeldoctor.repair.repairs import Repairs, repairs_of, restored_hooks
from wheeldoctor.repair.steps import (
    RepairStep,
    StepKind,
    cache_clean_argv,
    keep_sequence,
    pinned_version,
    refusal,
    reinstall_command,
)

#: Finding kinds a reinstall of the same version repairs: the installer rewrites the files.
#: Against a lock, the reinstall pins the lock's version, which also repairs another version
#: installed, a wheel the lock does not list, and a rewritten RECORD.
REINSTALLABLE = frozenset({Kind.MODIFIED, Kind.MISSING, Kind.UNREADABLE})
#: Codes of those kinds that a reinstall does not repair: the locked wheel itself is not the lock's, or cannot be had.
NOT_REINSTALLABLE = frozenset({Code.LOCK_HASH_MISMATCH, Code.LOCK_WHEEL_UNFETCHED})


@dataclass(frozen=True, slots=True, kw_only=True)
class FixStep:
    """One installer command, typed where it is planned: what it does, the tool, its words, what it repairs."""

    kind: StepKind
    tool: str
    """``pip`` or ``uv``: the only tools ``fix`` runs."""
    name: str
    version: str
    argv: tuple[str, ...]
    fixes: str
    """One line for people: what is wrong that this step puts right."""
    location: str
    """The site directory of the distribution it acts on: where ``fix`` looks to see it did its job."""
    group: str = ""
    """Steps of one repair share it (a clean-up's uninstalls and install, a kept side's): where one fails,
    the group's last install still runs, so that no step leaves the files removed (see ``restores``)."""
    change: str | None = None
    """``upgrade`` or ``downgrade`` where the step changes the version Python reports; None when it does not."""

    @property
    def restores(self) -> bool:
        """Whether it writes the distribution's files (an install), as opposed to removing or cleaning."""
        return self.kind in (StepKind.INSTALL, StepKind.REINSTALL)

    @property
    def command(self) -> str:
        """The command as a line to paste."""
        return shlex.join(self.argv)


@dataclass(frozen=True, slots=True)
class LeftAlone:
    """A problem the plan does not touch, and why."""

    subject: str
    reason: str
    commands: tuple[str, ...] = ()
    """Commands for the user to run with another tool; ``fix`` never runs them."""


@dataclass(frozen=True, slots=True)
class Expected:
    """What must hold for one distribution once the plan has run."""

    name: str
    version: str | None
    """The version that must be installed; None when it must be gone (uninstalled)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RepairPlan:
    """The steps in the order to run them, what is left alone, and what must hold afterwards."""

    steps: tuple[FixStep, ...]
    left_alone: tuple[LeftAlone, ...]
    notes: tuple[str, ...]
    expected: tuple[Expected, ...]

    @property
    def touches(self) -> tuple[str, ...]:
        """Every distribution a step changes or whose health depends on one, by name."""
        return tuple(dict.fromkeys(e.name for e in self.expected))

    @property
    def needed(self) -> bool:
        """Whether anything was found to repair, planned or not."""
        return bool(self.steps or self.left_alone)


def plan_repairs(
    env: Environment,
    reports: Sequence[DistributionReport],
    pairs: Sequence[ClashPair],
    duplicates: Sequence[Duplicate],
    keep: Collection[str] = (),
    *,
    repairs: Repairs | None = None,
) -> RepairPlan:
    """Order the repairs for what one ``check`` (reports, pairs) and ``deps`` (duplicates) found.

    ``keep`` names the side to keep of each unrelated clash pair; without it such a
    pair is left alone, since either choice uninstalls something. ``repairs`` is the
    check's own (:attr:`CheckResult.repairs`): the plan runs the very steps its tips print.
    """
    planner = _Planner(env, repairs if repairs is not None else repairs_of(env, reports, pairs, strict=False))
    for duplicate in duplicates:
        planner.duplicate(duplicate)
    last = _order_last(pairs, keep, planner)
    reinstalled_last = {s.name for s in last if s.kind is StepKind.REINSTALL}
    for report in reports:
        repair = planner.repairs.distributions.get(report.name)
        planner.report(
            report,
            explained=repair is not None and repair.explained,
            deferred=report.name in reinstalled_last,
        )
    planner.steps.extend(last)
    return RepairPlan(
        steps=tuple(planner.steps),
        left_alone=tuple(planner.left),
        notes=tuple(planner.notes),
        expected=tuple(planner.expected.values()),
    )


class _Planner:
    """The steps gathered so far, and what each distribution must look like afterwards."""

    def __init__(self, env: Environment, repairs: Repairs) -> None:
        self.env = env
        self.repairs = repairs
        self.steps: list[FixStep] = []
        self.left: list[LeftAlone] = []
        self.notes: list[str] = []
        self.expected: dict[str, Expected] = {}
        self.installed_again: set[str] = set()

    def expect(self, name: str, version: str | None) -> None:
        self.expected[name] = Expected(name, version)

    def duplicate(self, duplicate: Duplicate) -> None:
        """Stale dist-infos where Python looks first: uninstall once per dist-info, then install the kept one once."""
        if not duplicate.failing:
            return
        from wheeldoctor.repair.requirements import duplicate_cleanup  # only where a duplicate is repaired

        here = duplicate.here
        if len(here) < 2:
            self.left.append(
                LeftAlone(
                    duplicate.name, f"stale dist-infos only in a directory Python searches later: {duplicate.message}"
                )
            )
            return
        done = duplicate_cleanup(duplicate, self.env)
        why = done.refused or next((w for d in here if (w := refusal(d, self.env)) is not None), None)
        if why is not None or not done.steps:
            self.left.append(LeftAlone(duplicate.name, f"stale dist-info: {why or 'no command'}"))
            return
        keep, count = done.keep, len(here)
        shifted = (
            f"; {done.change}: Python reported {done.active.version} (a stale dist-info), the files stay "
            f"{keep.version}'s"
            if done.change
            else ""
        )
        versions = ", ".join(d.version for d in here)
        for kind, command in done.steps:
            if kind is StepKind.UNINSTALL:  # which one pip takes first is its own order: the count is what holds
                fixes = (
                    f"removes one of the {count} dist-infos of {keep.name} ({versions}) and the files its RECORD lists"
                )
            else:
                fixes = f"installs {keep.name} {keep.version} once: one dist-info, every file, as on disk{shifted}"
            self.steps.append(
                FixStep(
                    kind=kind,
                    tool=command.tool,
                    name=keep.name,
                    version=keep.version,
                    argv=command.argv,
                    fixes=fixes,
                    location=keep.location,
                    group=f"stale:{keep.name}",
                    change=done.change if kind is not StepKind.UNINSTALL else None,
                )
            )
        self.installed_again.add(keep.name)
        self.expect(keep.name, keep.version)

    def report(self, report: DistributionReport, *, explained: bool, deferred: bool) -> None:
        """A broken distribution: a reinstall of its exact version, after a cache clean when needed."""
        if report.status is Status.NOT_INSTALLED:
            self.left.append(LeftAlone(report.name, "not installed; fix repairs installed distributions"))
            return
        dist = report.dist
        if report.status is not Status.BROKEN or dist is None or explained:
            return
        planned = self.expected.get(dist.name)
        if planned is not None and planned.version is None:
            return  # uninstalled by a --keep choice: a reinstall first would be undone, its expectation lost
        breaking = [f for f in report.findings if f.kind in BREAKING_KINDS and f.accepted is None]
        if any(f.kind is Kind.STALE for f in breaking):
            return  # stale dist-infos beside it: their clean-up repairs it (planned, or left alone with why)
        repair = self.repairs.distributions[dist.name]
        if repair.unlocked:  # its step is the uninstall the tip prints: the user's choice
            reason = f"not in the lock: uninstall it, or accept {Code.NOT_LOCKED.value} for it by a rule"
            commands = (shlex.join(repair.step.argv),) if repair.step.argv else ()  # none from an unsafe name
            self.left.append(LeftAlone(report.name, reason, commands))
            return
        other = sorted({f.code.value for f in breaking if f.kind not in REINSTALLABLE or f.code in NOT_REINSTALLABLE})
        if other:
            self.left.append(
                LeftAlone(report.name, f"{', '.join(other)}: a reinstall of the same version is not known to repair it")
            )
            return
        why = refusal(dist, self.env)
        if why is not None:
            self.left.append(_for_the_user(report.name, why, dist, self.env))
            return
        hooks = restored_hooks(breaking)
        if hooks:
            step = repair.step
            reason = (
                f"a reinstall would put back start-up hook(s) removed since the install ({', '.join(hooks)}); "
                "read them in the wheel first (wheeldoctor wheels FILE.whl), then run it yourself"
            )
            self.left.append(LeftAlone(report.name, reason, (step.command,) if step.argv else ()))
            return
        hard_linked = [f for f in breaking if f.kind is Kind.MODIFIED and f.content_from is None and f.links > 1]
        clean = cache_clean_argv(dist) if hard_linked else None
        if clean is not None:
            fixes = (
                f"drops uv's cached copy of {len(hard_linked)} altered hard-linked file(s), "
                "so the reinstall does not link them back"
            )
            self.steps.append(
                FixStep(
                    kind=StepKind.CACHE_CLEAN,
                    tool="uv",
                    name=dist.name,
                    version=dist.version,
                    argv=clean,
                    fixes=fixes,
                    location=dist.location,
                )
            )
        self.expect(dist.name, pinned_version(dist, self.env))
        if deferred or dist.name in self.installed_again:
            return  # reinstalled anyway, later (a clash winner) or already (a duplicate's install)
        self.steps.append(reinstall(dist, repair.step, _tally(breaking), version=pinned_version(dist, self.env)))
        self.installed_again.add(dist.name)


def reinstall(dist: InstalledDistribution, step: RepairStep, fixes: str, *, version: str) -> FixStep:
    """``dist``'s reinstall at ``version`` (its own, or the lock's), as a planned step.

    ``step`` is the very command its tip prints; it pins the same version (:func:`pinned_version`)."""
    if step.note:  # a PEP 668 marker overridden, say: said before anything runs
        fixes = f"{fixes}; note: {step.note}"
    assert step.tool is not None, "fix plans only pip's and uv's distributions (see refusal)"
    change = version_change(dist.version, version)
    if change is not None:
        fixes = f"{change}: installs the lock's version {version} (installed: {dist.version}); {fixes}"
    return FixStep(
        kind=StepKind.REINSTALL,
        tool=step.tool,
        name=dist.name,
        version=version,
        argv=step.argv,
        fixes=fixes,
        location=dist.location,
        change=change,
    )


def _for_the_user(subject: str, reason: str, dist: InstalledDistribution, env: Environment) -> LeftAlone:
    """Left alone, with the command its tip prints (another manager's, say) for the user to run, if one is built."""
    command = reinstall_command(dist, env)
    return LeftAlone(subject, reason, (command,) if command else ())


def _tally(findings: Sequence[Finding]) -> str:
    counts: dict[str, int] = {}
    for finding in findings:
        counts[finding.kind.value] = counts.get(finding.kind.value, 0) + 1
    detail = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
    return f"puts back {len(findings)} file(s) ({detail})"


def _order_last(pairs: Sequence[ClashPair], keep: Collection[str], planner: _Planner) -> list[FixStep]:
    """The steps for clash pairs: each kept side after its rival's uninstall, then overlay winners, lowest first."""
    from packaging.utils import canonicalize_name

    env = planner.env
    keep_names = {canonicalize_name(k) for k in keep}
    kept_steps: list[FixStep] = []
    winners: dict[str, InstalledDistribution] = {}
    steps: dict[str, RepairStep] = {}
    reasons: dict[str, list[str]] = {}
    below: dict[str, set[str]] = {}
    used: set[str] = set()
    for pair in pairs:
        names = f"{pair.first.name} and {pair.second.name}"
        if pair.relation is Relation.UNRELATED:
            chosen = [d for d in (pair.first, pair.second) if d.name in keep_names]
            used.update(d.name for d in chosen)
            if len(chosen) != 1:
                planner.left.append(LeftAlone(names, _choice(pair, both=len(chosen) == 2)))
                continue
            kept = chosen[0]
            other = pair.second if kept is pair.first else pair.first
            why = refusal(other, env) or refusal(kept, env)
            if why is not None:
                planner.left.append(LeftAlone(names, f"--keep {kept.name}: {why}"))
                continue
            uninstall, reinstall_kept = keep_sequence(kept, other, env).steps
            removes = f"removes {other.name} (--keep {kept.name}), and with it the {pair.shared} path(s) they share"
            puts_back = f"puts {kept.name}'s bytes back in the {pair.shared} shared path(s) the uninstall removed"
            group = f"keep:{kept.name}:{other.name}"
            kept_steps.append(
                FixStep(
                    kind=StepKind.UNINSTALL,
                    tool=uninstall.tool,
                    name=other.name,
                    version=other.version,
                    argv=uninstall.argv,
                    fixes=removes,
                    location=other.location,
                    group=group,
                )
            )
            kept_steps.append(
                FixStep(
                    kind=StepKind.REINSTALL,
                    tool=reinstall_kept.tool,
                    name=kept.name,
                    version=kept.version,
                    argv=reinstall_kept.argv,
                    fixes=puts_back,
                    location=kept.location,
                    group=group,
                )
            )
            planner.expect(other.name, None)
            planner.expect(kept.name, kept.version)
            planner.installed_again.add(kept.name)
            continue
        if pair.settled:
            planner.notes.append(
                f"{names}: {pair.winner.name} already holds all {pair.differing} differing path(s) ({pair.reason}); "
                "nothing to repair"
            )
            continue
        winner = pair.winner
        why = refusal(winner, env)
        if why is not None:
            planner.left.append(_for_the_user(names, f"{winner.name} must be reinstalled last, but {why}", winner, env))
            continue
        winners[winner.name] = winner
        steps[winner.name] = planner.repairs.pair(pair).winner
        reasons.setdefault(winner.name, []).append(f"{pair.differing} differing with {pair.loser.name}, {pair.reason}")
        below.setdefault(winner.name, set()).add(pair.loser.name)
        planner.expect(winner.name, winner.version)
        planner.expect(pair.loser.name, pair.loser.version)
    for unused in sorted(keep_names - used):
        planner.notes.append(f"--keep {unused}: {unused} is in no unrelated clash pair; nothing to choose")
    last = []
    for name in _lowest_first(winners, below):
        winner = winners[name]
        fixes = f"reinstalled last: puts {name}'s bytes in the path(s) it shares ({'; '.join(reasons[name])})"
        last.append(reinstall(winner, steps[name], fixes, version=pinned_version(winner, env)))
        planner.installed_again.add(name)
    return kept_steps + last


def _choice(pair: ClashPair, *, both: bool) -> str:
    if both:
        return "both are named with --keep: keep one"
    return (
        f"they write {pair.differing} of the same path(s) with different bytes and neither requires the other, "
        f"so only one can stay (uninstalling either deletes all {pair.shared} shared path(s)); "
        f"choose with --keep {pair.first.name} or --keep {pair.second.name}"
    )


def _lowest_first(winners: dict[str, InstalledDistribution], below: dict[str, set[str]]) -> list[str]:
    """Winners ordered so that one overlaying another winner comes after it (a chain W > M > L: M, then W)."""
    ordered: list[str] = []
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if name in ordered or name in visiting:
            return  # done, or a cycle: keep the order found
        visiting.add(name)
        for lower in sorted(below.get(name, ())):
            if lower in winners:
                visit(lower)
        ordered.append(name)

    for name in winners:
        visit(name)
    return ordered

"""Before and after a repair: each problem as a comparable value, and the verdict on the difference.

Pure. A problem is keyed by what it is about (distribution, kind, path), not by its
wording, so the same damage found twice is recognised as the same; a different version
installed by a repair is a problem of its own, never a fix.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

from wheeldoctor.formats.names import same_version
from wheeldoctor.judge.clash import ClashPair, Relation
from wheeldoctor.judge.deps import DependencyConflict
from wheeldoctor.judge.duplicates import Duplicate
from wheeldoctor.judge.files import FAILING_STATUSES, DistributionReport, Status
from wheeldoctor.judge.hooks import StartupHook
from wheeldoctor.model.environment import Environment
from wheeldoctor.model.findings import BREAKING_KINDS, Finding
from wheeldoctor.repair.plan import Expected, FixStep, RepairPlan
from wheeldoctor.repair.steps import StepKind


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with one distribution, comparable across two runs."""

    subject: str
    key: str
    text: str = field(compare=False)
    """One line for people; not part of the identity (wording may change between runs)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """Problems before and after, and which were fixed, which remain, which are new."""

    before: tuple[Problem, ...]
    after: tuple[Problem, ...]

    @property
    def fixed(self) -> tuple[Problem, ...]:
        """Found before, gone after."""
        return tuple(p for p in self.before if p not in self.after)

    @property
    def still_broken(self) -> tuple[Problem, ...]:
        """Found before and after."""
        return tuple(p for p in self.before if p in self.after)

    @property
    def new(self) -> tuple[Problem, ...]:
        """Found only after: what a step broke, or a version it changed."""
        return tuple(p for p in self.after if p not in self.before)

    @property
    def healthy(self) -> bool:
        """Nothing wrong afterwards."""
        return not self.after


def file_problems(reports: Iterable[DistributionReport]) -> set[Problem]:
    """Every breaking finding of a failing distribution, and every named one that is not installed."""
    problems = set()
    for report in reports:
        if report.status not in FAILING_STATUSES:
            continue
        if report.status is Status.NOT_INSTALLED:
            problems.add(Problem(report.name, "not-installed", f"{report.name} is not installed"))
        for f in report.findings:
            if f.kind in BREAKING_KINDS and f.accepted is None:
                text = f"{report.name} {report.version}: {f.code.value}: {f.path or ''} {f.message}".replace("  ", " ")
                problems.add(Problem(report.name, f"{f.kind.value}:{f.path}", text))
    return problems


def duplicate_problems(duplicates: Iterable[Duplicate]) -> set[Problem]:
    """One problem per stale dist-info."""
    return {
        Problem(d.name, f"stale:{stale.path}", f"{d.name}: {d.code.value}: stale dist-info {stale.path}")
        for d in duplicates
        for stale in ([x for x in d.here if x is not d.keep] if d.files is not None else d.stale)
    }


def pair_problems(pairs: Iterable[ClashPair]) -> set[Problem]:
    """One problem per unrelated clash pair: whichever side holds the paths, one uninstall breaks the other."""
    return {
        Problem(
            p.first.name,
            f"unrelated:{p.second.name}",
            f"{p.first.name} and {p.second.name} write {p.differing} of the same path(s) with different bytes, "
            "and neither requires the other",
        )
        for p in pairs
        if p.relation is Relation.UNRELATED
    }


def startup_problems(hooks: Iterable[StartupHook], unowned: Iterable[Finding]) -> set[Problem]:
    """One problem per failing start-up hook (WD070, WD071) and unowned module (WD072): fix never removes them."""
    problems = {
        Problem(
            h.subject,
            f"hook:{h.relative}",
            f"start-up hook {h.relative} runs code at every interpreter start; fix does not remove hooks: "
            "read it, then delete it or accept it pinned to its sha256",
        )
        for h in hooks
    }
    problems |= {
        Problem("(unowned)", f"unowned:{f.path}", f"{f.message}; fix does not delete files nobody recorded")
        for f in unowned
    }
    return problems


def dependency_problems(conflicts: Iterable[DependencyConflict]) -> set[Problem]:
    """One problem per unsatisfied requirement."""
    return {
        Problem(c.dist, f"requires:{c.requirement}", f"{c.dist} {c.version}: {c.code.value}: {c.message}")
        for c in conflicts
    }


def expectation_problems(env: Environment, expected: Iterable[Expected]) -> set[Problem]:
    """Where the environment is not what the plan meant to leave: another version, gone, or not gone."""
    problems = set()
    for want in expected:
        dist = env.find(want.name)
        if want.version is None:
            if dist is not None:
                problems.add(Problem(want.name, "installed", f"{want.name} {dist.version} is still installed"))
        elif dist is None:
            problems.add(Problem(want.name, "gone", f"{want.name} is no longer installed (was {want.version})"))
        elif dist.version != want.version:
            problems.add(Problem(want.name, "version", f"{want.name} {dist.version} is installed, not {want.version}"))
    return problems


def compare(
    plan: RepairPlan,
    before: Collection[Problem],
    after_touched: Collection[Problem],
    *,
    new_only: Collection[Problem] = (),
) -> Outcome:
    """The outcome of a plan: ``after_touched`` are the problems re-verified for what it touched.

    What the plan did not touch was not verified again, so its problems are carried over
    as they were. ``new_only`` problems (a dependency conflict, say) count only where
    they were not there before.
    """
    touched = set(plan.touches)
    after = {p for p in before if p.subject not in touched}
    after |= set(after_touched)
    after |= set(new_only) - set(before)
    order = sorted(after, key=lambda p: (p.subject, p.key))
    return Outcome(tuple(sorted(before, key=lambda p: (p.subject, p.key))), tuple(order))


@dataclass(frozen=True, slots=True)
class Seen:
    """One dist-info of a step's distribution in its site directory, as seen before or after the step."""

    path: str
    version: str | None
    record: tuple[int, ...] | None
    """Its RECORD's fingerprint (inode, size, mtime_ns, ctime_ns); None without one."""


#: What pip and uv print when a step did nothing, though they exit 0: quoted when a step failed its check.
_IDLE_SIGNS = (
    "can't uninstall",
    "no files were found to uninstall",
    "as it is not installed",
    "requirement already satisfied",
    "failed to uninstall",
)


def step_problem(step: FixStep, before: Sequence[Seen], after: Sequence[Seen], output: Sequence[str]) -> str | None:
    """Why ``step``, which exited 0, did not do its job, judged on its directory before and after; None when it did.

    An uninstall leaves one dist-info fewer; an install leaves exactly one, of the step's
    version, with a RECORD it wrote (pip's "Requirement already satisfied" writes none).
    """
    where = f"{step.name} in {step.location}"
    why = None
    if step.kind is StepKind.UNINSTALL and len(after) >= len(before):
        why = f"nothing was uninstalled: {len(after)} dist-info(s) of {where}, as before"
    elif step.restores and len(after) != 1:
        why = f"{len(after)} dist-infos of {where} afterwards, not one"
    elif step.restores:
        found = after[0]
        if found.version is None or not same_version(found.version, step.version):
            why = f"{found.path} is {found.version}, not {step.version}"
        elif found.record is not None and any(b.path == found.path and b.record == found.record for b in before):
            why = f"nothing was installed: {found.path}/RECORD was not written again"
    if why is None:
        return None
    said = next((line.strip() for line in output if any(s in line.lower() for s in _IDLE_SIGNS)), None)
    return f"{step.tool} exited 0, but {why}" + (f" ({step.tool} said: {said})" if said else "")

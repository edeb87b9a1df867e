"""Results -> text for people: plain lines (the terminal table is :mod:`wheeldoctor.report.check_table`).

A finding reads ``subject: code: path what is wrong (expected …, found …)``, followed by
``Tip:`` lines with the exact command that repairs it.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from wheeldoctor.judge.clash import ClashPair, Relation
from wheeldoctor.judge.files import DistributionReport, Status
from wheeldoctor.judge.policy import SELECTED_OUT
from wheeldoctor.model.code_paths import runs_as_code
from wheeldoctor.model.environment import InstalledDistribution
from wheeldoctor.model.findings import AS_INSTALLED_KINDS, Code, Finding, Kind
from wheeldoctor.repair.steps import Choice, RepairStep
from wheeldoctor.report import hooks_text
from wheeldoctor.results.check import CheckResult

if TYPE_CHECKING:
    from wheeldoctor.judge.preflight import PreflightResult


def subject(report: DistributionReport) -> str:
    """``name version`` as findings are introduced, with the system package that owns it."""
    who = f"{report.name} {report.version}" if report.version else report.name
    managed = report.dist.managed_by if report.dist is not None else None
    if managed is not None and managed.tool.system and managed.package:
        who += f" [{managed.tool.value} {managed.package}]"
    return who


def managed_lines(result: CheckResult) -> list[str]:
    """Which system package manager owns which checked distributions, and the interpreter's PEP 668 marker."""
    by_tool: dict[str, list[str]] = {}
    for report in result.distributions:
        managed = report.dist.managed_by if report.dist is not None else None
        if managed is not None and managed.tool.system:
            by_tool.setdefault(managed.tool.value, []).append(f"{report.name} ({managed.package or '?'})")
    lines = [f"managed by {tool} ({len(names)}): {', '.join(names)}" for tool, names in sorted(by_tool.items())]
    env = result.environment
    if env.externally_managed is not None:
        lines.append(f"note: {env.python or env.label} is EXTERNALLY-MANAGED (PEP 668: {env.externally_managed})")
    return lines


def evidence(finding: Finding) -> str:
    """``(expected …, found …)``, or empty when there is no evidence to show."""
    parts = []
    if finding.expected is not None:
        parts.append(f"expected {finding.expected}")
    if finding.found is not None:
        parts.append(f"found {finding.found}")
    return f" ({', '.join(parts)})" if parts else ""


def finding_line(who: str, finding: Finding) -> str:
    """The one-line plain form of a finding: ``who: code: path what is wrong (evidence)``."""
    where = f"{finding.path} " if finding.path else ""
    return f"{who}: {finding.code.value}: {where}{finding.message}{evidence(finding)}"


def tips(result: CheckResult) -> list[str]:
    """Repair commands, in the order to run them: each broken distribution, then clash repairs last."""
    lines = []
    for report in result.distributions:
        if report.status is Status.NOT_INSTALLED:
            lines.append(f"Tip: {report.name} is not installed in {result.environment.label}")
        repair = result.repairs.distributions.get(report.name)
        if repair is None:
            continue
        if report.status is Status.UNVERIFIABLE:
            if repair.step.runs_pip:
                lines.append(f"Tip: a reinstall by pip or uv records hashes for every file: {step_text(repair.step)}")
            continue
        if repair.explained:
            continue
        if repair.stale is not None:  # stale dist-infos beside it: their clean-up, not a reinstall
            done = repair.stale
            lines.extend(cleanup_tips(report.name, done.keep.location, done.keep.version, done.commands, done.refused))
            continue
        if repair.unlocked:  # a reinstall keeps it unlocked: remove it (repair.step), or accept it
            lines.append(
                f"Tip: {report.name} is not in the lock: uninstall it, or accept WD083 for it by a rule "
                f"(to uninstall: {shlex.join(repair.step.argv) if repair.step.argv else step_text(repair.step)})"
            )
            continue
        clean = repair.cache_clean_command
        if clean:
            lines.append(f"Tip: altered files are hard links, maybe into uv's cache; first run: {clean}")
        lines.extend(_appended_tips(report))
        lines.append(f"Tip: {step_text(repair.step)}")
    for pair in result.pairs:
        lines.extend(pair_tips(pair, result))
    return lines


def cleanup_tips(name: str, location: str, keep: str | None, commands: Sequence[str], refused: str | None) -> list[str]:
    """The clean-up of one project's stale dist-infos, as ``check``, ``deps`` and ``doctor`` all print it."""
    if refused is not None:
        return [f"Tip: {name}: no command: {refused}"]
    if not commands:
        return []
    return [
        f"Tip: {name}: remove every dist-info in {location}, then install {keep} once, the version whose files "
        f"are there (each uninstall removes only what its RECORD lists): {' && '.join(commands)}"
    ]


def repair_tip(report: DistributionReport, result: CheckResult) -> str | None:
    """The command that repairs one broken distribution (as its ``Tip:`` says); None when there is none,
    or when its breakage is another's bytes (the pair's own tip says what to do). A distribution the
    lock lacks gets the choice its text tip gives: uninstall it, or accept it."""
    if report.status is not Status.BROKEN:
        return None
    repair = result.repairs.distributions.get(report.name)
    if repair is None or repair.explained:
        return None
    if repair.stale is not None:
        return " && ".join(repair.stale.commands) or f"no command: {repair.stale.refused}"
    if repair.unlocked:  # a reinstall keeps it unlocked: remove it (repair.step), or accept it
        return f"not in the lock: uninstall it ({shlex.join(repair.step.argv)}), or accept WD083 for it by a rule"
    return step_text(repair.step)


def _appended_tips(report: DistributionReport) -> list[str]:
    """For files that are RECORD's bytes with more appended: reinstalling drops what was added.

    The rule is printed as TOML to paste (strings quoted as TOML basic strings, which
    JSON's escaping also is), indented under its tip.
    """
    import json

    lines = []
    for f in report.findings:
        if f.appended_bytes is None or f.accepted is not None:
            continue
        if f.path is None or runs_as_code(f.path):  # appended code is never offered for keeping
            lines.append(
                f"Tip: {f.path} runs as code, and {f.appended_bytes} byte(s) were appended to RECORD's bytes: "
                "read them before anything else runs; reinstalling drops them"
            )
            continue
        lines.append(
            f"Tip: {f.path} is RECORD's bytes with {f.appended_bytes} byte(s) appended (a CA bundle, say); "
            "reinstalling drops them. To keep them, accept exactly these bytes in pyproject.toml:"
        )
        fields = (("distribution", report.name), ("path", f.path), ("found", f.found), ("reason", "..."))
        lines.append("  [[tool.wheeldoctor.accept]]")
        lines.extend(f"  {key} = {json.dumps(value, ensure_ascii=False)}" for key, value in fields)
    return lines


def pair_tips(pair: ClashPair, result: CheckResult) -> list[str]:
    """What to do about one clashing pair, and what an uninstall of either side would delete."""
    repair = result.repairs.pair(pair)
    first, second = pair.first.name, pair.second.name
    deletes = (
        f"uninstalling either deletes all {pair.shared} shared path(s), the other's files among them"
        if pair.relation is Relation.UNRELATED
        else f"uninstalling {pair.winner.name} deletes all {pair.shared} shared path(s), "
        f"{pair.loser.name}'s among them: reinstall {pair.loser.name} after"
    )
    if pair.relation is Relation.OVERLAY:
        if pair.settled:
            return [f"Note: {pair.winner.name} lies on top of {pair.loser.name} ({pair.reason}); {deletes}"]
        # No "let the base win instead": that would overwrite the package that requires it.
        return [
            f"Tip: only one of {first} and {second} can own the {pair.differing} differing path(s); "
            f"reinstall {pair.winner.name} last ({pair.reason}): {step_text(repair.winner)}",
            f"Note: {deletes}",
        ]
    keep_winner, keep_loser = repair.choices
    return [
        f"Tip: {first} and {second} are unrelated (neither requires the other) yet write {pair.shared} of the "
        f"same path(s); they are alternatives: keep one.",
        f"Tip: keep {keep_winner.keep}: {_choice_text(keep_winner)}",
        f"Tip: or keep {keep_loser.keep}: {_choice_text(keep_loser)}",
        f"Note: {deletes}",
    ]


def _choice_text(choice: Choice) -> str:
    return f"no command: {choice.refused}" if choice.refused else " && ".join(choice.commands)


def step_text(step: RepairStep) -> str:
    """A repair step as a tip: the command, then what to know before running it (or why there is none)."""
    if not step.argv:
        return f"no command: {step.note}"
    return f"{step.command}  # {step.note}" if step.note else step.command


def pair_line(pair: ClashPair, overlaid: frozenset[str] = frozenset()) -> str:
    """One line that says what two clashing distributions did to each other.

    An overlay whose base is ``overlaid`` (every difference is the overlay's bytes) is
    one line for all its paths: ``overlay: W lies on top of L ...``.
    """
    if pair.relation is Relation.OVERLAY and pair.loser.name in overlaid and pair.settled:
        return (
            f"overlay: {subject_of(pair.winner)} lies on top of {subject_of(pair.loser)}: "
            f"{pair.differing} of {pair.shared} shared path(s) hold {pair.winner.name}'s bytes "
            f"({Code.REPLACED.value} replaced; {pair.loser.name} is overlaid)"
        )
    broken = ", ".join(pair.broken) or "neither"
    return (
        f"clash: {subject_of(pair.first)} and {subject_of(pair.second)} share {pair.shared} path(s), "
        f"{pair.differing} with different bytes; on disk: {pair.from_first} from {pair.first.name}, "
        f"{pair.from_second} from {pair.second.name}, {pair.from_neither} from neither; broken: {broken}; "
        f"relation: {pair.relation.value}"
    )


def subject_of(dist: InstalledDistribution) -> str:
    """``name version`` of an installed distribution, with the system package that owns it."""
    managed = dist.managed_by
    if managed is not None and managed.tool.system and managed.package:
        return f"{dist.name} {dist.version} [{managed.tool.value} {managed.package}]"
    return f"{dist.name} {dist.version}"


#: Findings counted in the summary, not listed: an overlay's bytes, the installers' known rewrites.
_NOT_SHOWN = frozenset({Kind.REPLACED, *AS_INSTALLED_KINDS})


def summary(result: CheckResult) -> str:
    """``N checked: a intact, b broken, …`` with only the non-zero counts."""
    counts: dict[Status, int] = {}
    for report in result.distributions:
        counts[report.status] = counts.get(report.status, 0) + 1
    parts = [f"{n} {status.value}" for status, n in sorted(counts.items(), key=lambda kv: list(Status).index(kv[0]))]
    every = [f for r in result.distributions for f in r.findings]
    accepted = sum(1 for f in every if f.accepted is not None)
    left_out = sum(1 for f in every if f.accepted is not None and f.accepted.by == SELECTED_OUT)
    replaced = sum(1 for f in every if f.kind in _NOT_SHOWN and f.accepted is None)
    recompiled = sum(1 for f in every if f.kind is Kind.RECOMPILED and f.accepted is None)
    rewritten = sum(1 for f in every if f.kind is Kind.REWRITTEN and f.accepted is None)
    extra = "".join(
        f", {n} {what}"
        for n, what in (
            (replaced - recompiled - rewritten, "replaced by an overlay"),
            (recompiled, "recompiled by the installer"),
            (rewritten, "rewritten by the installer"),
            (accepted - left_out, "accepted"),
            (left_out, "not selected (--select/--ignore)"),
        )
        if n
    )
    unrelated = f"; {len(result.unrelated)} unrelated clash(es)" if result.unrelated else ""
    # Every failing thing is counted, not only files: a run that fails never says "0 finding(s)".
    others = [
        (len(result.failing_hooks), "start-up hook(s)"),
        (len(result.failing_unowned), "unowned module(s)"),
        (len(result.unrelated), "unrelated pair(s)"),
    ]
    total = len(every) - accepted - replaced + sum(n for n, _ in others)
    files = len(every) - accepted - replaced
    breakdown = ", ".join(f"{n} {what}" for n, what in others if n)
    of = f" ({files} in files, {breakdown})" if breakdown else ""
    return (
        f"{len(result.distributions)} checked: {', '.join(parts) or 'nothing'}; "
        f"{total} finding(s){of}{extra}{unrelated}"
    )


def shown(finding: Finding, show_accepted: bool) -> bool:
    """Whether a finding gets its own line: not an overlay's bytes (one line per pair says it), not accepted."""
    return finding.kind not in _NOT_SHOWN and (finding.accepted is None or show_accepted)


def accepted_note(finding: Finding) -> str:
    """`` [accepted by config: reason]`` for an accepted finding, else empty."""
    if finding.accepted is None:
        return ""
    return f" [accepted by {finding.accepted.by}: {finding.accepted.reason}]"


def policy_lines(result: CheckResult) -> list[str]:
    """Stale and expired accept rules, fixed baseline entries: said, never failing."""
    policy = result.policy
    if policy is None:
        return []
    lines = []
    for rule in policy.expired:
        lines.append(f"Note: {rule.source}: {rule.key} expired on {rule.until}; it no longer accepts anything")
    for rule in policy.stale:
        lines.append(f"Note: {rule.source}: {rule.key} ({rule.distribution}) matched nothing: stale, remove it")
    for rule in policy.broad:
        lines.append(
            f"Note: {rule.source}: {rule.key} ({rule.distribution}) is broad: it pins no 'found', so it accepts "
            "only findings without bytes (requirements, duplicates, missing files), never changed content"
        )
    if policy.changed:
        changed = ", ".join(f"{e.distribution} {e.path or ''} {e.code}".replace("  ", " ") for e in policy.changed)
        lines.append(
            f"Note: {len(policy.changed)} baseline entr(ies) changed since pinned (changed: {changed}): "
            f"the finding is still there with other evidence, and fails again"
        )
    if policy.fixed:
        fixed = ", ".join(f"{e.distribution} {e.path or ''} {e.code}".replace("  ", " ") for e in policy.fixed)
        lines.append(
            f"Note: {len(policy.fixed)} baseline entr(ies) no longer occur (fixed: {fixed}); "
            f"write the baseline again to drop them"
        )
    return lines


def render_plain(result: CheckResult, show_accepted: bool = False, header: bool = True) -> Iterable[str]:
    """Plain lines for pipes and logs: the environment (``header``), one line per finding, the summary, tips."""
    if header:
        yield f"environment: {result.environment.label}"
    yield from managed_lines(result)
    yield from (line for _, line in finding_lines(result, show_accepted))
    yield from pair_failure_lines(result)
    overlaid = _overlaid(result)
    for pair in result.pairs:
        yield pair_line(pair, overlaid)
    yield from hooks_text.hook_lines(result.hooks)
    yield from hooks_text.unowned_lines(result.unowned, show=result.show_unowned)
    yield summary(result)
    yield from policy_lines(result)
    yield from tips(result)
    yield from hooks_text.hook_tips(result.hooks)


def pair_failure_lines(result: CheckResult) -> list[str]:
    """For a distribution whose own files pass, the unrelated pair that fails it anyway."""
    lines = []
    for report in result.distributions:
        if report.status not in (Status.INTACT, Status.ACCEPTED):
            continue
        for pair in result.pairs_failing(report.name):
            other = pair.second if pair.first.name == report.name else pair.first
            lines.append(
                f"{subject(report)}: files intact, but fails with {subject_of(other)}: unrelated, "
                f"both write {pair.shared} of the same path(s) (the clash line below)"
            )
    return lines


def _overlaid(result: CheckResult) -> frozenset[str]:
    return frozenset(r.name for r in result.distributions if r.status is Status.OVERLAID)


def finding_lines(result: CheckResult, show_accepted: bool) -> Iterable[tuple[DistributionReport, str]]:
    """The plain report's finding lines, with the report each is about."""
    for report in result.distributions:
        if report.status is Status.NOT_INSTALLED:
            yield report, f"{report.name}: not installed"
        for finding in report.findings:
            if shown(finding, show_accepted):
                yield report, finding_line(subject(report), finding) + accepted_note(finding)


def render_preflight(result: PreflightResult) -> Iterable[str]:
    """Plain lines for ``wheels``: broken wheels, clashes between them, overwrites."""
    if result.environment is not None:
        yield f"environment: {result.environment.label}"
    for wheel in result.wheels:
        for finding in wheel.findings:
            yield finding_line(f"{wheel.name} {wheel.version} (wheel)", finding)
    differing = [c for c in result.clashes if not c.identical]
    for clash in differing:
        yield f"clash: {clash.path} is shipped by {', '.join(clash.claimants)} with different bytes"
    for write in result.overwrites:
        if write.identical:
            continue
        whose = ", ".join(write.owners) if write.owners else "no installed distribution"
        yield f"overwrite: installing {write.wheel} would replace {write.location} (recorded by {whose})"
    shared = len(result.clashes)
    yield (
        f"{len(result.wheels)} wheel(s): {shared} shared path(s), {len(differing)} with different bytes; "
        f"{sum(not o.identical for o in result.overwrites)} installed file(s) of others would be replaced"
    )
    for pair in result.pairs:
        if pair.overlay is not None:
            base = pair.second if pair.overlay == pair.first else pair.first
            yield (
                f"Tip: {pair.overlay} requires {base} and lies on top of it ({pair.differing} differing path(s)): "
                f"install {pair.overlay} last"
            )
        else:
            yield (
                f"Tip: {pair.first} and {pair.second} are alternatives (neither requires the other) yet ship "
                f"{pair.differing} of the same path(s) with different bytes: install one, not both; "
                f"uninstalling either later would delete the other's files"
            )

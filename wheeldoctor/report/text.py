"""Results -> text for people: plain lines (the terminal table is :mod:`wheeldoctor.report.check_table`).

A finding reads ``subject: code: path what is wrong (expected …, found …)``, followed by
``Tip:`` lines with the exact command that repairs it. The findings a clash pair explains
are one block (:mod:`wheeldoctor.report.clash_text`), first.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable

from wheeldoctor.judge.clash import Relation
from wheeldoctor.judge.files import DistributionReport, Status, off_the_lock
from wheeldoctor.judge.policy import SELECTED_OUT
from wheeldoctor.model.code_paths import runs_as_code
from wheeldoctor.model.findings import AS_INSTALLED_KINDS, Finding, Kind
from wheeldoctor.report import hooks_text, native_text
from wheeldoctor.report.clash_text import block_lines, grouped, pair_blocks, pair_line, pair_tips
from wheeldoctor.report.finding_text import (
    accepted_note,
    cleanup_tips,
    finding_line,
    shown,
    step_text,
    subject,
    subject_of,
)
from wheeldoctor.report.policy_text import config_said
from wheeldoctor.results.check import CheckResult


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


def tips(result: CheckResult) -> list[str]:
    """Repair commands, in the order to run them: each broken distribution, then what a settled overlay's
    uninstall would delete. A clash pair's tip is in its block (:func:`clash_text.block_lines`), first."""
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
        if pair.relation is Relation.OVERLAY and pair.settled:
            lines.extend(pair_tips(pair, result))
    return lines


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


def summary(result: CheckResult) -> str:
    """``N checked: a intact, b broken, …`` with only the non-zero counts.

    A distribution that fails only for not being the lock's (its files passed) is counted as
    ``not as locked``, never as broken."""
    counts: dict[Status, int] = {}
    for report in result.distributions:
        counts[report.status] = counts.get(report.status, 0) + 1
    off_lock = sum(1 for report in result.distributions if off_the_lock(report))
    if off_lock:
        counts[Status.BROKEN] -= off_lock
    parts = [
        f"{n} {status.value}"
        for status, n in sorted(counts.items(), key=lambda kv: list(Status).index(kv[0]))
        if n or status is not Status.BROKEN
    ]
    if off_lock:
        parts.append(f"{off_lock} not as locked (files intact)")
    if result.bytecode is not None and result.bytecode[1]:
        parts.append(f"{result.bytecode[1]} unhashed .pyc not judged (another interpreter's)")
    every = [f for r in result.distributions for f in r.findings]
    accepted = sum(1 for f in every if f.accepted is not None)
    left_out = sum(1 for f in every if f.accepted is not None and f.accepted.by == SELECTED_OUT)
    replaced = sum(1 for f in every if f.kind in (Kind.REPLACED, *AS_INSTALLED_KINDS) and f.accepted is None)
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
        (len(result.failing_native), "native library finding(s)"),
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


def policy_lines(result: CheckResult) -> list[str]:
    """The config read and what it narrowed; stale and expired rules, fixed baseline entries: said, never failing."""
    policy = result.policy
    if policy is None:
        return []
    said = config_said(policy)
    lines = [] if said is None else [f"config: {said}"]
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


def render_plain(
    result: CheckResult, show_accepted: bool = False, header: bool = True, verbose: bool = False
) -> Iterable[str]:
    """Plain lines for pipes and logs: the environment (``header``), a block per clash pair (``verbose``:
    every finding in it), one line per other finding, the summary, tips."""
    if header:
        yield f"environment: {result.environment.label}"
    yield from managed_lines(result)
    blocks = pair_blocks(result)
    for block in blocks:
        yield from block_lines(block, result, verbose)
    yield from (line for _, line in finding_lines(result, show_accepted, grouped(blocks)))
    yield from pair_failure_lines(result)
    for pair in result.pairs:
        if pair.relation is Relation.OVERLAY and pair.settled:
            yield pair_line(pair)
    yield from hooks_text.hook_lines(result.hooks)
    yield from hooks_text.unowned_lines(result.unowned, show=result.show_unowned)
    yield from native_text.native_lines(result.native, show_accepted=show_accepted)
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
                f"both write {pair.shared} of the same path(s) (the clash above)"
            )
    return lines


def finding_lines(
    result: CheckResult, show_accepted: bool, blocked: frozenset[tuple[str, Finding]] = frozenset()
) -> Iterable[tuple[DistributionReport, str]]:
    """The plain report's finding lines, with the report each is about; not those a clash block shows (``blocked``)."""
    for report in result.distributions:
        if report.status is Status.NOT_INSTALLED:
            yield report, f"{report.name}: not installed"
        for finding in report.findings:
            if shown(finding, show_accepted) and (report.name, finding) not in blocked:
                yield report, finding_line(subject(report), finding) + accepted_note(finding)

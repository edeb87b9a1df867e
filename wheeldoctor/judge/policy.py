"""Accept rules and baselines applied to findings: which ones do not fail the run, and why.

Pure: takes reports and a :class:`Policy`, returns new reports and what the policy did.
A rule from a config accepts a finding first (``by: config``), then a baseline entry
(``by: baseline``). A rule past its ``until`` date accepts nothing and is reported as
expired; a rule that matched nothing, and a baseline entry no finding matched, are
reported (stale, fixed) but never fail. Rules and entries for distributions that were
not checked are neither.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from wheeldoctor.formats.baseline import BaselineEntry
from wheeldoctor.formats.config import AcceptRule, Config
from wheeldoctor.judge.files import DistributionReport
from wheeldoctor.judge.selection import CodeSelection
from wheeldoctor.model.findings import Acceptance, Finding, Kind

SELECTED_OUT = "selection"
"""``Acceptance.by`` of a finding whose code ``--select``/``--ignore`` leave out."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    """What may be accepted: a config's rules, a baseline's entries, and the date ``until`` is read against."""

    today: datetime.date
    config: Config = field(default_factory=Config)
    baseline: tuple[BaselineEntry, ...] = ()
    baseline_source: str | None = None
    selection: CodeSelection = field(default_factory=CodeSelection)
    """``--select``/``--ignore``: findings of codes left out count as accepted ``by: selection``."""

    @property
    def empty(self) -> bool:
        """Nothing to accept and no config to name: the run is judged exactly as without a policy."""
        return (
            self.config.source is None
            and not self.config.rules
            and self.baseline_source is None
            and self.selection.everything
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyOutcome:
    """What the policy did in one run, for the report."""

    config: str | None
    baseline: str | None
    accepted: int
    stale: tuple[AcceptRule, ...]
    expired: tuple[AcceptRule, ...]
    fixed: tuple[BaselineEntry, ...]
    broad: tuple[AcceptRule, ...] = ()
    """Live rules that pin no ``found``: they accept only findings without bytes, and are said."""
    changed: tuple[BaselineEntry, ...] = ()
    """Entries whose finding is still there with other evidence (``found``): it fails again."""
    narrowed: tuple[str, ...] = ()
    """What the config file set that narrows the run: ``ignore WD061``, ``2 accept rule(s)``, ..."""


@dataclass(frozen=True, slots=True)
class Acceptances:
    """Reports with their findings accepted, and which rules and entries were used."""

    reports: tuple[DistributionReport, ...]
    rules: frozenset[int] = frozenset()
    """Positions in ``Policy.config.rules`` of the rules that accepted something."""
    entries: frozenset[int] = frozenset()
    """Positions in ``Policy.baseline`` of the entries that accepted something."""


def accept(reports: Sequence[DistributionReport], policy: Policy) -> Acceptances:
    """Mark every finding a live rule or a baseline entry accepts; statuses are left to the caller."""
    live = [(i, r) for i, r in enumerate(policy.config.rules) if not r.expired(policy.today)]
    used_rules: set[int] = set()
    used_entries: set[int] = set()
    out = []
    for report in reports:
        findings = []
        for finding in report.findings:
            if finding.accepted is None:
                findings.append(_accepted(report, finding, live, policy, used_rules, used_entries))
            else:
                findings.append(finding)
        out.append(replace(report, findings=tuple(findings)) if findings != list(report.findings) else report)
    return Acceptances(tuple(out), frozenset(used_rules), frozenset(used_entries))


def _accepted(
    report: DistributionReport,
    finding: Finding,
    live: Sequence[tuple[int, AcceptRule]],
    policy: Policy,
    used_rules: set[int],
    used_entries: set[int],
) -> Finding:
    code, found = finding.code.value, finding.found
    for index, rule in live:
        if rule.matches(report.name, finding.path, code, found):
            used_rules.add(index)
            return replace(finding, accepted=Acceptance("config", rule.reason, rule.source))
    for index, entry in enumerate(policy.baseline):
        if entry.matches(report.name, report.version, finding.path, code, found):
            used_entries.add(index)
            source = policy.baseline_source or ""
            return replace(finding, accepted=Acceptance("baseline", "in the baseline", source))
    if not policy.selection.allows(code):
        # Last: a rule that names the finding is used, never called stale because of a selection.
        return replace(finding, accepted=Acceptance(SELECTED_OUT, "not selected", policy.selection.describe()))
    return finding


def outcome(policy: Policy, reports: Sequence[DistributionReport], *passes: Acceptances) -> PolicyOutcome:
    """Sum up the passes: accepted findings, stale and expired rules, fixed and changed baseline entries.

    An entry no finding matched is ``changed`` when a finding of the same distribution, path
    and code is still there (its bytes or evidence moved on), else ``fixed``.
    """
    checked = {r.name for r in reports}
    rules = frozenset().union(*(p.rules for p in passes))
    entries = frozenset().union(*(p.entries for p in passes))
    mine = [r for r in policy.config.rules if r.distribution in checked]
    unmatched = [e for i, e in enumerate(policy.baseline) if e.distribution in checked and i not in entries]
    present = {(r.name, f.path, f.code.value) for r in reports for f in r.findings if f.accepted is None}
    return PolicyOutcome(
        config=policy.config.source,
        baseline=policy.baseline_source,
        accepted=sum(1 for r in reports for f in r.findings if f.accepted is not None),
        stale=tuple(
            r for i, r in enumerate(policy.config.rules) if r in mine and i not in rules and not _old(r, policy)
        ),
        expired=tuple(r for r in mine if _old(r, policy)),
        broad=tuple(r for r in mine if r.broad and not _old(r, policy)),
        fixed=tuple(e for e in unmatched if (e.distribution, e.path, e.code) not in present),
        changed=tuple(e for e in unmatched if (e.distribution, e.path, e.code) in present),
        narrowed=narrowed(policy),
    )


def narrowed(policy: Policy) -> tuple[str, ...]:
    """What the config file set that can narrow a run: its select and ignore, accept rules, hook templates."""
    source = policy.config.source
    if source is None:
        return ()
    out = list(policy.selection.narrowed_by(source))
    if policy.config.rules:
        out.append(f"{len(policy.config.rules)} accept rule(s)")
    if policy.config.known_hooks:
        out.append(f"{len(policy.config.known_hooks)} known-hook template(s)")
    return tuple(out)


def baseline_entries(reports: Iterable[DistributionReport]) -> list[BaselineEntry]:
    """The findings a baseline written now pins: every one not accepted and not an overlay's bytes."""
    return [
        BaselineEntry(distribution=r.name, version=r.version, path=f.path, code=f.code.value, found=f.found)
        for r in reports
        for f in r.findings
        if f.accepted is None and f.kind is not Kind.REPLACED
    ]


def _old(rule: AcceptRule, policy: Policy) -> bool:
    return rule.expired(policy.today)

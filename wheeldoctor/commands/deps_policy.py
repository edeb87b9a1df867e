"""Accept rules and baselines applied to what ``deps`` finds: conflicts, compatibility, stale dist-infos.

The same rules as for files, through :func:`~wheeldoctor.judge.policy.accept`: each
element becomes a one-finding report of its distribution, matched by ``(distribution,
path, code, found)`` with no path. ``found`` says what is installed instead, named so
that two conflicts of one distribution never share it: ``NAME VERSION`` or ``NAME not
installed`` for a requirement, the dist-infos' paths for a duplicate, the target's value
for a compatibility finding. A pinned conflict fails again once a different version is
installed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from wheeldoctor.judge.files import DistributionReport, Status
from wheeldoctor.judge.policy import Acceptances, Policy, PolicyOutcome, accept
from wheeldoctor.model.findings import Finding, Kind
from wheeldoctor.results.deps import DepsResult


@dataclass(frozen=True, slots=True)
class DepsAcceptances:
    """``deps`` less what the policy accepts, and how the policy was used."""

    deps: DepsResult
    done: Acceptances
    accepted: int


def deps_reports(deps: DepsResult) -> list[DistributionReport]:
    """One report per failing element of ``deps``, named as accept rules and baselines name it."""
    return [_report(e) for e in _elements(deps)]


def accept_deps(deps: DepsResult, policy: Policy) -> DepsAcceptances:
    """``deps`` without the elements ``policy`` accepts (they no longer fail the run)."""
    elements = _elements(deps)
    done = accept([_report(e) for e in elements], policy)
    kept = {id(e) for e, r in zip(elements, done.reports, strict=True) if r.findings[0].accepted is None}
    accepted = len(elements) - len(kept)
    if not accepted:
        return DepsAcceptances(deps, done, 0)
    conflicts = tuple(c for c in deps.dependencies.conflicts if id(c) in kept)
    narrowed = replace(
        deps,
        dependencies=replace(deps.dependencies, conflicts=conflicts),
        compatibility=tuple(f for f in deps.compatibility if id(f) in kept),
        duplicates=tuple(d for d in deps.duplicates if not d.failing or id(d) in kept),
    )
    return DepsAcceptances(narrowed, done, accepted)


def with_deps(outcome: PolicyOutcome, policy: Policy, done: DepsAcceptances) -> PolicyOutcome:
    """``outcome`` (the check's) with what the deps pass used: its rules are not stale, its entries not
    fixed; an entry whose conflict is still there with another ``found`` is changed."""
    used_rules = {policy.config.rules[i] for i in done.done.rules}
    used_entries = {policy.baseline[i] for i in done.done.entries}
    present = {(r.name, f.code.value) for r in done.done.reports for f in r.findings if f.accepted is None}
    unmatched = [e for e in outcome.fixed if e not in used_entries]
    return replace(
        outcome,
        accepted=outcome.accepted + done.accepted,
        stale=tuple(r for r in outcome.stale if r not in used_rules),
        fixed=tuple(e for e in unmatched if (e.distribution, e.code) not in present),
        changed=(
            *(e for e in outcome.changed if e not in used_entries),
            *(e for e in unmatched if (e.distribution, e.code) in present),
        ),
    )


def _elements(deps: DepsResult) -> Sequence[Any]:
    return [
        *deps.dependencies.conflicts,
        *deps.compatibility,
        *(d for d in deps.duplicates if d.failing),
    ]


def _report(element: Any) -> DistributionReport:
    name = getattr(element, "dist", None) or element.name
    version = getattr(element, "version", None)
    if hasattr(element, "installed"):  # a requirement
        found = f"{element.name} {element.installed}" if element.installed else f"{element.name} not installed"
    elif hasattr(element, "stale"):  # a duplicate
        name, version = element.name, element.active.version
        found = ", ".join(str(d.path) for d in element.stale)
    else:
        found = element.found
    finding = Finding(code=element.code, kind=Kind.MALFORMED, path=None, message=element.message, found=found)
    return DistributionReport(
        name=name, version=version, location=None, installer=None, status=Status.BROKEN, findings=(finding,)
    )

"""Overlays, as rpm's "replaced" file state: another distribution's bytes, there on purpose.

Pure: takes the reports, the clashes and who requires whom, returns new reports.
W *overlays* L when W requires L (directly or not, markers for the target) and L does
not require W. L's finding on a path that holds W's recorded bytes becomes WD060
``replaced`` when W is sound (none of its own findings breaks trust, once its own
overlays are resolved) and every path W and L record with different bytes holds the
bytes of a sound overlay of L: W's, or those of one lying on top of both. A path that
holds L's bytes or nobody's, a broken W, or a pair where neither requires the other
leave the findings as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from wheeldoctor.judge.clash import Clash
from wheeldoctor.judge.files import DistributionReport
from wheeldoctor.judge.requirements import RequirementGraph
from wheeldoctor.model.findings import BREAKING_KINDS, Code, Finding, Kind


def overlays(graph: RequirementGraph, top: str, below: str) -> bool:
    """Whether ``top`` lies on top of ``below``: it requires it, and not the other way round."""
    return top != below and graph.requires(top, below) and not graph.requires(below, top)


def sound(report: DistributionReport) -> bool:
    """No finding of its own breaks trust in its bytes (accepted and replaced ones do not)."""
    return not any(f.kind in BREAKING_KINDS and f.accepted is None for f in report.findings)


def resolve_overlays(
    reports: Sequence[DistributionReport], clashes: Iterable[Clash], graph: RequirementGraph
) -> list[DistributionReport]:
    """``reports`` with every finding an intact overlay explains turned into WD060 ``replaced``.

    Reports of distributions that lie on top of the checked ones must be among
    ``reports`` for their bytes to count (a named check verifies them too). Statuses
    are left as they are: the caller computes them once, after every judgement.
    """
    differing: dict[frozenset[str], list[Clash]] = {}
    for clash in clashes:
        if clash.identical:
            continue
        for a in clash.claimants:
            for b in clash.claimants:
                if a < b:
                    differing.setdefault(frozenset((a, b)), []).append(clash)
    current = {r.name: r for r in reports}
    fine = {name for name, r in current.items() if sound(r)}
    changed = True
    while changed:  # a chain (W over M over L) settles from the top down
        changed = False
        for name, report in current.items():
            if name in fine:
                continue
            settled = _settled_overlays(name, report, differing, fine, graph)
            if not settled:
                continue
            findings = tuple(_replaced(f) if _explained(f, settled) else f for f in report.findings)
            if findings != report.findings:
                current[name] = replace(report, findings=findings)
                changed = True
                if sound(current[name]):
                    fine.add(name)
    return [current[r.name] for r in reports]


def _settled_overlays(
    name: str,
    report: DistributionReport,
    differing: dict[frozenset[str], list[Clash]],
    fine: set[str],
    graph: RequirementGraph,
) -> set[str]:
    """The sound overlays of ``name`` whose every differing path holds a sound overlay's bytes."""
    sources = {f.content_from for f in report.findings if f.content_from is not None and f.accepted is None}
    settled = set()
    for top in sources:
        if top is None or top not in fine or not overlays(graph, top, name):
            continue
        shared = differing.get(frozenset((top, name)), ())
        if all(c.on_disk is not None and c.on_disk in fine and overlays(graph, c.on_disk, name) for c in shared):
            settled.add(top)
    return settled


def _explained(finding: Finding, settled: set[str]) -> bool:
    return finding.kind is Kind.MODIFIED and finding.accepted is None and finding.content_from in settled


def _replaced(finding: Finding) -> Finding:
    top = finding.content_from
    return replace(
        finding,
        code=Code.REPLACED,
        kind=Kind.REPLACED,
        message=f"holds {top}'s bytes: {top} requires this distribution and lies on top of it",
    )

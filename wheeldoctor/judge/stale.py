"""Stale dist-infos: of several dist-infos of one project in one directory, whose files are on disk.

Pure: takes the verification of every dist-info of the project in the directory Python
reads it from (:class:`~wheeldoctor.judge.duplicates.Duplicate` says which), returns a
:class:`StaleVerdict`. Which dist-info Python reads first is directory order; which one's
files are installed is what the files say: the one whose RECORD every file on disk
matches. That one is kept by the repair (its version, so nothing changes on disk); the
others are stale. pip and uv uninstall exactly what a RECORD lists: a dist-info whose
RECORD lists none of its own files (a copy renamed by hand, whose RECORD lists the
original's; what a cut-short uninstall leaves), or that has no RECORD, is left behind by
every uninstall, so no installer command can remove it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from wheeldoctor.judge.files import DistributionReport
from wheeldoctor.model.environment import InstalledDistribution
from wheeldoctor.model.findings import BREAKING_KINDS, Code, Finding, Kind


@dataclass(frozen=True, slots=True, kw_only=True)
class StaleVerdict:
    """Whose files the dist-infos of one project in one directory hold on disk."""

    name: str
    dists: tuple[InstalledDistribution, ...]
    """Every dist-info of the project there; the first is the one Python reads."""
    keep: InstalledDistribution | None
    """The one whose RECORD every file on disk matches; None when none does, or it cannot be told."""
    unremovable: tuple[InstalledDistribution, ...] = ()
    """Those whose RECORD lists none of their own files, or that have none: no installer removes them."""
    why: str
    """How ``keep`` was told, or why it could not be."""

    @property
    def active(self) -> InstalledDistribution:
        """The one ``importlib.metadata`` and pip read: first in directory order."""
        return self.dists[0]

    @property
    def location(self) -> str:
        """The site directory they share."""
        return self.active.location

    @property
    def stale(self) -> tuple[InstalledDistribution, ...]:
        """Every one but ``keep`` (all of them when none can be kept)."""
        return tuple(d for d in self.dists if d is not self.keep)

    @property
    def repairable(self) -> str | None:
        """Why no installer command may clean this up; None when one may."""
        if self.unremovable:
            names = ", ".join(_name(d) for d in self.unremovable)
            return (
                f"{names}: {_why_unremovable(self.unremovable[0], self.dists)}, so every uninstall leaves it "
                "behind; remove that directory by hand, then check again"
            )
        if self.keep is None:
            return f"{self.why}: which version is installed cannot be told; reinstall the one you want"
        return None


def judge_stale(dists: Sequence[InstalledDistribution], reports: Mapping[str, DistributionReport]) -> StaleVerdict:
    """Which of ``dists`` (one project's dist-infos in one directory, Python's first) holds its files.

    ``reports`` are their verifications by dist-info path; each dist's RECORD must have been
    read (a copy is told by its rows).
    """
    name = dists[0].name
    unremovable = tuple(d for d in dists if _unremovable(d))
    whole = [d for d in dists if d not in unremovable and d.path in reports and _sound(reports[d.path])]
    if len(whole) > 1 and len({d.version for d in whole}) == 1:  # one version twice: keep the one Python reads
        whole = [dists[0]] if dists[0] in whole else whole[:1]
    keep = whole[0] if len(whole) == 1 else None
    if keep is not None:
        why = f"{_name(keep)}'s RECORD matches every file on disk"
    elif whole:
        why = f"the RECORDs of {', '.join(_name(d) for d in whole)} each match every file on disk"
    else:
        why = "no one's RECORD matches every file on disk"
    return StaleVerdict(name=name, dists=tuple(dists), keep=keep, unremovable=unremovable, why=why)


def _sound(report: DistributionReport) -> bool:
    return not any(f.kind in BREAKING_KINDS and f.accepted is None for f in report.findings)


def _unremovable(dist: InstalledDistribution) -> bool:
    """Whether no uninstall removes ``dist``: it has no RECORD, or its RECORD lists none of its own files."""
    if dist.legacy:
        return False  # an egg-info is never stale here: no RECORD by design, and no installer writes one now
    if dist.record is None:
        return True
    own = _name(dist) + "/"
    return not any(row.path.startswith(own) for row in dist.record.rows)


def _why_unremovable(dist: InstalledDistribution, dists: Sequence[InstalledDistribution]) -> str:
    if dist.record is None:
        return "it has no RECORD"
    others = tuple(_name(d) + "/" for d in dists if d is not dist)
    if any(row.path.startswith(others) for row in dist.record.rows):
        return "a copy of another dist-info: its RECORD lists that one's files, not its own"
    return "its RECORD lists none of its own files"


def _name(dist: InstalledDistribution) -> str:
    return dist.directory


def stale_findings(verdict: StaleVerdict) -> tuple[Finding, ...]:
    """WD052 on the dist-info Python reads, for each dist-info there that does not hold the files."""
    keep = verdict.keep
    findings = []
    for dist in verdict.dists:
        if dist is keep:
            continue
        if dist in verdict.unremovable:
            what = f"left behind by every uninstall: {_why_unremovable(dist, verdict.dists)}"
        elif keep is None:
            what = f"one of {len(verdict.dists)} dist-infos of {verdict.name} here, and {verdict.why}"
        elif dist is verdict.active:
            what = f"stale: Python reads it first, but the files are {keep.name} {keep.version}'s ({verdict.why})"
        else:
            what = f"stale: its RECORD does not match the files, which are {keep.version}'s ({verdict.why})"
        findings.append(
            Finding(
                code=Code.STALE_DIST_INFO,
                kind=Kind.STALE,
                path=_name(dist),
                message=f"is {what}",
                expected=f"{verdict.name} {keep.version}" if keep is not None else None,
                found=f"{verdict.name} {dist.version}",
            )
        )
    return tuple(findings)


def with_stale(report: DistributionReport, verdict: StaleVerdict) -> DistributionReport:
    """``report`` (of the dist-info Python reads) with the verdict's findings added."""
    return replace(report, findings=(*report.findings, *stale_findings(verdict)))

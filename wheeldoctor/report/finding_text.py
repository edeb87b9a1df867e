"""How one finding, its distribution and one repair step read: the pieces every text report joins.

A finding reads ``subject: code: path what is wrong (expected …, found …)``; a repair step
reads as its command, then what to know before running it; a stale clean-up as one tip.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from wheeldoctor.model.findings import AS_INSTALLED_KINDS, Finding, Kind

if TYPE_CHECKING:  # types only: deps's report needs neither the file judge nor the repair steps
    from wheeldoctor.judge.files import DistributionReport
    from wheeldoctor.model.environment import InstalledDistribution
    from wheeldoctor.repair.steps import RepairStep


def subject(report: DistributionReport) -> str:
    """``name version`` as findings are introduced, with the system package that owns it."""
    who = f"{report.name} {report.version}" if report.version else report.name
    managed = report.dist.managed_by if report.dist is not None else None
    if managed is not None and managed.tool.system and managed.package:
        who += f" [{managed.tool.value} {managed.package}]"
    return who


def subject_of(dist: InstalledDistribution) -> str:
    """``name version`` of an installed distribution, with the system package that owns it."""
    managed = dist.managed_by
    if managed is not None and managed.tool.system and managed.package:
        return f"{dist.name} {dist.version} [{managed.tool.value} {managed.package}]"
    return f"{dist.name} {dist.version}"


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


def step_text(step: RepairStep) -> str:
    """A repair step as a tip: the command, then what to know before running it (or why there is none)."""
    if not step.argv:
        return f"no command: {step.note}"
    return f"{step.command}  # {step.note}" if step.note else step.command


#: Findings counted in the summary, not listed: an overlay's bytes, the installers' known rewrites.
_NOT_SHOWN = frozenset({Kind.REPLACED, *AS_INSTALLED_KINDS})


def shown(finding: Finding, show_accepted: bool) -> bool:
    """Whether a finding gets its own line: not an overlay's bytes (one line per pair says it), not accepted."""
    return finding.kind not in _NOT_SHOWN and (finding.accepted is None or show_accepted)


def accepted_note(finding: Finding) -> str:
    """`` [accepted by config: reason]`` for an accepted finding, else empty."""
    if finding.accepted is None:
        return ""
    return f" [accepted by {finding.accepted.by}: {finding.accepted.reason}]"


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

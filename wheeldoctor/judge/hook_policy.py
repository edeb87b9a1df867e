"""Accept rules and baselines applied to start-up hooks (WD070, WD071) and unowned modules (WD072).

The same rules as for files, through the same :func:`~wheeldoctor.judge.policy.accept`:
each finding is matched by ``(distribution, path, code, found)``, where the distribution
is the hook's owner, or ``(unowned)`` for what nobody owns, and ``found`` is the hook's
``sha256=…``. A rule pinned to that digest accepts those bytes only: a changed hook fails
again. A hook whose bytes could not be read (no ``found``) is accepted by no rule and no
baseline: a rule without ``found`` would accept whatever it holds later.
"""

from __future__ import annotations

from dataclasses import replace

from wheeldoctor.judge.files import DistributionReport, Status
from wheeldoctor.judge.hooks import HookAudit
from wheeldoctor.judge.policy import SELECTED_OUT, Acceptances, Policy, accept
from wheeldoctor.model.findings import Finding
from wheeldoctor.model.ownership import UnownedScan


def startup_reports(hooks: HookAudit | None, unowned: UnownedScan | None) -> list[DistributionReport]:
    """One report per WD070/WD071/WD072 finding, named as accept rules and baselines name it.

    The subject is the hook's owner (its version too), or ``(unowned)``; policy's
    :func:`~wheeldoctor.judge.policy.accept` and baseline writing take these as they are.
    """
    reports = [
        DistributionReport(
            name=h.subject,
            version=h.owner.version if h.owner else None,
            location=h.site_dir,
            installer=None,
            status=Status.BROKEN,
            findings=(f,),
        )
        for h in (hooks.hooks if hooks is not None else ())
        if (f := h.finding) is not None
    ]
    reports += [
        DistributionReport(
            name=i.subject,
            version=None,
            location=i.site_dir,
            installer=None,
            status=Status.BROKEN,
            findings=(i.finding,),
        )
        for i in (unowned.importable if unowned is not None else ())
    ]
    return reports


def accept_startup(
    hooks: HookAudit, unowned: UnownedScan, policy: Policy
) -> tuple[HookAudit, UnownedScan, Acceptances]:
    """``hooks`` and ``unowned`` with the findings ``policy`` accepts marked, and what the policy used.

    The :class:`Acceptances` it returns holds one report per finding judged (named as the
    rules name it), for :func:`~wheeldoctor.judge.policy.outcome` to count and to tell
    stale rules from used ones.
    """
    done = accept(startup_reports(hooks, unowned), policy)
    findings = iter(r.findings[0] for r in done.reports)
    new_hooks = tuple(replace(h, finding=_pinned(next(findings))) if h.finding is not None else h for h in hooks.hooks)
    new_imports = tuple(replace(i, finding=next(findings)) for i in unowned.importable)
    return replace(hooks, hooks=new_hooks), replace(unowned, importable=new_imports), done


def _pinned(finding: Finding) -> Finding:
    """``finding``, no longer accepted by a rule or baseline when it pins no bytes (an unreadable hook)."""
    if finding.found is None and finding.accepted is not None and finding.accepted.by != SELECTED_OUT:
        return replace(finding, accepted=None)
    return finding

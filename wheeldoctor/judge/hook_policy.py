"""Accept rules and baselines applied to start-up hooks (WD070, WD071) and unowned modules (WD072).

The same rules as for files, through the same :func:`~wheeldoctor.judge.policy.accept`:
each finding is matched by ``(distribution, path, code, found)``, where the distribution
is the hook's owner, or ``(unowned)`` for what nobody owns, and ``found`` is the hook's
``sha256=…``. A rule pinned to that digest accepts those bytes only: a changed hook fails
again.
"""

from __future__ import annotations

from dataclasses import replace

from wheeldoctor.judge.files import DistributionReport, Status
from wheeldoctor.judge.hooks import HookAudit
from wheeldoctor.judge.policy import Acceptances, Policy, accept
from wheeldoctor.model.ownership import UnownedScan


def startup_reports(hooks: HookAudit | None, unowned: UnownedScan | None) -> list[DistributionReport]:
    """One report per WD070/WD071/WD072 finding, named as accept rules and baselines name it.

    The subject is the hook's owner (its version too), or ``(unowned)``; policy's
    :func:`~wheeldoctor.judge.policy.accept` and baseline writing take these as they are.
    """
    reports = [
        DistributionReport(h.subject, h.owner.version if h.owner else None, h.site_dir, None, Status.BROKEN, (f,))
        for h in (hooks.hooks if hooks is not None else ())
        if (f := h.finding) is not None
    ]
    reports += [
        DistributionReport(i.subject, None, i.site_dir, None, Status.BROKEN, (i.finding,))
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
    new_hooks = tuple(replace(h, finding=next(findings)) if h.finding is not None else h for h in hooks.hooks)
    new_imports = tuple(replace(i, finding=next(findings)) for i in unowned.importable)
    return replace(hooks, hooks=new_hooks), replace(unowned, importable=new_imports), done

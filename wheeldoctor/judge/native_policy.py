"""Accept rules and baselines applied to the native section's findings (WD090-WD094).

The same rules as for files, through the same :func:`~wheeldoctor.judge.policy.accept`:
each finding is matched by ``(distribution, path, code, found)``, where the distribution
is the finding's subject: the distribution that installed the object (WD090, WD091,
WD094), the library (``libcudart``: WD092) or the project (``nvidia-cuda-runtime``:
WD093). No native finding pins bytes (``found`` is empty), so a rule without ``found``
accepts it.
"""

from __future__ import annotations

from dataclasses import replace

from wheeldoctor.judge.files import DistributionReport, Status
from wheeldoctor.judge.native_audit import NativeAudit
from wheeldoctor.judge.policy import Acceptances, Policy, accept


def native_reports(audit: NativeAudit | None) -> list[DistributionReport]:
    """One report per native finding, named as accept rules and baselines name it."""
    return [
        DistributionReport(
            name=f.subject,
            version=f.version,
            location=f.site_dir,
            installer=None,
            status=Status.BROKEN,
            findings=(f.finding,),
        )
        for f in (audit.findings if audit is not None else ())
    ]


def accept_native(audit: NativeAudit, policy: Policy) -> tuple[NativeAudit, Acceptances]:
    """``audit`` with the findings ``policy`` accepts marked, and what the policy used."""
    done = accept(native_reports(audit), policy)
    findings = tuple(replace(f, finding=r.findings[0]) for f, r in zip(audit.findings, done.reports, strict=True))
    return replace(audit, findings=findings), done

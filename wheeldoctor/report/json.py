"""Results -> the versioned JSON document (its schema: docs/schema/report.schema.json)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from wheeldoctor.report import inert
from wheeldoctor.report.startup_json import hook_json, startup_json, startup_sections

if TYPE_CHECKING:  # types only: a document imports what its own command produced, no more
    from wheeldoctor.formats.baseline import BaselineEntry
    from wheeldoctor.formats.config import AcceptRule
    from wheeldoctor.formats.lock_fetched import FetchSummary
    from wheeldoctor.judge.clash import Clash, ClashPair
    from wheeldoctor.judge.compat import CompatibilityFinding
    from wheeldoctor.judge.deps import DependencyConflict
    from wheeldoctor.judge.duplicates import Duplicate
    from wheeldoctor.judge.files import DistributionReport
    from wheeldoctor.judge.policy import PolicyOutcome
    from wheeldoctor.judge.preflight import PreflightResult
    from wheeldoctor.model.environment import Environment
    from wheeldoctor.model.findings import Finding
    from wheeldoctor.model.managed import ManagedBy
    from wheeldoctor.repair.repairs import PairRepair, Repairs
    from wheeldoctor.repair.requirements import DuplicateRepair
    from wheeldoctor.repair.steps import RepairStep
    from wheeldoctor.results.check import CheckResult, DoctorResult
    from wheeldoctor.results.deps import DepsResult
    from wheeldoctor.results.imports import ImportsResult, ImportVerdict

#: Bump the major part on any change that can break a reader; add fields freely.
SCHEMA_VERSION = "1.2"


def fetched_json(summary: FetchSummary | None) -> dict[str, Any]:
    """``{"fetched": ...}`` for a document made with ``--lock``; nothing otherwise."""
    if summary is None:
        return {}
    from wheeldoctor.report.fetch import fetch_json

    return {"fetched": fetch_json(summary)}


def finding_json(finding: Finding) -> dict[str, Any]:
    """One finding as a JSON object."""
    return {
        "code": finding.code.value,
        "kind": finding.kind.value,
        "path": finding.path,
        "expected": finding.expected,
        "found": finding.found,
        "content_from": finding.content_from,
        "message": finding.message,
        "evidence": finding.evidence,
        "appended_bytes": finding.appended_bytes,
        "accepted": None
        if finding.accepted is None
        else {"by": finding.accepted.by, "reason": finding.accepted.reason, "source": finding.accepted.source},
    }


def distribution_json(report: DistributionReport, repairs: Repairs | None = None) -> dict[str, Any]:
    """One distribution's verdict as a JSON object (with ``repairs``, the command that repairs it)."""
    document = {
        "name": report.name,
        "version": report.version,
        "location": report.location,
        "installer": report.installer,
        "status": report.status.value,
        "findings": [finding_json(f) for f in report.findings],
        "managed_by": managed_json(report.dist.managed_by) if report.dist is not None else None,
        "verified_by": dict(report.verified_by),
    }
    if repairs is not None:
        from wheeldoctor.judge.files import Status

        repair = repairs.distributions.get(report.name) if report.status is Status.BROKEN else None
        document["repair"] = repair_json(repair.step) if repair is not None else None
    return document


def managed_json(managed: ManagedBy | None) -> dict[str, Any] | None:
    """Who manages a distribution: ``{"tool": "dpkg", "package": "python3-yaml", ...}``."""
    if managed is None:
        return None
    return {
        "tool": managed.tool.value,
        "package": managed.package,
        "version": managed.version,
        "record": managed.record,
        "detail": managed.detail,
        "unverifiable": managed.unverifiable,
    }


def repair_json(step: RepairStep) -> dict[str, Any]:
    """A repair step as data: the manager, the argv, whether it runs pip or uv, what to know first."""
    return {
        "manager": step.manager.value,
        "package": step.package,
        "argv": list(step.argv),
        "command": step.command,
        "runs_pip": step.runs_pip,
        "note": step.note,
    }


def clash_json(clash: Clash) -> dict[str, Any]:
    """One shared path as a JSON object."""
    return {
        "path": clash.path,
        "location": clash.location,
        "claimants": list(clash.claimants),
        "identical": clash.identical,
        "on_disk": clash.on_disk,
    }


def pair_json(pair: ClashPair, repair: PairRepair) -> dict[str, Any]:
    """One pair of clashing distributions, how they are related, and the ways to repair them."""
    choices = repair.choices
    return {
        "distributions": [pair.first.name, pair.second.name],
        "shared": pair.shared,
        "differing": pair.differing,
        "on_disk": {pair.first.name: pair.from_first, pair.second.name: pair.from_second},
        "on_disk_from_neither": pair.from_neither,
        "broken": list(pair.broken),
        "winner": pair.winner.name,
        "winner_reason": pair.reason,
        "relation": pair.relation.value,
        "settled": pair.settled,
        # The best choice as one command line; every choice in ``repair_choices``; ``repair_step``
        # reinstalls the winner (the whole repair of an overlay, the last step of keeping one).
        "repair": " && ".join(choices[0].commands),
        "repair_choices": [{"keep": c.keep, "remove": c.remove, "commands": list(c.commands)} for c in choices],
        "repair_step": repair_json(repair.winner),
    }


def check_document(result: CheckResult, command: str = "check") -> dict[str, Any]:
    """The whole ``check`` document."""
    from wheeldoctor.judge.files import Status

    env = result.environment
    counts = {status.value: 0 for status in Status}
    for report in result.distributions:
        counts[report.status.value] += 1
    return {
        **header(command, result.healthy),
        "environment": environment_json(env),
        "summary": {
            "checked": len(result.distributions),
            **counts,
            "unrelated_clashes": len(result.unrelated),
            "accepted_findings": sum(1 for r in result.distributions for f in r.findings if f.accepted is not None),
        },
        "distributions": [distribution_json(r, result.repairs) for r in result.distributions],
        "clashes": [clash_json(c) for c in result.clashes],
        "clash_pairs": [pair_json(p, result.repairs.pair(p)) for p in result.pairs],
        "policy": policy_json(result.policy),
        **startup_sections(result, finding_json),
        **native_section(result),
        **fetched_json(result.fetched),
    }


def native_section(result: CheckResult) -> dict[str, Any]:
    """``{"native": ...}`` when the check audited the shared objects (``check --all``, ``doctor``)."""
    if result.native is None:
        return {}
    from wheeldoctor.report.native_json import native_json

    return {"native": native_json(result.native, finding_json)}


def policy_json(policy: PolicyOutcome | None) -> dict[str, Any] | None:
    """What accept rules and a baseline did; null when there were none."""
    if policy is None:
        return None

    def rule(r: AcceptRule) -> dict[str, Any]:
        return {
            "source": r.source,
            "key": r.key,
            "distribution": r.distribution,
            "path": r.path,
            "code": r.code,
            "found": r.found,
            "until": r.until.isoformat() if r.until else None,
        }

    def entry(e: BaselineEntry) -> dict[str, Any]:
        return {"distribution": e.distribution, "version": e.version, "path": e.path, "code": e.code, "found": e.found}

    return {
        "config": policy.config,
        "baseline": policy.baseline,
        "accepted": policy.accepted,
        "stale": [rule(r) for r in policy.stale],
        "expired": [rule(r) for r in policy.expired],
        "fixed": [entry(e) for e in policy.fixed],
        "changed": [entry(e) for e in policy.changed],
        "narrowed": list(policy.narrowed),
    }


def environment_json(env: Environment) -> dict[str, Any]:
    """Which environment a document is about, and how its search path was found (``startup``)."""
    return {
        "label": env.label,
        "python": env.python,
        "paths": list(env.paths),
        "externally_managed": env.externally_managed,
        "managers": list(env.managers),
        **({"startup": startup_json(env.startup)} if env.startup is not None else {}),
    }


def header(command: str, healthy: bool) -> dict[str, Any]:
    """The keys every document starts with: schema version, tool, command and verdict."""
    from wheeldoctor import __version__

    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "wheeldoctor", "version": __version__},
        "command": command,
        "healthy": healthy,
    }


def wheels_document(result: PreflightResult) -> dict[str, Any]:
    """The whole ``wheels`` (preflight) document."""
    env = result.environment
    return {
        **header("wheels", result.healthy),
        "environment": environment_json(env) if env is not None else None,
        "wheels": [
            {
                "file": w.path,
                "name": w.name,
                "version": w.version,
                "files": len(w.members),
                "findings": [finding_json(f) for f in w.findings],
            }
            for w in result.wheels
        ],
        "clashes": [clash_json(c) for c in result.clashes],
        "config": result.config,
        "narrowed": list(result.narrowed),
        "overwrites": [
            {
                "wheel": o.wheel,
                "path": o.path,
                "location": o.location,
                "owners": list(o.owners),
                "identical": o.identical,
            }
            for o in result.overwrites
        ],
        "clash_pairs": [
            {
                "wheels": [p.first, p.second],
                "differing": p.differing,
                "relation": p.relation.value,
                "install_last": p.overlay,
            }
            for p in result.pairs
        ],
        "startup_hooks": [hook_json(h, finding_json) for h in result.hooks.hooks],
        **fetched_json(result.fetched),
    }


def conflict_json(conflict: DependencyConflict) -> dict[str, Any]:
    """One unsatisfied requirement: wanted and found side by side."""
    return {
        "code": conflict.code.value,
        "kind": conflict.kind.value,
        "dist": conflict.dist,
        "version": conflict.version,
        "requirement": conflict.requirement,
        "name": conflict.name,
        "wanted": conflict.wanted,
        "installed": conflict.installed,
        "via_extra": conflict.via_extra,
        "requested_by": list(conflict.requested_by),
        "message": conflict.message,
    }


def duplicate_json(duplicate: Duplicate, cleanup: DuplicateRepair) -> dict[str, Any]:
    """One project with several dist-infos: which one Python uses, and the safe clean-up."""
    dists = duplicate.distributions
    return {
        "code": duplicate.code.value,
        "kind": duplicate.kind.value,
        "name": duplicate.name,
        "active": duplicate.active.path,
        "locations": [d.path for d in dists],
        "versions": [d.version for d in dists],
        "installers": [d.installer for d in dists],
        "stale": [d.path for d in duplicate.stale],
        "shadowed": [d.path for d in duplicate.shadowed],
        "message": duplicate.message,
        "remedy": list(cleanup.remedy),
        "remove_elsewhere": dict(cleanup.elsewhere),
        "keep": cleanup.keep,
    }


def compatibility_json(finding: CompatibilityFinding) -> dict[str, Any]:
    """One distribution whose metadata does not fit the target interpreter, or does not parse."""
    return {
        "code": finding.code.value,
        "dist": finding.dist,
        "version": finding.version,
        "message": finding.message,
        "expected": finding.expected,
        "found": finding.found,
    }


def _deps_summary(result: DepsResult) -> dict[str, Any]:
    deps = result.dependencies
    return {
        "distributions": deps.distributions,
        "requirements": deps.requirements,
        "dependency_conflicts": len(deps.conflicts),
        "pip_check_conflicts": len(deps.pip_comparable()),
        "duplicates": len(result.duplicates),
        "stale": sum(1 for d in result.duplicates if d.failing),
        "compatibility": len(result.compatibility),
    }


def _deps_sections(result: DepsResult) -> dict[str, Any]:
    return {
        "dependency_conflicts": [conflict_json(c) for c in result.dependencies.conflicts],
        "dependency_repair": result.repairs.install,
        "duplicates": [duplicate_json(d, result.repairs.duplicate(d)) for d in result.duplicates],
        "compatibility": [compatibility_json(f) for f in result.compatibility],
        "notes": list(result.notes),
    }


def deps_document(result: DepsResult) -> dict[str, Any]:
    """The whole ``deps`` document."""
    return {
        **header("deps", result.healthy),
        "environment": environment_json(result.environment),
        "summary": _deps_summary(result),
        **_deps_sections(result),
    }


def doctor_document(result: DoctorResult) -> dict[str, Any]:
    """The whole ``doctor`` document: the ``check`` document (clashes included) plus ``deps``'s sections."""
    deps = result.deps
    check = check_document(result.check, command="doctor")
    return {
        **header("doctor", result.healthy),
        "environment": check["environment"],
        "verdicts": {
            "check": result.check.healthy,
            "dependencies": not deps.dependencies.conflicts,
            "duplicates": not any(d.failing for d in deps.duplicates),
            "compatibility": not deps.compatibility,
        },
        "summary": {**check["summary"], **_deps_summary(deps)},
        # Whatever check reports (distributions, clashes, ...) comes along unchanged.
        **{k: v for k, v in check.items() if k not in _DOCTOR_OWN},
        **_deps_sections(deps),
    }


_DOCTOR_OWN = frozenset({"schema_version", "tool", "command", "healthy", "environment", "summary"})


def imports_document(result: ImportsResult) -> dict[str, Any]:
    """The whole ``imports`` document: one entry per module imported."""
    return {
        **header("imports", result.healthy),
        "python": result.python,
        "forbid": list(result.forbid.tokens()),
        "timeout": result.timeout,
        "imports": [import_json(v) for v in result.verdicts],
    }


def import_json(verdict: ImportVerdict) -> dict[str, Any]:
    """What importing one module did, each effect with the module that caused it."""
    r = verdict.report
    gpu = r.gpu_initialized_by
    return {
        "module": r.module,
        "seconds": round(r.seconds, 6),
        "modules_loaded": r.modules_loaded,
        "heaviest": [{"module": t.module, "seconds": round(t.seconds, 6)} for t in r.heaviest],
        "device_files": [
            {"path": d.path, "opened_by": d.opened_by.module, "chain": list(d.opened_by.chain)}
            for d in r.open_device_files
        ],
        "gpu_driver_initialized": gpu is not None,
        "gpu_initialized_by": gpu.module if gpu is not None else None,
        "threads_started": r.threads_started,
        "processes_started": r.processes_started,
        "threads_by": [{"module": s.by.module, "count": s.count, "chain": list(s.by.chain)} for s in r.threads],
        "processes_by": [{"module": s.by.module, "count": s.count, "chain": list(s.by.chain)} for s in r.processes],
        "shared_libraries": [
            {"path": lib.path, "loaded_by": lib.loaded_by.module, "gpu_runtime": lib.gpu_runtime}
            for lib in r.shared_libraries
        ],
        "error": r.error,
        "forbidden": [e.value for e in verdict.forbidden],
    }


def render(document: dict[str, Any]) -> str:
    """Serialise a document: stable key order, UTF-8 left readable."""
    return json.dumps(inert.document(document), indent=2, ensure_ascii=False) + "\n"

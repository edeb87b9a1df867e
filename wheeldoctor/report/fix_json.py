"""``fix`` -> its JSON document: the plan, each step's result, and the verdicts before and after."""

from __future__ import annotations

from typing import Any

from wheeldoctor.repair.outcome import Problem
from wheeldoctor.repair.plan import RepairPlan
from wheeldoctor.report.json import environment_json, header
from wheeldoctor.results.fix import FixResult, StepStatus


def fix_document(result: FixResult, *, dry_run: bool) -> dict[str, Any]:
    """The whole ``fix`` document."""
    planned = result.planned
    outcome = result.outcome
    ran = {id(r.step): r for r in result.results}
    return {
        **header("fix", result.healthy),
        "environment": environment_json(planned.environment),
        "dry_run": dry_run,
        "plan": plan_json(planned.plan),
        "steps": [
            {
                "number": n,
                "command": step.command,
                "status": (ran[id(step)].status if id(step) in ran else StepStatus.NOT_RUN).value,
                "returncode": ran[id(step)].returncode if id(step) in ran else None,
                "error": ran[id(step)].error if id(step) in ran else None,
                "note": ran[id(step)].note if id(step) in ran else None,
            }
            for n, step in enumerate(planned.plan.steps, 1)
        ],
        "before": {"healthy": not planned.before, "problems": [_problem(p) for p in planned.before]},
        "after": None
        if outcome is None
        else {
            "healthy": outcome.healthy,
            "problems": [_problem(p) for p in outcome.after],
            "fixed": [_problem(p) for p in outcome.fixed],
            "still_broken": [_problem(p) for p in outcome.still_broken],
            "new": [_problem(p) for p in outcome.new],
        },
    }


def plan_json(plan: RepairPlan) -> dict[str, Any]:
    """The plan: numbered steps (argv and command line), what is left alone and why, notes."""
    return {
        "steps": [
            {
                "number": n,
                "kind": s.kind.value,
                "distribution": s.name,
                "version": s.version,
                "argv": list(s.argv),
                "command": s.command,
                "fixes": s.fixes,
                "change": s.change,
            }
            for n, s in enumerate(plan.steps, 1)
        ],
        "left_alone": [
            {"subject": a.subject, "reason": a.reason, "commands": list(a.commands)} for a in plan.left_alone
        ],
        "notes": list(plan.notes),
        "expected": [{"name": e.name, "version": e.version} for e in plan.expected],
    }


def _problem(problem: Problem) -> dict[str, str]:
    return {"distribution": problem.subject, "problem": problem.text}

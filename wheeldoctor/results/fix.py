"""What ``fix`` planned and did: the plan with what was found, each step's result, the verdict after."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wheeldoctor.judge.duplicates import Duplicate
    from wheeldoctor.judge.policy import Policy
    from wheeldoctor.judge.requirements import Requirements
    from wheeldoctor.model.environment import Environment
    from wheeldoctor.repair.outcome import Outcome, Problem
    from wheeldoctor.repair.plan import FixStep, RepairPlan
    from wheeldoctor.results.check import CheckResult
    from wheeldoctor.results.lock import LockedEnvironment
    from wheeldoctor.where.target import Target

Against = Callable[["Environment"], "LockedEnvironment"]
"""An environment judged against a lock (``fix --lock``): the locked wheels' claims and the lock's findings."""


class StepStatus(str, Enum):
    """What became of a step; the JSON ``status`` field."""

    OK = "ok"
    FAILED = "failed"
    NOT_RUN = "not-run"


@dataclass(frozen=True, slots=True, kw_only=True)
class StepResult:
    """One step after the run."""

    step: FixStep
    status: StepStatus
    returncode: int | None = None
    error: str | None = None
    """One line: why it failed (the index could not be reached, the installer was not found, it did not do
    its job, ...)."""
    note: str | None = None
    """Why it ran though an earlier step failed: it puts back the files that step's group removed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FixPlan:
    """What was found, and the plan for it: everything ``fix --dry-run`` shows."""

    check: CheckResult
    duplicates: tuple[Duplicate, ...]
    plan: RepairPlan
    before: tuple[Problem, ...]
    target: Target
    """Where the environment was read from: it is read again there after the steps."""
    policy: Policy | None = None
    """The accept rules the check ran under: what they accept is not repaired, and not verified again."""
    cache_dir: str | None = None
    against: Against | None = None
    """With ``--lock``: the environment judged against the lock, for the plan and for verifying again."""
    requirements: Requirements | None = None
    """The environment's requirement model, as the plan read it: what it broke before the steps."""

    @property
    def environment(self) -> Environment:
        """The environment the plan is for."""
        return self.check.environment


@dataclass(frozen=True, slots=True)
class FixResult:
    """A plan, what ran of it, and the verdict of verifying again."""

    planned: FixPlan
    results: tuple[StepResult, ...] = ()
    outcome: Outcome | None = None
    """None when nothing ran (a dry run, or nothing to run)."""

    @property
    def ran(self) -> bool:
        """Whether any step was started."""
        return any(r.status is not StepStatus.NOT_RUN for r in self.results)

    @property
    def failed(self) -> StepResult | None:
        """The step that failed, if one did."""
        return next((r for r in self.results if r.status is StepStatus.FAILED), None)

    @property
    def healthy(self) -> bool:
        """Every step succeeded and everything found is healthy now (or nothing was found)."""
        if self.outcome is None:
            return not self.planned.before and not self.planned.plan.needed
        return self.failed is None and self.outcome.healthy

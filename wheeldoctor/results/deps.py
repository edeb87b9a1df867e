"""What ``deps`` found: what the metadata alone says about an environment.

Apart from ``check``'s result (:mod:`wheeldoctor.results.check`): ``deps`` never imports the file verifier's types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wheeldoctor.judge.compat import CompatibilityFinding
    from wheeldoctor.judge.deps import DependencyReport
    from wheeldoctor.judge.duplicates import Duplicate
    from wheeldoctor.model.environment import Environment
    from wheeldoctor.repair.requirements import DepsRepairs


@dataclass(frozen=True, slots=True, kw_only=True)
class DepsResult:
    """The outcome of ``wheeldoctor deps``: what the metadata alone says about an environment."""

    environment: Environment
    dependencies: DependencyReport
    duplicates: tuple[Duplicate, ...]
    compatibility: tuple[CompatibilityFinding, ...]
    """Requires-Python, WHEEL tags, and metadata that does not parse."""
    repairs: DepsRepairs
    """The commands that repair what was found, made once: every renderer shows these."""
    notes: tuple[str, ...] = ()
    """Checks that could not run, and why (never a failure by themselves)."""

    @property
    def healthy(self) -> bool:
        """No conflict, no stale dist-info, no compatibility finding (shadowing alone passes)."""
        return not (self.dependencies.conflicts or self.compatibility or any(d.failing for d in self.duplicates))

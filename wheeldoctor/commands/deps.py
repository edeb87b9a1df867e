"""``deps``: what the metadata alone says: requirements, duplicate dist-infos, compatibility."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from wheeldoctor.results.deps import DepsResult

if TYPE_CHECKING:
    from collections.abc import Mapping

    from wheeldoctor.engine.deps_memo import DepsMemo
    from wheeldoctor.judge.requirements import Requirements
    from wheeldoctor.judge.selection import CodeSelection
    from wheeldoctor.judge.stale import StaleVerdict
    from wheeldoctor.model.environment import Environment


def run_deps(
    env: Environment,
    requirements: Requirements | None = None,
    memo: DepsMemo | None = None,
    *,
    stale: Mapping[str, StaleVerdict] | None = None,
    cache_dir: str | None = None,
) -> DepsResult:
    """Judge ``env``'s requirements, duplicates and compatibility; no file is hashed but stale dist-infos'.

    ``env.tags`` should have been gathered (``load_target(..., with_tags=True)``); without
    them WHEEL tags are not checked, and a note says so. ``requirements`` is ``env``'s
    model when the caller has built it already. ``memo`` gives the judgement of requirements
    and compatibility made of an environment read the same (and keeps this one): then no
    requirement is parsed. ``stale`` are the verdicts on whose files stale dist-infos hold,
    by name, where a check made them already (``doctor``); else the dist-infos of each
    project with stale ones are verified here (with ``cache_dir``), so that the clean-up
    keeps the version whose files are on disk.
    """
    from wheeldoctor.judge.duplicates import find_duplicates
    from wheeldoctor.repair.requirements import deps_repairs

    kept = memo.get(env) if memo is not None else None
    if kept is None:
        from wheeldoctor.judge.compat import check_compatibility
        from wheeldoctor.judge.deps import check_dependencies
        from wheeldoctor.judge.requirements import Requirements

        kept = check_dependencies(requirements or Requirements.of(env)), check_compatibility(env)
        if memo is not None:
            memo.keep(env, kept)
    dependencies, compatibility = kept
    notes = []
    if not compatibility.tags_known:
        notes.append("WHEEL tags not checked: the target interpreter's supported tags are unknown")
    if compatibility.python_version is None:
        notes.append("Requires-Python not checked: the target interpreter's version is unknown")
    findings = sorted(
        (*compatibility.findings, *dependencies.problems), key=lambda f: (f.dist, f.code.value, f.found or "")
    )
    duplicates = tuple(find_duplicates(env, stale))
    if stale is None and any(d.failing for d in duplicates):
        from wheeldoctor.commands.stale import verify_stale  # the verifier: only where a dist-info is stale

        duplicates = tuple(find_duplicates(env, verify_stale(env, cache_dir)))
    return DepsResult(
        environment=env,
        dependencies=dependencies,
        duplicates=duplicates,
        compatibility=tuple(findings),
        repairs=deps_repairs(env, dependencies.conflicts, duplicates, findings),
        notes=tuple(notes),
    )


def select_deps(result: DepsResult, selection: CodeSelection) -> DepsResult:
    """``result`` without what ``--select``/``--ignore`` leave out: conflicts, duplicates, compatibility."""
    if selection.everything:
        return result
    conflicts = tuple(c for c in result.dependencies.conflicts if selection.allows(c.code.value))
    return replace(
        result,
        dependencies=replace(result.dependencies, conflicts=conflicts),
        duplicates=tuple(d for d in result.duplicates if selection.allows(d.code.value)),
        compatibility=tuple(f for f in result.compatibility if selection.allows(f.code.value)),
    )

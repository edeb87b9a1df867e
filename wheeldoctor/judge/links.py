"""Recorded paths that a symbolic link takes out of the environment: judged on the resolved targets alone."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from wheeldoctor.model.findings import Code, Finding, Kind


def inside(target: str, roots: Sequence[str]) -> bool:
    """Whether ``target`` (a resolved absolute path) is one of ``roots`` or below one."""
    return any(target == root or target.startswith(root.rstrip("/") + "/") for root in roots)


def link_findings(
    resolved: Mapping[str, str], relative: Mapping[str, str], roots: Sequence[str], uv_cache: Iterable[str] = ()
) -> list[Finding]:
    """One WD008 per recorded path whose resolved target lies outside ``roots``.

    ``resolved`` maps a recorded path (absolute) to its resolved target; ``relative``
    gives each path as RECORD names it. Targets in ``uv_cache`` (a uv install in its
    symlink link mode, linking into uv's cache) are judged as any file, with no finding.
    The bytes there may be intact: the finding is that they are read from elsewhere, so
    it is unverifiable, and ``--strict`` fails on it.
    """
    kept = frozenset(uv_cache)
    findings = []
    for path, target in resolved.items():
        if inside(target, roots) or target in kept:
            continue
        message = f"resolves through a symbolic link to {target}, outside the environment"
        where = relative.get(path, path)
        findings.append(Finding(code=Code.LINK_OUTSIDE, kind=Kind.UNVERIFIABLE, path=where, message=message))
    return findings

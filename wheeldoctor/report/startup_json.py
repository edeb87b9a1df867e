"""Start-up hooks, unowned files and how the search path was found, as JSON (schema 1.1 additions)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # types only: a deps document must not import the start-up audit
    from wheeldoctor.judge.hooks import StartupHook
    from wheeldoctor.model.findings import Finding
    from wheeldoctor.model.ownership import UnownedScan
    from wheeldoctor.model.startup import Startup
    from wheeldoctor.results.check import CheckResult

    FindingJson = Callable[[Finding], dict[str, Any]]


def startup_sections(result: CheckResult, finding: FindingJson) -> dict[str, Any]:
    """``startup_hooks`` and ``unowned``, when the check audited them (``check --all``, ``doctor``).

    ``finding`` is the document's own finding serialiser, so a hook's finding reads as any other.
    """
    sections: dict[str, Any] = {}
    if result.hooks is not None:
        sections["startup_hooks"] = [hook_json(h, finding) for h in result.hooks.hooks]
    if result.unowned is not None:
        sections["unowned"] = unowned_json(result.unowned, finding, listing=result.show_unowned)
    return sections


def hook_json(hook: StartupHook, finding: FindingJson) -> dict[str, Any]:
    """One start-up hook: what it runs, who owns it, whether it is known, its finding."""
    owner = hook.owner
    return {
        "path": hook.path,
        "kind": hook.kind.value,
        "executes": hook.executes,
        "lines": list(hook.lines),
        "sha256": hook.sha256,
        "owner": None
        if owner is None
        else {"type": "system" if owner.system else "distribution", "name": owner.name, "version": owner.version},
        "owner_intact": hook.owner_intact,
        "known": None if hook.known is None else hook.known.name,
        "finding": None if hook.finding is None else finding(hook.finding),
        "error": hook.error,
        "entry_points": list(hook.entry_points),
        "unresolved": list(hook.unresolved),
        "disabled_by": hook.disabled_by,
    }


def unowned_json(scan: UnownedScan, finding: FindingJson, *, listing: bool) -> dict[str, Any]:
    """The files nobody recorded: a count, the failing ones, and (``listing``) every one."""
    return {
        "count": len(scan.files),
        "scanned": scan.scanned,
        "site_dirs": list(scan.site_dirs),
        "findings": [finding(f) for f in scan.findings],
        "files": [{"path": f.path, "importable": f.importable, "claimed_by": f.claimed_by} for f in scan.files]
        if listing
        else None,
    }


def startup_json(startup: Startup) -> dict[str, Any]:
    """Where each search-path entry came from, and the .pth lines that would run code (not run)."""
    return {
        "isolated": startup.isolated,
        "user_site": startup.user_site,
        "site_dirs": [{"path": d.path, "user": d.user} for d in startup.site_dirs],
        "entries": [{"path": e.path, "origin": e.origin.value, "pth": e.pth, "line": e.line} for e in startup.entries],
        "not_run": [{"pth": pth, "line": line} for pth, line in startup.not_run],
    }

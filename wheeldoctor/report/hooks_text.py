"""Start-up hooks and unowned files as text: one line per hook that fails, counts for the rest."""

from __future__ import annotations

from collections.abc import Iterable

from wheeldoctor.judge.hooks import HookAudit
from wheeldoctor.model.findings import Finding
from wheeldoctor.model.ownership import UnownedScan


def _evidence(finding: Finding) -> str:
    if finding.expected is not None and finding.expected == finding.found:
        return f" (as recorded: {finding.found})"  # the hook is the very file its owner shipped
    parts = [f"{label} {value}" for label, value in (("expected", finding.expected), ("found", finding.found)) if value]
    return f" ({', '.join(parts)})" if parts else ""


def hook_lines(hooks: HookAudit | None) -> Iterable[str]:
    """One line per hook that runs code and is not known, then one line counting the rest."""
    if hooks is None:
        return
    for hook in hooks.failing:
        assert hook.finding is not None
        finding = hook.finding
        yield f"{hook.path}: {finding.code.value}: {finding.message}{_evidence(finding)}"
    known = [h for h in hooks.hooks if h.known is not None]
    if hooks.hooks:
        names = ", ".join(f"{h.relative} ({h.known.name})" for h in known if h.known is not None)
        accepted = len(hooks.findings) - len(hooks.failing)
        yield (
            f"startup hooks: {len(hooks.hooks)} found, {sum(h.executes for h in hooks.hooks)} run code, "
            f"{len(hooks.failing)} failing"
            + (f", {accepted} accepted" if accepted else "")
            + (f"; known: {names}" if names else "")
        )


def unowned_lines(scan: UnownedScan | None, *, show: bool = False) -> Iterable[str]:
    """WD072 lines, the count of unowned files, and (``show``) each of them; nothing when there are none."""
    if scan is None or not scan.files:
        return
    for finding in scan.findings:
        if finding.accepted is None:
            yield f"unowned: {finding.code.value}: {finding.message}"
    if show:
        for item in scan.files:
            yield f"unowned: {item.path}"
    hint = "" if show else "; --show-unowned lists them"
    yield (
        f"unowned: {len(scan.files)} of {scan.scanned} file(s) in {len(scan.site_dirs)} site "
        f"director{'y' if len(scan.site_dirs) == 1 else 'ies'} recorded by no installer{hint}"
    )


def hook_tips(hooks: HookAudit | None) -> Iterable[str]:
    """What to do about failing hooks: look, then remove or accept it pinned to its bytes."""
    if hooks is None or not hooks.failing:
        return
    yield (
        "Tip: a hook runs in every Python process of this environment; read it before anything else runs. "
        "If you trust it, accept it pinned to its sha256 (wheeldoctor's docs/startup-hooks.md); "
        "a changed file fails again"
    )

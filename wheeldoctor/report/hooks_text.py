"""Start-up hooks and unowned files as text: one line per hook that fails, counts for the rest."""

from __future__ import annotations

import json
from collections.abc import Iterable

from wheeldoctor.judge.hooks import HookAudit, StartupHook
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
        yield from _shown_code(hook)
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


#: At most this many of a hook's lines are shown, each cut to this many characters.
_SHOWN_LINES = 3
_SHOWN_WIDTH = 160


def _shown_code(hook: StartupHook) -> Iterable[str]:
    """The lines the hook runs, each as an inert Python literal (no control character reaches the terminal)."""
    label = "entry point" if hook.entry_points else "line"
    for number, text in list(zip(hook.lines, hook.code, strict=False))[:_SHOWN_LINES]:
        shown = ascii(text if len(text) <= _SHOWN_WIDTH else text[:_SHOWN_WIDTH])
        cut = f" (cut at {_SHOWN_WIDTH} of {len(text)} characters)" if len(text) > _SHOWN_WIDTH else ""
        unresolved = " (resolves to no module its owner ships)" if text in hook.unresolved else ""
        yield f"  {label} {number}: {shown}{cut}{unresolved}"
    if len(hook.code) > _SHOWN_LINES:
        yield f"  ... and {len(hook.code) - _SHOWN_LINES} more"


def accept_block(hook: StartupHook) -> list[str]:
    """The ``[[tool.wheeldoctor.accept]]`` rule that accepts exactly this hook's bytes, as TOML to paste.

    Strings are TOML basic strings (JSON's escaping is a subset of TOML's), ASCII only.
    """
    assert hook.finding is not None
    if hook.finding.found is None:
        # A rule without ``found`` would accept whatever the file holds later: none is offered or honoured.
        path = json.dumps(hook.finding.path)
        return [f"# {path}: its bytes could not be read, so no rule can accept it; make it readable or remove it"]
    fields = (
        ("distribution", hook.subject),
        ("path", hook.finding.path),
        ("code", hook.finding.code.value),
        ("found", hook.finding.found),
        ("reason", "..."),
    )
    return ["[[tool.wheeldoctor.accept]]", *(f"{k} = {json.dumps(v)}" for k, v in fields if v is not None)]


def hook_tips(hooks: HookAudit | None) -> Iterable[str]:
    """What to do about failing hooks: look, then remove or accept it pinned to its bytes."""
    if hooks is None or not hooks.failing:
        return
    yield (
        "Tip: a hook runs in every Python process of this environment; read it before anything else runs. "
        "If you trust it, accept exactly these bytes in pyproject.toml "
        "(a changed file fails again; wheeldoctor's docs/startup-hooks.md):"
    )
    blocks = dict.fromkeys(tuple(accept_block(hook)) for hook in hooks.failing)  # one rule accepts each alike
    for block in blocks:
        yield from (f"  {line}" for line in block)

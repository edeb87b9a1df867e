"""The native section as text: one line per finding that fails, one for plugins, and where needs come from."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from wheeldoctor.model.findings import Code

if TYPE_CHECKING:
    from wheeldoctor.judge.native_audit import NativeAudit, NativeFinding

#: How the summary says where libraries come from, in its order.
PROVIDERS = {
    "environment": "from the environment",
    "loaded-first": "from it once loaded first",
    "system": "from the system",
    "driver": "from the GPU driver (not on this host)",
    "unresolved": "found nowhere",
}


def subject(found: NativeFinding) -> str:
    """``name version``, or the library or project a finding is about."""
    return f"{found.subject} {found.version}" if found.version else found.subject


def native_lines(audit: NativeAudit | None, *, show_accepted: bool = False) -> Iterable[str]:
    """Each finding (WD091's together, on one line), then the summary; nothing when not audited,
    nor for an environment without shared objects."""
    if audit is None or not (audit.objects or audit.foreign or audit.findings):
        return
    plugins = []
    for found in audit.findings:
        finding = found.finding
        if finding.accepted is not None and not show_accepted:
            continue
        if finding.code is Code.PLUGIN_UNRESOLVED and finding.accepted is None:
            plugins.append(found)
            continue
        where = f"{finding.path} " if finding.path else ""
        note = f" [accepted by {finding.accepted.by}: {finding.accepted.reason}]" if finding.accepted else ""
        yield f"{subject(found)}: {finding.code.value}: {where}{finding.message}{note}"
    if plugins:
        by_owner: dict[str, list[str]] = {}
        for p in plugins:
            name = (p.finding.path or "").rpartition("/")[2]
            by_owner.setdefault(subject(p), []).append(f"{name} ({p.finding.expected})")
        listed = "; ".join(f"{owner}: {', '.join(items)}" for owner, items in by_owner.items())
        yield (
            f"native: {Code.PLUGIN_UNRESOLVED.value}: {len(plugins)} plugin(s) cannot load here, and nothing "
            f"imports or needs them: {listed}"
        )
    yield summary_line(audit)


def summary_line(audit: NativeAudit) -> str:
    """``native: N shared object(s), M extension module(s); libraries needed: a from the environment, ...``."""
    libraries: dict[str, set[str]] = {}
    for source in audit.sources:
        libraries.setdefault(source.provider, set()).add(source.library)
    needed = ", ".join(f"{len(libraries[p])} {PROVIDERS[p]}" for p in PROVIDERS if p in libraries)
    other = f", {audit.foreign} for another machine (not judged)" if audit.foreign else ""
    return (
        f"native: {audit.objects} shared object(s), {audit.extension_modules} extension module(s){other}; "
        f"libraries needed: {needed or 'none'}"
    )

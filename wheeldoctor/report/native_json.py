"""The native section as JSON: what was read, each finding with its subject, and where needs come from."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wheeldoctor.judge.native_audit import NativeAudit
    from wheeldoctor.model.findings import Finding

    FindingJson = Callable[[Finding], dict[str, Any]]


def native_json(audit: NativeAudit, finding: FindingJson) -> dict[str, Any]:
    """``native``: the interpreter's machine, the loader's sources, counts, findings and each library's source.

    ``finding`` is the document's own finding serialiser, so these findings read as any other.
    """
    return {
        "machine": audit.machine,
        "ld_so_cache": audit.ld_so_cache,
        "ld_so_cache_problem": audit.ld_so_cache_problem,
        "interpreter_rpath": list(audit.interpreter_rpath),
        "objects": audit.objects,
        "extension_modules": audit.extension_modules,
        "loaded_on_import": audit.loaded_on_import,
        "foreign": audit.foreign,
        "findings": [
            {"subject": f.subject, "version": f.version, "site_dir": f.site_dir, "finding": finding(f.finding)}
            for f in audit.findings
        ],
        "sources": [
            {
                "provider": s.provider,
                "library": s.library,
                "path": s.path,
                "owner": s.owner,
                "needed_by": s.needed_by,
            }
            for s in audit.sources
        ],
    }

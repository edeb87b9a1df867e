"""Site directories as found on this machine: each real directory once, prefixes in both spellings."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing itself costs the gate's warm path to import
if TYPE_CHECKING:
    from collections.abc import Iterable


def locations(paths: Iterable[str]) -> list[str]:
    """Each directory of ``paths`` once, as given (absolute), not resolved: the first spelling of each real path.

    Installers write RECORD's "../../../bin" paths from the name Python uses, and through a
    symlinked site-packages the two differ; the resolved form only tells two spellings apart.
    """
    by_real: dict[str, str] = {}
    for path in paths:
        if path:
            by_real.setdefault(os.path.realpath(path), os.path.abspath(path))
    return list(by_real.values())


def prefix_forms(prefixes: Iterable[str]) -> list[str]:
    """Each prefix both as given and with symlinks resolved, so either spelling of a site dir matches."""
    forms: dict[str, None] = {}
    for prefix in prefixes:
        if prefix:
            forms[os.path.abspath(prefix)] = None
            forms[os.path.realpath(prefix)] = None
    return list(forms)


def current_prefixes() -> list[str]:
    """The prefixes of the running interpreter, the user base included."""
    site = sys.modules.get("site")
    user_base = getattr(site, "USER_BASE", None) if site is not None else None
    return [p for p in (sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix, user_base) if p]

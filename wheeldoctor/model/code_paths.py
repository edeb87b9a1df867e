"""Which recorded paths hold code that runs: for those, appended bytes are code, never data to keep."""

from __future__ import annotations

import os

#: Suffixes of files Python imports, executes or loads at start-up or on import.
_CODE_SUFFIXES = (".py", ".pyc", ".pyo", ".pyw", ".pth", ".so", ".pyd", ".dll", ".dylib", ".sh", ".exe")


def runs_as_code(path: str) -> bool:
    """Whether ``path`` (as RECORD writes it) is code: a module, a .pth, a library, a script.

    Scripts are installed outside site-packages (``../../../bin/name``) and have no suffix.
    """
    name = os.path.basename(path)
    if name.lower().endswith(_CODE_SUFFIXES) or ".so." in name:
        return True
    parent = os.path.basename(os.path.dirname(path))
    return path.startswith("../") and parent in ("bin", "Scripts")

"""PEP 829 ``<name>.start`` files as ``site`` (Python 3.15 and later) reads them: entry points.

Pure: takes bytes, returns data, never resolves or runs anything. The file is decoded as
UTF-8 with an optional BOM and split with ``str.splitlines()``; a line that is blank or
starts with ``#`` is skipped; every other line names one entry point in the colon form
of ``pkgutil.resolve_name`` (``pkg.mod:callable``, the callable possibly dotted), which
``site`` calls with no arguments once every path line of every ``.pth`` is on
``sys.path``. A line of any other form is reported by ``site`` and skipped; it is kept
here as malformed, since a hostile file may be written for a later parser.

A ``<name>.start`` beside a ``<name>.pth`` disables that ``.pth`` file's ``import``
lines (its path lines still apply): :func:`disables_imports`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The first version whose ``site`` reads ``.start`` files (PEP 829).
START_SINCE = (3, 15)

_DOTTED = r"[^\W\d]\w*(?:\.[^\W\d]\w*)*"
_ENTRY = re.compile(rf"({_DOTTED}):({_DOTTED})")


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryPoint:
    """One line of a ``.start`` file: ``module:callable`` (None for both when malformed)."""

    number: int
    text: str
    module: str | None
    callable: str | None

    @property
    def valid(self) -> bool:
        """Whether ``site`` would resolve it (the colon form with a module and a callable)."""
        return self.module is not None


def parse_start(data: bytes) -> tuple[EntryPoint, ...]:
    """Every entry point line of a ``.start`` file, in file order, malformed ones included."""
    found = []
    for number, line in enumerate(data.decode("utf-8-sig", "surrogateescape").splitlines(), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        match = _ENTRY.fullmatch(text)
        found.append(
            EntryPoint(number=number, text=text, module=match.group(1), callable=match.group(2))
            if match
            else EntryPoint(number=number, text=text, module=None, callable=None)
        )
    return tuple(found)


def disables_imports(pth_name: str, start_names: frozenset[str], version: tuple[int, int]) -> bool:
    """Whether a ``<name>.start`` beside ``pth_name`` turns off its import lines for Python ``version``."""
    return version >= START_SINCE and pth_name.endswith(".pth") and pth_name[: -len(".pth")] + ".start" in start_names


def module_files(module: str) -> tuple[str, ...]:
    """The paths below a site directory where ``module`` may be found as source or bytecode.

    Extension modules are matched by prefix by the caller (their suffix names the ABI).
    """
    base = module.replace(".", "/")
    return (f"{base}.py", f"{base}/__init__.py", f"{base}.pyc")

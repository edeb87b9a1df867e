"""Which files run at interpreter start once installed, by name: the hooks a wheel would install.

Pure: names in, kinds out. A file is a start-up hook by where it lands below a site
directory (purelib or platlib) and its name:

- ``NAME.pth`` at the root: ``site`` runs its ``import`` lines. A name starting with a dot
  is a hook too here: CPython releases before the January 2024 fix (gh-113659) read those;
- ``NAME.start`` at the root: PEP 829 entry points, called from Python 3.15;
- ``sitecustomize`` and ``usercustomize`` at the root, as source, bytecode, an extension
  module or a package: ``site`` imports them.

A wheel's root and its ``.data/purelib`` and ``.data/platlib`` trees land in a site
directory; so does a ``.data/data`` file whose path below the prefix is a site directory's
(``lib/python3.12/site-packages/x.pth``), as a venv lays it out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The most bytes of hook members read from one wheel (any one of them, and all together).
HOOK_BYTES = 16 << 20
#: The most hook members read from one wheel; any beyond are not read (and so count as running code).
HOOK_COUNT = 64
#: The modules ``site`` imports at start-up.
CUSTOMIZE = ("sitecustomize", "usercustomize")
#: How the name of a member that may be a hook ends (:func:`hook_kind` sorts out the rest, ``.so`` files too).
HOOK_SUFFIXES = (
    b".pth",
    b".start",
    b"customize.py",
    b"customize.pyc",
    b"customize/__init__.py",
    b"customize/__init__.pyc",
    b".so",
    b".pyd",
)
# A .data/data member (``<data>/`` once placed) that lands in a POSIX or Windows venv's site directory.
_DATA_SITE = re.compile(r"<data>/(?:lib(?:64)?/python3\.\d+t?/(?:site|dist)-packages|Lib/site-packages)/(.+)")


def site_relative(target: str) -> str | None:
    """Where an install target (``formats/wheelfile.install_target``'s answer) lands below a site directory.

    None for scripts, headers and data files that land elsewhere.
    """
    if not target.startswith("<"):
        return target
    match = _DATA_SITE.fullmatch(target)
    return match.group(1) if match else None


def hook_kind(relative: str) -> str | None:
    """The kind of start-up hook (``pth``, ``start``, ``sitecustomize``, ``usercustomize``) a file is, or None.

    ``relative`` is its path below a site directory, ``/``-separated.
    """
    if "/" not in relative:
        if relative.endswith(".pth"):
            return "pth"
        if relative.endswith(".start"):
            return "start"
        stem, dot, suffix = relative.partition(".")
        return stem if stem in CUSTOMIZE and dot and importable_suffix(suffix) else None
    package, _, rest = relative.partition("/")
    return package if package in CUSTOMIZE and is_package_init(rest) else None


def importable_suffix(suffix: str) -> bool:
    """Whether a module file's name after its first dot makes it importable: source, bytecode, an extension."""
    return suffix in ("py", "pyc") or suffix.endswith(("so", "pyd"))


def is_package_init(name: str) -> bool:
    """Whether ``name`` (in a package's directory) is the ``__init__`` its import runs: ``.py``, a sourceless
    ``.pyc``, or an extension module, as the import system looks for each."""
    stem, dot, suffix = name.partition(".")
    return stem == "__init__" and bool(dot) and "/" not in suffix and importable_suffix(suffix)


@dataclass(frozen=True, slots=True, kw_only=True)
class HookMember:
    """A start-up hook a wheel holds: its member name, where it lands, and its bytes as read (bounded)."""

    name: str
    """The member's name in the zip, as its RECORD names it."""
    relative: str
    """Where it lands below the site directory (``litellm_init.pth``)."""
    kind: str
    """:func:`hook_kind`'s answer for ``relative``."""
    data: bytes | None
    error: str | None = None
    """Why ``data`` could not be read (too large, damaged): the hook then counts as running code."""


class HookBudget:
    """What is left of one wheel's :data:`HOOK_BYTES` and :data:`HOOK_COUNT`: why the next hook is not read, if so."""

    def __init__(self) -> None:
        self._bytes = HOOK_BYTES
        self._count = HOOK_COUNT

    def refuse(self, size: int) -> str | None:
        """None, spending ``size`` bytes and one hook, when a hook of ``size`` bytes may be read; else why not."""
        if self._count <= 0:
            return f"the wheel holds more than {HOOK_COUNT} start-up hooks: not read"
        if size > self._bytes:
            return f"{size} bytes, past the {HOOK_BYTES >> 20} MiB of start-up hooks read from one wheel: not read"
        self._count -= 1
        self._bytes -= size
        return None

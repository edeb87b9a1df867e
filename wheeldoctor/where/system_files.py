"""Which system package owns a file: the seam through which hooks and unowned files ask.

Only dpkg is read here, and only its file lists (``/var/lib/dpkg/info/*.list``): no
``dpkg-query`` per file, no checksums. The lists are read once, and only when some path
below ``/usr`` or ``/etc`` (where dpkg installs Python's files) has no other owner. A
fuller reader of system package managers can take this one's place: anything with an
``owner(path)`` method will do.
"""

from __future__ import annotations

import os
from typing import Protocol

from wheeldoctor.disk.filesystem import ReadError, read_regular

DPKG_ADMINDIR = "/var/lib/dpkg"
#: dpkg never installs Python's files elsewhere; paths outside are not looked up.
_SYSTEM_ROOTS = ("/usr/", "/etc/")
_LIST_LIMIT = 64 << 20


class SystemOwners(Protocol):
    """Says which system package installed a file."""

    def owner(self, path: str) -> str | None:
        """The package that installed absolute ``path``, or None."""


class DpkgOwners:
    """dpkg's file lists, read on the first question and kept for the run."""

    def __init__(self, admindir: str = DPKG_ADMINDIR) -> None:
        self._info = os.path.join(admindir, "info")
        self._owners: dict[str, str] | None = None

    def owner(self, path: str) -> str | None:
        """The dpkg package whose file list names ``path`` (as given, or with symlinks resolved)."""
        if not path.startswith(_SYSTEM_ROOTS):
            return None
        if self._owners is None:
            self._owners = self._read()
        found = self._owners.get(path)
        if found is None:
            found = self._owners.get(os.path.realpath(path))
        return found

    def _read(self) -> dict[str, str]:
        owners: dict[str, str] = {}
        try:
            names = sorted(n for n in os.listdir(self._info) if n.endswith(".list"))
        except OSError:
            return owners
        for name in names:
            data = read_regular(os.path.join(self._info, name), _LIST_LIMIT)
            if isinstance(data, ReadError):
                continue
            package = name[: -len(".list")].partition(":")[0]  # libpython3.11-minimal:amd64
            for line in data.decode("utf-8", "surrogateescape").splitlines():
                owners.setdefault(line, package)
        return owners


def system_owners() -> SystemOwners | None:
    """The system's package database, when this machine has one (dpkg's); else None."""
    if os.path.isdir(os.path.join(DPKG_ADMINDIR, "info")):
        return DpkgOwners()
    return None

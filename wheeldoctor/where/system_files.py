"""Which system package installed a file: the seam through which hooks and unowned files ask.

The answer comes from what ``where/managers.py`` already read for the environment
(``Environment.system_files``: dpkg's file lists, conda-meta). An environment for which
dpkg was not read (a venv, whose own files apt never installs) can still reach a
system's directories, through ``--system-site-packages``: for a path below ``/usr`` or
``/etc`` that nothing else owns, dpkg's lists are read once, then, by the same reader.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Protocol, TypeVar

from wheeldoctor.model.environment import Environment
from wheeldoctor.where.dpkg_owners import DEFAULT_ADMINDIR, read_owners
from wheeldoctor.where.fingerprint import Read

#: dpkg never installs Python's files elsewhere; other paths are not looked up late.
_SYSTEM_ROOTS = ("/usr/", "/etc/")


class SystemOwners(Protocol):
    """Says which system package installed a file."""

    def owner(self, path: str, read: Read | None = None) -> str | None:
        """The package that installed absolute ``path``, or None; ``read`` notes what was read to answer."""


class ReadOwners:
    """The system files the environment's managers listed, then dpkg's own lists if needed."""

    def __init__(self, files: Mapping[str, str], directories: Sequence[str]) -> None:
        self._files = files
        self._directories = directories
        self._late: Mapping[str, str] | None = None

    def owner(self, path: str, read: Read | None = None) -> str | None:
        """The package whose record names ``path`` (as given, or with symlinks resolved).

        ``read`` (a memo's) notes dpkg's lists where they are read here, and the directory
        holding each symlink met in resolving ``path``: the answer depends on them.
        """
        found = listed(self._files, path)
        if found is not None or self._files or not path.startswith(_SYSTEM_ROOTS):
            return found
        if self._late is None:
            dpkg = read_owners(DEFAULT_ADMINDIR, self._directories, read=read)
            self._late = {p: info.partition(":")[0] for p, info in dpkg.owners.items()} if dpkg else {}
        if read is not None and self._late:
            homes = symlink_homes(path)
            if homes is None:
                read.doubt()
            else:
                for home in homes:
                    read.note(home)
        return listed(self._late, path)


def symlink_homes(path: str) -> list[str] | None:
    """The directories holding each symlink met in resolving absolute ``path``; None past 40 (a loop).

    Replacing a symlink moves the directory that holds it, so their fingerprints pin where
    ``path`` resolves to. Components are looked at from the root: what comes before a
    link holds none, so its target's ``..`` is resolved by its text.
    """
    homes: list[str] = []
    for _ in range(40):
        parts = path.split(os.sep)
        for end in range(2, len(parts) + 1):
            prefix = os.sep.join(parts[:end])
            try:
                target = os.readlink(prefix)
            except (OSError, ValueError):  # not a link (or gone): go on
                continue
            home = os.path.dirname(prefix)
            homes.append(home)
            path = os.path.normpath(os.path.join(home, target, *parts[end:]))
            break
        else:
            return homes
    return None


_T = TypeVar("_T")


def listed(files: Mapping[str, _T], path: str) -> _T | None:
    """What a package manager's list ``files`` holds for ``path``, as given or with symlinks resolved.

    No path is resolved when the list is empty (a venv, a pip-only image): a ``realpath``
    per dist-info and per unowned file would be paid for nothing.
    """
    if not files:
        return None
    return files.get(path) or files.get(os.path.realpath(path))


def system_owners(env: Environment) -> SystemOwners:
    """Who installed the system's files in ``env``'s site directories and standard library."""
    # Every directory of the search path: a distro's sitecustomize sits in the standard library.
    directories = [p for p in (env.startup.paths if env.startup is not None else env.paths) if os.path.isdir(p)]
    return ReadOwners(env.system_files, directories)

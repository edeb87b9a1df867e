"""Who installed a file: the distribution whose RECORD lists it, or a system package.

Every path any installed RECORD names counts, hashed or not (pip's unhashed ``.pyc``
rows too), for every distribution found, shadowed ones included: a file a shadowed copy
installed was still put there by an installer. A legacy ``.egg-info`` install's
``installed-files.txt`` (what ``setup.py install`` records) counts the same way.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from wheeldoctor.formats.record import first_columns
from wheeldoctor.model.environment import Environment, InstalledDistribution
from wheeldoctor.model.managed import Tool
from wheeldoctor.model.ownership import Owner
from wheeldoctor.model.sitedirs import is_plain, plain_prefix
from wheeldoctor.where.environment import METADATA_LIMIT, with_record
from wheeldoctor.where.filesystem import ReadError, read_regular
from wheeldoctor.where.fingerprint import Read
from wheeldoctor.where.system_files import SystemOwners

_INSTALLED_FILES_LIMIT = 64 << 20


class Owners:
    """Every recorded path of an environment, with who recorded it; built once per run.

    ``read`` is told of a record that could not be read for a passing reason (see :meth:`Read.doubt`).
    """

    def __init__(self, env: Environment, system: SystemOwners | None = None, read: Read | None = None) -> None:
        self._system = system
        self.locations = {os.path.realpath(p): p for p in env.paths}
        """Each site directory's real path, to the spelling RECORD paths were joined to."""
        self.recorded: dict[str, InstalledDistribution] = {}
        self.unrecorded: dict[str, dict[str, str]] = {}
        """Per site directory, top-level names that distributions with no record of their files
        probably installed (from ``top_level.txt``, else the name), to the distribution's name."""
        # Active distributions first: where two record a path, the one Python uses owns it.
        ranked = sorted(env.distributions, key=lambda d: not d.active)
        listed = [listed_paths(dist, read) for dist in ranked]
        # Added last to first, each overwriting: a path stays with the first that lists it
        # (one dictionary update per distribution, not one call per path).
        for dist, paths in zip(reversed(ranked), reversed(listed), strict=True):
            self.recorded.update(dict.fromkeys(paths, dist))
        for dist, paths in zip(ranked, listed, strict=True):
            # dpkg's and conda's files are in the environment's system_files: only a distribution
            # whose files nobody lists (no RECORD; rpm's, which only rpm itself knows) is unrecorded.
            listed_by_system = dist.managed_by is not None and dist.managed_by.tool in (Tool.DPKG, Tool.CONDA)
            if not paths and not listed_by_system:
                names = self.unrecorded.setdefault(dist.location, {})
                for top in _top_level_names(dist, read):
                    names.setdefault(top, dist.name)

    def spelled(self, directory: str) -> str:
        """``directory`` as the environment spells it (``lib64`` or ``lib``, a symlink or its target)."""
        return self.locations.get(os.path.realpath(directory), directory)

    def owner(self, path: str, read: Read | None = None) -> Owner | None:
        """Who installed absolute, normal ``path``; None when nobody recorded it (``read``: :meth:`system_owner`'s)."""
        dist = self.recorded.get(path)
        if dist is None:
            head, tail = os.path.split(path)
            path = os.path.join(self.spelled(head), tail)
            dist = self.recorded.get(path)
        if dist is not None:
            return Owner(name=dist.name, version=dist.version, recorded=_recorded(dist, path), dist_info=dist.path)
        if self._system is not None:
            package = self._system.owner(path, read)
            if package is not None:
                return Owner(name=package, version=None, system=True)
        return None

    def system_owner(self, path: str, read: Read | None = None) -> str | None:
        """The system package that installed ``path``, if any (no RECORD consulted).

        ``read`` (a memo's, in the process that asks) notes what was read to answer.
        """
        return None if self._system is None else self._system.owner(path, read)


def listed_paths(dist: InstalledDistribution, read: Read | None = None) -> list[str]:
    """The absolute, normal paths a distribution's record names (RECORD, or installed-files.txt)."""
    names: Iterable[str]
    if dist.record is not None:
        base, names = dist.location, dist.record.listed
    elif dist.legacy:  # an .egg-info: setup.py install's installed-files.txt, never a RECORD
        base, names = dist.path, _installed_files(dist.path, read)
    elif dist.record_deferred:
        base, names = dist.location, record_paths(dist.path, read)
        if not names:  # no RECORD (or an empty one): it records nothing, as an unread one would
            return []
    else:
        return []
    prefix = base.rstrip(os.sep) + os.sep
    plain = plain_prefix(base, dist.root)
    normpath, isabs = os.path.normpath, os.path.isabs
    paths = []
    for name in names:
        if plain is not None and is_plain(name):
            paths.append(plain + name)
        else:
            paths.append(normpath(name if isabs(name) else prefix + name))
    if dist.record is not None or dist.record_deferred:  # RECORD lists itself, or is the installer's
        paths.append(os.path.join(dist.path, "RECORD"))
    return paths


def record_paths(dist_info: str, read: Read | None = None) -> list[str]:
    """Every path a RECORD names, its first column only: for a RECORD the verification reads itself.

    Read as the parse reads it (lines end at \\n, \\r\\n or \\r alone), and bounded as it is; the
    verification parses the whole RECORD, in its workers, for the rows it hashes.
    """
    data = read_regular(os.path.join(dist_info, "RECORD"), METADATA_LIMIT)
    if isinstance(data, ReadError):
        if read is not None:
            read.failed(data)
        return []
    return first_columns(data.decode("utf-8", "surrogateescape"))


def _recorded(dist: InstalledDistribution, path: str) -> str | None:
    """The hash ``dist``'s RECORD gives for absolute ``path``, as RECORD writes it."""
    dist = with_record(dist)  # a deferred RECORD is parsed whole, for the few hooks only
    if dist.record is None:
        return None
    relative = os.path.relpath(path, dist.location)
    return next((row.hash_text for row in dist.record.rows if row.path == relative), None)


def _top_level_names(dist: InstalledDistribution, read: Read | None = None) -> list[str]:
    """What a distribution's ``top_level.txt`` names, else its name as a module name."""
    found: list[str] = []
    if os.path.isdir(dist.path):
        data = read_regular(os.path.join(dist.path, "top_level.txt"), _INSTALLED_FILES_LIMIT)
        if isinstance(data, ReadError):
            if read is not None:
                read.failed(data)
        else:
            found = [line.strip() for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
    return found or [dist.name.replace("-", "_"), dist.name.replace("-", "_").lower()]


def _installed_files(egg_info: str, read: Read | None = None) -> list[str]:
    data = read_regular(os.path.join(egg_info, "installed-files.txt"), _INSTALLED_FILES_LIMIT)
    if isinstance(data, ReadError):
        if read is not None:
            read.failed(data)
        return []
    names = [line.strip() for line in data.decode("utf-8", "surrogateescape").splitlines() if line.strip()]
    # The list leaves itself out; it is the installer's too.
    return [*names, "installed-files.txt"]

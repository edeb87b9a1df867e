"""dpkg's admin directory, read once: which package owns each file under the environment's site dirs.

Every ``info/*.list`` is read in one pass (a byte search skips the lists that name
nothing under the site directories); ``md5sums``, the status stanzas, diversions and
path filters are read only for the packages that own something there. No ``dpkg-query``
is run: a recorded or mounted admin directory reads exactly like the live one.

What a package is judged by follows ``dpkg --verify`` and debsums: every path of its
``.list`` that its ``md5sums`` holds, conffiles left out (debsums' default), diverted
files looked for where the diversion put them, and files dpkg's ``path-exclude`` kept
from being unpacked not missed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from wheeldoctor.model.managed import DistroFile, ManagedBy, Tool
from wheeldoctor.where.filesystem import ReadError, read_regular
from wheeldoctor.where.fingerprint import Read

TYPE_CHECKING = False
if TYPE_CHECKING:  # the parsers are imported where a list is read: a kept scan of no owner reads none
    from wheeldoctor.formats.dpkg import Diversion, PackageStatus
    from wheeldoctor.where.fingerprint import Keeper

DEFAULT_ADMINDIR = "/var/lib/dpkg"
_LIMIT = 256 << 20


class DpkgError(ValueError):
    """An admin directory given explicitly that cannot be read; the message is one line."""


@dataclass(frozen=True, slots=True)
class DpkgOwners:
    """What dpkg says about the files under some site directories."""

    admindir: str
    root: str
    """The directory dpkg's paths are relative to (``/``, or a mounted image's root)."""
    owners: Mapping[str, str]
    """Real path on this machine -> the info name of the package that lists it."""
    packages: Mapping[str, ManagedBy]
    """Info name -> the package's manager record, for every package in ``owners``."""
    lists_read: int


def root_of(admindir: str) -> str:
    """dpkg's root for an admin directory: ``/mnt/img`` for ``/mnt/img/var/lib/dpkg``, else ``/``."""
    path = os.path.abspath(admindir).rstrip(os.sep)
    tail = os.sep + os.path.join("var", "lib", "dpkg")
    if path.endswith(tail):
        return path[: -len(tail)] or os.sep
    return os.sep


def read_owners(
    admindir: str,
    locations: Iterable[str],
    *,
    explicit: bool = False,
    read: Read | None = None,
    keeper: Keeper | None = None,
) -> DpkgOwners | None:
    """Read which packages own files under ``locations``; None when there is no dpkg database.

    ``explicit`` (the user named the directory) turns a missing or unreadable database
    into :class:`DpkgError` instead of None. ``read`` notes the ``info`` directory and each
    file list before it is read, and hears of a read that failed for a passing reason
    (see :class:`wheeldoctor.where.fingerprint.Read`). Without ``read``, ``keeper`` keeps
    which lists name something under ``locations`` while none of them changes: a later
    run stats the lists instead of reading them all.
    """
    root = root_of(admindir)
    info = os.path.join(admindir, "info")
    prefixes = _inside_root(locations, root)
    try:
        if read is None and keeper is not None:
            lists, listed = _scan_kept(info, prefixes, keeper)
        else:
            lists, listed = _scan(info, prefixes, read)
    except OSError as e:
        if explicit:
            raise DpkgError(f"--dpkg-admindir {admindir}: cannot read {info} ({e.strerror or e})") from e
        return None
    owners: dict[str, str] = {}
    for package, paths in listed.items():
        for path in paths:
            if any(path.startswith(p + "/") for p in prefixes):
                owners[_on_disk(root, path)] = package
    packages = _packages(admindir, root, listed) if listed else {}
    return DpkgOwners(admindir, root, owners, packages, lists)


def _scan(info: str, prefixes: list[str], read: Read | None) -> tuple[int, dict[str, list[str]]]:
    """``(lists in info, {package: its listed paths})`` for the lists that name something under ``prefixes``.

    Raises OSError where ``info`` cannot be listed.
    """
    if read is not None:
        read.note(info)
    try:
        with os.scandir(info) as entries:
            names = [e.name for e in entries if e.name.endswith(".list")]
    except OSError as e:
        if read is not None:
            read.failed(e)
        raise
    from wheeldoctor.formats.dpkg import parse_list

    needles = [b"\n" + p.encode("utf-8", "surrogateescape") + b"/" for p in prefixes]
    listed: dict[str, list[str]] = {}
    for name in names:
        if read is not None:
            read.note(os.path.join(info, name))
        data = read_regular(os.path.join(info, name), _LIMIT)
        if isinstance(data, ReadError):
            if read is not None:
                read.failed(data)
            continue
        # A byte search before any parsing: nearly every list names nothing here.
        if not any(needle in data for needle in needles):
            continue
        listed[name[: -len(".list")]] = parse_list(data)
    return len(names), listed


def _scan_kept(info: str, prefixes: list[str], keeper: Keeper) -> tuple[int, dict[str, list[str]]]:
    """:func:`_scan`, kept by ``keeper`` with the fingerprints of ``info`` and every list."""
    # An entry per environment (its site directories): two environments do not evict each other.
    kept = keeper("dpkg-lists", (info, *prefixes), lambda read: _scan(info, prefixes, read))
    if (
        type(kept) is tuple
        and len(kept) == 2
        and type(kept[0]) is int
        and type(kept[1]) is dict
        and all(type(k) is str and type(v) is list and all(type(p) is str for p in v) for k, v in kept[1].items())
    ):
        return kept[0], kept[1]
    return _scan(info, prefixes, None)  # not of the shape kept: read afresh


def _inside_root(locations: Iterable[str], root: str) -> list[str]:
    """The site directories as dpkg spells them: relative to its root, as given and resolved."""
    forms: list[str] = []
    for location in locations:
        for spelled in (os.path.abspath(location), os.path.realpath(location)):
            if root != os.sep and not spelled.startswith(root + os.sep):
                continue
            form = (spelled if root == os.sep else spelled[len(root) :]).rstrip(os.sep)
            if form not in forms:
                forms.append(form)
    return forms


def _on_disk(root: str, path: str) -> str:
    return path if root == os.sep else root + path


def _read(path: str) -> bytes | None:
    data = read_regular(path, _LIMIT)
    return None if isinstance(data, ReadError) else data


def _packages(admindir: str, root: str, listed: Mapping[str, list[str]]) -> dict[str, ManagedBy]:
    """Each owning package's record: its md5sums over its listed files, as debsums checks them."""
    from wheeldoctor.formats.dpkg import DpkgFormatError, filtered_out, parse_diversions, parse_md5sums, parse_status

    status_data = _read(os.path.join(admindir, "status"))
    statuses: dict[str, PackageStatus] = {}
    if status_data is not None:
        statuses = parse_status(status_data, set(listed))
    diversions: dict[str, Diversion] = {}
    diversion_data = _read(os.path.join(admindir, "diversions"))
    if diversion_data:
        try:
            diversions = parse_diversions(diversion_data)
        except DpkgFormatError:
            diversions = {}
    filters = _path_filters(root)
    packages = {}
    for package, paths in listed.items():
        status = statuses.get(package)
        name = package
        version = status.version if status else None
        detail = os.path.join(admindir, "info", package + ".list")
        md5_path = os.path.join(admindir, "info", package + ".md5sums")
        data = _read(md5_path)
        if data is None:
            packages[package] = ManagedBy(
                Tool.DPKG, name, version, None, detail=detail, unverifiable=f"dpkg keeps no md5sums for {name}"
            )
            continue
        try:
            sums = parse_md5sums(data)
        except DpkgFormatError as e:
            packages[package] = ManagedBy(
                Tool.DPKG, name, version, md5_path, detail=detail, unverifiable=f"{md5_path}: {e}"
            )
            continue
        conffiles = status.conffiles if status else frozenset()
        files = []
        skipped = set()
        for path in paths:
            digest = sums.get(path)
            if digest is None or path in conffiles:
                continue  # directories, symlinks, conffiles: md5sums holds no digest to check
            # Diverted by another package: that one's file sits at the path, this one's aside.
            diversion = diversions.get(path)
            moved = diversion is not None and diversion.by != _bare(package)
            installed = diversion.to if diversion is not None and moved else path
            on_disk = _on_disk(root, installed)
            if filters and filtered_out(installed, filters):
                skipped.add(on_disk)
            files.append(DistroFile(on_disk, "md5", digest))
        packages[package] = ManagedBy(
            Tool.DPKG, name, version, md5_path, tuple(files), frozenset(skipped), detail=detail
        )
    return packages


def _bare(package: str) -> str:
    """``PKG`` of ``PKG:ARCH``: diversions name the package without its architecture."""
    return package.partition(":")[0]


def _path_filters(root: str) -> list[tuple[bool, str]]:
    """dpkg's path-exclude/path-include options, from dpkg.cfg then dpkg.cfg.d/* in name order."""
    from wheeldoctor.formats.dpkg import parse_path_filters

    etc = os.path.join(root, "etc", "dpkg")
    files = [os.path.join(etc, "dpkg.cfg")]
    with contextlib.suppress(OSError):
        files += sorted(os.path.join(etc, "dpkg.cfg.d", n) for n in os.listdir(os.path.join(etc, "dpkg.cfg.d")))
    filters: list[tuple[bool, str]] = []
    for path in files:
        data = _read(path)
        if data is not None:
            filters += parse_path_filters(data.decode("utf-8", "replace"))
    return filters

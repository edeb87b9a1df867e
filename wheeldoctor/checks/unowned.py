"""Files in site directories that no installer recorded.

Each site directory is walked once (``os.scandir``: file types come from the listing,
nothing is opened or stat'ed). A file is owned when an installed RECORD (or a legacy
``installed-files.txt``) lists it, or a system package does (``where/system_files.py``).
Skipped, as no installer records them: ``__pycache__`` directories, a ``.pyc`` beside a
recorded ``.py`` (Python 2 style bytecode of a recorded source), RECORD's signature
files, and the documented byproducts below. Symlinked directories are not followed.

Only what changes what ``import`` finds fails (WD072): an unowned top-level module
(``name.py``, sourceless ``name.pyc``, an extension module) or a top-level directory none
of whose files anyone recorded (a package, or a namespace package). Unowned hooks are
WD071 (``checks/hooks.py``); everything else is reported, not failed. So are the files
of a distribution that records none (a dist-info without RECORD, an ``.egg-info``
without ``installed-files.txt``): those below a top-level name it declares
(``top_level.txt``, else its own name) are marked ``claimed_by`` it, and never fail;
in a site directory holding such a distribution, no unowned file fails (any of them may
be its), but all are still reported.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from wheeldoctor.checks.hooks import UNOWNED
from wheeldoctor.checks.ownership import Owner, Owners, spellings
from wheeldoctor.disk.beside import Beside
from wheeldoctor.disk.hashing import can_fork
from wheeldoctor.model.findings import Code, Finding, Kind
from wheeldoctor.where.environment import Environment
from wheeldoctor.where.system_files import system_owners

#: Files other tools put at the top of a site directory without recording them, by design.
BYPRODUCTS = {
    "README.txt": "CPython's installer: the note in every fresh site-packages",
    "_virtualenv.py": "virtualenv: the module its _virtualenv.pth imports",
    "_virtualenv.pth": "virtualenv: imports _virtualenv at start-up (a known hook)",
}
#: Signature files the wheel spec lets RECORD leave out.
_UNRECORDED_IN_DIST_INFO = ("RECORD.jws", "RECORD.p7s")
_HOOK_MODULES = ("sitecustomize", "usercustomize")
_METADATA_SUFFIXES = (".dist-info", ".egg-info", ".data")


@dataclass(frozen=True, slots=True)
class UnownedFile:
    """A file nobody recorded; ``importable`` is the top-level name it makes importable, if any."""

    path: str
    site_dir: str
    importable: str | None = None
    claimed_by: str | None = None
    """A distribution that records none of its files and probably installed this one."""

    @property
    def relative(self) -> str:
        """The path below its site directory."""
        return os.path.relpath(self.path, self.site_dir)


@dataclass(frozen=True, slots=True)
class UnownedImport:
    """A top-level name that unowned files make importable: a WD072 finding and where."""

    site_dir: str
    finding: Finding

    @property
    def subject(self) -> str:
        """Whose finding it is, for accept rules' ``distribution``: nobody's."""
        return UNOWNED


@dataclass(frozen=True, slots=True)
class UnownedScan:
    """Every unowned file of the site directories, and the WD072 findings among them."""

    files: tuple[UnownedFile, ...]
    importable: tuple[UnownedImport, ...]
    scanned: int
    """Files looked at, owned or not."""
    site_dirs: tuple[str, ...]

    @property
    def findings(self) -> tuple[Finding, ...]:
        """The WD072 findings, one per importable top-level name."""
        return tuple(i.finding for i in self.importable)


def audit_data(env: Environment, hooks: Sequence[str], walkers: int = 1) -> list[Any]:
    """Who owns each of ``hooks``, and the unowned files, as plain data to cross a pipe (see :func:`from_data`).

    All that needs every RECORD is done here: the ownership map reads the RECORDs the
    verification deferred, so a forked child can do it while the workers hash. With
    ``walkers``, the site directories are listed by that many forked processes, started
    first, so that they list while the ownership map is built (see :class:`Listing`).
    """
    listing = Listing(site_directories(env), walkers)
    owners = Owners(env, system_owners(env))
    scan = scan_unowned(env, owners, listing=listing)
    found = {path: owners.owner(path) for path in hooks}
    return [
        [(p, o.name, o.version, o.system, o.recorded) for p, o in found.items() if o is not None],
        [(f.path, f.site_dir, f.importable, f.claimed_by) for f in scan.files],
        [(i.site_dir, i.finding.path, i.finding.message) for i in scan.importable],
        scan.scanned,
        list(scan.site_dirs),
    ]


def from_data(data: list[Any]) -> tuple[dict[str, Owner], UnownedScan]:
    """The hooks' owners and the :class:`UnownedScan` that :func:`audit_data` turned into plain data."""
    hook_owners, files, importable, scanned, site_dirs = data
    scan = UnownedScan(
        tuple(UnownedFile(*f) for f in files),
        tuple(UnownedImport(d, Finding(Code.UNOWNED_MODULE, Kind.UNOWNED, p, m)) for d, p, m in importable),
        scanned,
        tuple(site_dirs),
    )
    return {path: Owner(*owner) for path, *owner in hook_owners}, scan


def site_directories(env: Environment) -> tuple[str, ...]:
    """The site directories to walk: one per real directory, spelled as RECORD paths were joined to."""
    given = [d.path for d in env.startup.site_dirs] if env.startup is not None else list(env.paths)
    spelled = spellings(env)
    return tuple(dict.fromkeys(spelled.get(os.path.realpath(d), d) for d in given))


#: What a listing holds: (site directory, directory, its top-level name or "", its file names).
Listed = list[tuple[str, str, str, list[str]]]


class Listing:
    """The files of the site directories, listed (``os.scandir``: types from the listing,
    nothing opened or stat'ed), ``__pycache__`` left out and symlinked directories not followed.

    With ``walkers`` above one (and where forking is safe), each site directory's own listing
    is read at once, here, and the subdirectories of all of them are dealt to that many forked
    walkers (:func:`_deal`), which list while this process goes on (building the ownership
    map): whose a file is needs nothing of theirs. A walker that fails leaves its share to be
    listed here. Otherwise everything is listed when first asked for.
    """

    def __init__(self, site_dirs: Sequence[str], walkers: int = 1) -> None:
        self.site_dirs = tuple(site_dirs)
        self._listed: Listed | None = None
        self._walkers: list[Beside] = []
        if walkers > 1 and can_fork():
            self._listed = []
            below: list[tuple[str, str, str]] = []
            for site_dir in self.site_dirs:
                _list(site_dir, [(site_dir, "")], self._listed, below)
            for share in _deal(below, walkers):
                self._walkers.append(Beside(partial(_listed_share, share)))

    def listed(self) -> Listed:
        """Every directory listed, with its files; waits for the walkers."""
        if self._listed is None:
            self._listed = []
            for site_dir in self.site_dirs:
                _list(site_dir, [(site_dir, "")], self._listed)
        while self._walkers:
            self._listed.extend(self._walkers.pop(0).result())  # marshal gives the tuples back as tuples
        return self._listed


def _listed_share(share: list[tuple[str, str, str]]) -> list[Any]:
    listed: Listed = []
    for site_dir, directory, top in share:
        _list(site_dir, [(directory, top)], listed)
    return listed


def _list(
    site_dir: str, stack: list[tuple[str, str]], listed: Listed, below: list[tuple[str, str, str]] | None = None
) -> None:
    """List the directories in ``stack`` (each with its top-level name, "" for the site directory) into ``listed``.

    With ``below``, subdirectories are put there instead of being listed.
    """
    stack = list(stack)
    while stack:
        directory, top = stack.pop()
        try:
            listing = os.scandir(directory)
        except OSError:
            continue
        names = []
        with listing:
            for entry in listing:
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_dir = False
                name = entry.name
                if not is_dir:
                    names.append(name)
                elif name == "__pycache__":
                    continue
                elif below is None:
                    stack.append((entry.path, top or name))
                else:
                    below.append((site_dir, entry.path, top or name))
        listed.append((site_dir, directory, top, names))


def scan_unowned(env: Environment, owners: Owners, walkers: int = 1, listing: Listing | None = None) -> UnownedScan:
    """Walk every site directory of ``env`` and report what nobody recorded.

    The files are listed by ``listing`` (by default one of ``walkers`` walkers: see
    :class:`Listing`), then judged here against the ownership map.
    """
    listing = listing or Listing(site_directories(env), walkers)
    by_site: dict[str, Listed] = {site_dir: [] for site_dir in listing.site_dirs}
    for item in listing.listed():
        by_site[item[0]].append(item)
    files: list[UnownedFile] = []
    importable: list[UnownedImport] = []
    scanned = 0
    by_directory = _by_directory(owners.recorded)
    for site_dir, listed in by_site.items():
        found, count = _judge(site_dir, listed, owners, by_directory)
        scanned += count
        found = _claimed(found, owners.unrecorded.get(site_dir, {}))
        files.extend(found)
        importable.extend(UnownedImport(site_dir, f) for f in _importable(site_dir, found))
    return UnownedScan(tuple(files), tuple(importable), scanned, listing.site_dirs)


def _judge(
    site_dir: str, listed: Listed, owners: Owners, by_directory: Mapping[str, set[str]]
) -> tuple[list[UnownedFile], int]:
    """The unowned files among those listed under ``site_dir``, and how many were looked at.

    ``by_directory`` holds the recorded names of each directory: a directory's owned and
    unowned files are then told apart by one set operation, not a lookup per file.
    """
    recorded = owners.recorded
    unowned: list[UnownedFile] = []
    scanned = 0
    # Top-level directories with at least one owned file are someone's package.
    owned_tops: set[str] = set()
    nothing: set[str] = set()
    for _, directory, top, names in listed:
        scanned += len(names)
        owned = by_directory.get(directory.rstrip(os.sep) or os.sep, nothing)
        if not owned.isdisjoint(names):
            owned_tops.add(top)
        prefix = directory.rstrip(os.sep) + os.sep  # as os.scandir joins an entry's path
        for name in [name for name in names if name not in owned]:
            path = prefix + name
            if _skipped(name, path, directory, not top, recorded) or owners.system_owner(path) is not None:
                continue
            unowned.append(UnownedFile(path, site_dir, None if top else _module_name(name)))
    return [_as_package(item, owned_tops) for item in unowned], scanned


def _by_directory(recorded: Mapping[str, object]) -> dict[str, set[str]]:
    """Each directory of a recorded path, to the names recorded in it."""
    found: dict[str, set[str]] = {}
    for path in recorded:
        directory, _, name = path.rpartition(os.sep)
        names = found.get(directory or os.sep)
        if names is None:
            found[directory or os.sep] = {name}
        else:
            names.add(name)
    return found


def _deal(directories: list[tuple[str, str, str]], walkers: int) -> list[list[tuple[str, str, str]]]:
    """Deal directories into at most ``walkers`` shares, the broadest first, each to the lightest share.

    A directory's link count (2 plus its subdirectories on most filesystems) stands in for
    its size: torch's tree should not share a walker with the next broadest.
    """

    def breadth(directory: tuple[str, str, str]) -> int:
        try:
            return max(2, os.stat(directory[1]).st_nlink)
        except OSError:
            return 2

    weighed = sorted(((breadth(d), d) for d in directories), reverse=True)
    shares: list[tuple[int, list[tuple[str, str, str]]]] = [(0, []) for _ in range(min(walkers, len(weighed)))]
    for weight, directory in weighed:
        lightest = min(range(len(shares)), key=lambda i: shares[i][0])
        total, share = shares[lightest]
        share.append(directory)
        shares[lightest] = (total + weight, share)
    return [share for _, share in shares]


def _as_package(item: UnownedFile, owned_tops: set[str]) -> UnownedFile:
    """The file, marked importable when its top-level directory holds unowned files only."""
    if item.importable is not None or os.path.dirname(item.path) == item.site_dir:
        return item
    top_name = _top(item.path, item.site_dir)
    if top_name in owned_tops or not top_name.isidentifier():
        return item
    return UnownedFile(item.path, item.site_dir, top_name)


def _claimed(files: list[UnownedFile], names: Mapping[str, str]) -> list[UnownedFile]:
    """Mark the files a distribution without a record of them may have installed: unowned, never a finding.

    The one that declares the top-level name (``top_level.txt``, else its own name) is
    named; when none does (PyYAML installs ``yaml``), any of them may have: all are named.
    """
    if not names:
        return files
    anyone = ", ".join(sorted(set(names.values())))
    marked = []
    for item in files:
        top = _top(item.path, item.site_dir)
        claimant = names.get(top) or names.get(top.partition(".")[0]) or anyone
        marked.append(UnownedFile(item.path, item.site_dir, item.importable, claimant))
    return marked


def _top(path: str, site_dir: str) -> str:
    return path[len(site_dir) + 1 :].partition(os.sep)[0]


def _skipped(name: str, path: str, directory: str, top: bool, recorded: Mapping[str, object]) -> bool:
    if top and name in BYPRODUCTS:
        return True
    if name.endswith((".pyc", ".pyo")) and path[:-1] in recorded:
        return True
    return name in _UNRECORDED_IN_DIST_INFO and directory.endswith(".dist-info")


def _module_name(name: str) -> str | None:
    """The module a top-level file makes importable: ``x.py``, ``x.pyc``, ``x.cpython-311-….so``."""
    stem, dot, suffix = name.partition(".")
    if not dot or not stem.isidentifier() or stem in _HOOK_MODULES:
        return None
    if suffix in ("py", "pyc", "pyw") or suffix.endswith(("so", "pyd")):
        return stem
    return None


def _importable(site_dir: str, files: list[UnownedFile]) -> list[Finding]:
    """One WD072 per top-level name that unowned files make importable."""
    by_name: dict[str, list[UnownedFile]] = {}
    for item in files:
        if item.importable is not None and item.claimed_by is None and not item.importable.endswith(_METADATA_SUFFIXES):
            by_name.setdefault(item.importable, []).append(item)
    findings = []
    for name, items in sorted(by_name.items()):
        first = items[0].relative
        if os.sep in first:
            what = f"{name}/ ({len(items)} file(s))"
            path = name + "/"
        else:
            what, path = first, first
        message = f"{what} in {site_dir} makes `import {name}` work, and no installer recorded it"
        findings.append(Finding(Code.UNOWNED_MODULE, Kind.UNOWNED, path, message))
    return findings

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
WD071 (``judge/hooks.py``); everything else is reported, not failed. So are the files
of a distribution that records none (a dist-info without RECORD, an ``.egg-info``
without ``installed-files.txt``): those below a top-level name it declares
(``top_level.txt``, else its own name) are marked ``claimed_by`` it, and never fail;
in a site directory holding such a distribution, no unowned file fails (any of them may
be its), but all are still reported.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from wheeldoctor.model.environment import Environment
from wheeldoctor.model.findings import Code, Finding, Kind
from wheeldoctor.model.ownership import UnownedFile, UnownedImport, UnownedScan
from wheeldoctor.where.fingerprint import Read
from wheeldoctor.where.ownership import Owners

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


def scan_unowned(env: Environment, owners: Owners, read: Read | None = None) -> UnownedScan:
    """Walk every site directory of ``env`` and report what nobody recorded; ``read`` notes each directory listed."""
    given = [d.path for d in env.startup.site_dirs] if env.startup is not None else list(env.paths)
    # One walk per real directory, under the spelling RECORD paths were joined to.
    site_dirs = tuple(dict.fromkeys(owners.spelled(d) for d in given))
    files: list[UnownedFile] = []
    importable: list[UnownedImport] = []
    scanned = 0
    for site_dir in site_dirs:
        found, count, owned_tops = _walk_from(site_dir, owners, read)
        scanned += count
        # In path order: a listing must not change with the directory order.
        found = sorted((_as_package(item, owned_tops) for item in found), key=lambda item: item.path)
        found = _claimed(found, owners.unrecorded.get(site_dir, {}))
        found = _target_scripts(site_dir, found, owners)
        files.extend(found)
        importable.extend(UnownedImport(site_dir, f) for f in _importable(site_dir, found))
    return UnownedScan(files=tuple(files), importable=tuple(importable), scanned=scanned, site_dirs=site_dirs)


def _walk_from(site_dir: str, owners: Owners, read: Read | None = None) -> tuple[list[UnownedFile], int, set[str]]:
    """Walk ``site_dir`` (``os.scandir``: file types come from the listing; symlinked directories not followed).

    Returns the unowned files (not yet marked as packages), how many files were looked at,
    and the top-level names with an owned file. ``read`` notes each directory before it is listed.
    """
    recorded = owners.recorded
    unowned: list[UnownedFile] = []
    scanned = 0
    # Top-level directories with at least one owned file are someone's package.
    owned_tops: set[str] = set()
    stack = [(site_dir, "")]  # each directory with the top-level name it is under, "" for the site directory
    while stack:
        directory, top = stack.pop()
        if read is not None:
            read.note(directory)
        try:
            listing = os.scandir(directory)
        except OSError as e:
            if read is not None:  # gone since its parent was listed (the parent moved), or it may pass
                read.failed(e)
            continue
        with listing:
            for entry in listing:
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_dir = False
                    if read is not None:  # a guess, not what the directory holds: not kept
                        read.doubt()
                name = entry.name
                if is_dir:
                    if name != "__pycache__":
                        stack.append((entry.path, top or name))
                    continue
                scanned += 1
                path = entry.path
                if path in recorded:
                    owned_tops.add(top)
                    continue
                if _skipped(name, path, directory, not top, recorded) or owners.system_owner(path, read) is not None:
                    continue
                unowned.append(
                    UnownedFile(path=path, site_dir=site_dir, importable=None if top else _module_name(name))
                )
    return unowned, scanned, owned_tops


def _as_package(item: UnownedFile, owned_tops: set[str]) -> UnownedFile:
    """The file, marked importable when its top-level directory holds unowned files only."""
    if item.importable is not None or os.path.dirname(item.path) == item.site_dir:
        return item
    top_name = _top(item.path, item.site_dir)
    if top_name in owned_tops or not top_name.isidentifier():
        return item
    return UnownedFile(path=item.path, site_dir=item.site_dir, importable=top_name)


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
        marked.append(
            UnownedFile(path=item.path, site_dir=item.site_dir, importable=item.importable, claimed_by=claimant)
        )
    return marked


def _target_scripts(site_dir: str, files: list[UnownedFile], owners: Owners) -> list[UnownedFile]:
    """Mark the scripts of a ``pip install --target DIR`` layout: ``DIR/bin/NAME``, never a finding.

    pip installs into a scratch prefix and moves its ``lib/python`` and ``bin`` into
    ``DIR``, so each RECORD still lists its scripts as ``../../bin/NAME``, which no longer
    leads to ``DIR/bin``. A file of ``DIR/bin`` is the distribution's script when some
    RECORD of ``DIR`` lists that name so; it is claimed by it and fails nothing.
    """
    scripts_dir = os.path.join(site_dir, "bin")
    # Most site directories have no bin/ of unowned files: then no RECORD row is looked at.
    if not any(os.path.dirname(item.path) == scripts_dir for item in files):
        return files
    recorded_at = os.path.normpath(os.path.join(site_dir, os.pardir, os.pardir, "bin"))
    scripts = {
        os.path.basename(path): dist.name
        for path, dist in owners.recorded.items()
        if os.path.dirname(os.path.normpath(path)) == recorded_at
    }
    if not scripts:
        return files
    marked = []
    for item in files:
        owner = scripts.get(os.path.basename(item.path)) if os.path.dirname(item.path) == scripts_dir else None
        claimed = owner is not None and item.claimed_by is None
        marked.append(
            UnownedFile(
                path=item.path,
                site_dir=item.site_dir,
                importable=item.importable,
                claimed_by=f"{owner} (pip --target script)",
            )
            if claimed
            else item
        )
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
        findings.append(Finding(code=Code.UNOWNED_MODULE, kind=Kind.UNOWNED, path=path, message=message))
    return findings

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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from wheeldoctor.engine.audit_memo import audit_memo, is_audit, note_inputs
from wheeldoctor.engine.fork import can_fork
from wheeldoctor.engine.ownership import Owners
from wheeldoctor.engine.workers import deal, run_workers
from wheeldoctor.model.environment import Environment
from wheeldoctor.model.findings import Code, Finding, Kind
from wheeldoctor.model.ownership import Owner, UnownedFile, UnownedImport, UnownedScan
from wheeldoctor.where.fingerprint import Read
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
#: With fewer walkers than this (fewer cores), the ownership map is read in one process.
_READERS_FROM = 4


def kept_audit(env: Environment, hooks: Sequence[str], cache_dir: str | None) -> list[Any] | None:
    """What :func:`audit_data` kept in ``cache_dir`` for these inputs, while nothing it read has changed; else None."""
    memo = audit_memo(env, tuple(hooks), cache_dir)
    kept = None if memo is None else memo.get()
    return kept if is_audit(kept) else None


def audit_data(
    env: Environment, hooks: Sequence[str], walkers: int = 1, cache_dir: str | None = None, *, asked: bool = False
) -> list[Any]:
    """Who owns each of ``hooks``, and the unowned files, as plain data to cross a pipe (see :func:`from_data`).

    All that needs every RECORD is done here: the ownership map reads the RECORDs the
    verification deferred, so a forked child can do it while the workers hash. With
    ``walkers``, the RECORDs are read and the walk is spread over that many forked
    processes (see :class:`Owners` and :func:`scan_unowned`). With ``cache_dir``, what was
    found is kept there, and taken again while nothing it read has changed
    (:mod:`wheeldoctor.engine.audit_memo`); ``asked``: :func:`kept_audit` found nothing just now.
    """
    memo = audit_memo(env, tuple(hooks), cache_dir)
    read = None
    if memo is not None:
        kept = None if asked else memo.get()
        if is_audit(kept):
            return kept
        read = Read()
        note_inputs(env, read)
    # Two readers lost to one on two cores (45 against 29 ms: forking and the transfer cost
    # more than half the reading saves); 8 read a 16-core host's 69k rows in 58-69 ms, not 81-95.
    owners = Owners(env, system_owners(env), readers=walkers if walkers >= _READERS_FROM else 1, read=read)
    scan = scan_unowned(env, owners, walkers, read)
    found = {path: owners.owner(path, read) for path in hooks}
    data = [
        [(p, o.name, o.version, o.system, o.recorded, o.dist_info) for p, o in found.items() if o is not None],
        [(f.path, f.site_dir, f.importable, f.claimed_by) for f in scan.files],
        [(i.site_dir, i.finding.path, i.finding.message) for i in scan.importable],
        scan.scanned,
        list(scan.site_dirs),
    ]
    if memo is not None and read is not None:
        memo.keep(read, data)
    return data


def from_data(data: list[Any]) -> tuple[dict[str, Owner], UnownedScan]:
    """The hooks' owners and the :class:`UnownedScan` that :func:`audit_data` turned into plain data."""
    hook_owners, files, importable, scanned, site_dirs = data
    scan = UnownedScan(
        files=tuple(UnownedFile(path=p, site_dir=s, importable=i, claimed_by=c) for p, s, i, c in files),
        importable=tuple(
            UnownedImport(d, Finding(code=Code.UNOWNED_MODULE, kind=Kind.UNOWNED, path=p, message=m))
            for d, p, m in importable
        ),
        scanned=scanned,
        site_dirs=tuple(site_dirs),
    )
    return {
        path: Owner(name=name, version=version, system=system, recorded=recorded, dist_info=dist_info)
        for path, name, version, system, recorded, dist_info in hook_owners
    }, scan


def scan_unowned(env: Environment, owners: Owners, walkers: int = 1, read: Read | None = None) -> UnownedScan:
    """Walk every site directory of ``env`` and report what nobody recorded.

    With ``walkers`` above one (and where forking is safe), each site directory's own
    listing is read here and its subdirectories are walked by forked processes, which
    share the ownership map with this one. What a walker fails to deliver is walked here.
    ``read`` notes each directory listed, before it is listed.
    """
    given = [d.path for d in env.startup.site_dirs] if env.startup is not None else list(env.paths)
    # One walk per real directory, under the spelling RECORD paths were joined to.
    site_dirs = tuple(dict.fromkeys(owners.spelled(d) for d in given))
    files: list[UnownedFile] = []
    importable: list[UnownedImport] = []
    scanned = 0
    for site_dir in site_dirs:
        found, count = _walk(site_dir, owners, walkers, read)
        scanned += count
        found = _claimed(found, owners.unrecorded.get(site_dir, {}))
        found = _target_scripts(site_dir, found, owners)
        files.extend(found)
        importable.extend(UnownedImport(site_dir, f) for f in _importable(site_dir, found))
    return UnownedScan(files=tuple(files), importable=tuple(importable), scanned=scanned, site_dirs=site_dirs)


def _walk(site_dir: str, owners: Owners, walkers: int = 1, read: Read | None = None) -> tuple[list[UnownedFile], int]:
    if walkers > 1 and can_fork():
        unowned, scanned, owned_tops, below = _walk_from(site_dir, [(site_dir, "")], owners, read, descend=False)
        shares = _deal(below, walkers)
        delivered: set[int] = set()

        def walk_share(share: tuple[int, list[tuple[str, str]]], send: Callable[[list[Any]], None]) -> None:
            noted = None if read is None else Read()
            found, count, tops, _ = _walk_from(site_dir, share[1], owners, noted)
            seen = None if noted is None else [list(noted.fingerprints.items()), noted.complete]
            send([share[0], [(f.path, f.importable) for f in found], count, sorted(tops), seen])

        for index, found, count, tops, seen in run_workers(list(enumerate(shares)), walk_share):
            delivered.add(index)
            unowned.extend(
                UnownedFile(path=path, site_dir=site_dir, importable=importable) for path, importable in found
            )
            scanned += count
            owned_tops.update(tops)
            if read is not None:
                read.add(*seen)
        for index, share in enumerate(shares):
            if index not in delivered:  # a walker that failed: its share is walked here
                found, count, tops, _ = _walk_from(site_dir, share, owners, read)
                unowned.extend(found)
                scanned += count
                owned_tops.update(tops)
    else:
        unowned, scanned, owned_tops, _ = _walk_from(site_dir, [(site_dir, "")], owners, read)
    # In path order: the walkers' shares come back as each ends, and one walker lists in
    # another order than several; a listing must not change with the timing or the cores.
    return sorted((_as_package(item, owned_tops) for item in unowned), key=lambda item: item.path), scanned


def _walk_from(
    site_dir: str, stack: list[tuple[str, str]], owners: Owners, read: Read | None = None, descend: bool = True
) -> tuple[list[UnownedFile], int, set[str], list[tuple[str, str]]]:
    """Walk the directories in ``stack`` (each with the top-level name it is under, "" for the site directory).

    Returns the unowned files (not yet marked as packages), how many files were looked at,
    the top-level names with an owned file, and, unless ``descend``, the subdirectories found.
    ``read`` notes each directory before it is listed.
    """
    recorded = owners.recorded
    unowned: list[UnownedFile] = []
    scanned = 0
    # Top-level directories with at least one owned file are someone's package.
    owned_tops: set[str] = set()
    below: list[tuple[str, str]] = []
    stack = list(stack)
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
                        (stack if descend else below).append((entry.path, top or name))
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
    return unowned, scanned, owned_tops, below


def _deal(directories: list[tuple[str, str]], walkers: int) -> list[list[tuple[str, str]]]:
    """Deal directories into at most ``walkers`` shares, by breadth.

    A directory's link count (2 plus its subdirectories on most filesystems) stands in for
    its size: torch's tree should not share a walker with the next broadest.
    """

    def breadth(directory: tuple[str, str]) -> int:
        try:
            return max(2, os.stat(directory[0]).st_nlink)
        except OSError:
            return 2

    return deal([(breadth(d), d) for d in directories], walkers)


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

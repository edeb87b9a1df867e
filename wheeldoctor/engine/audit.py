"""The audit of an environment's start-up hooks' owners and of the files nobody recorded, kept by what it read.

The audit needs every RECORD and a walk of every site directory (:mod:`wheeldoctor.where.ownership`,
:mod:`wheeldoctor.where.unowned`); it runs as a task of the verification's workers
(:mod:`.tasks`), and what it found crosses the pipe as plain data (:func:`audit_data`,
:func:`from_data`). It is kept as a :class:`~wheeldoctor.engine.store.Memo`: its inputs are
what it was given, compared by value; what it read is every path noted, by fingerprint.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, TypeGuard

from wheeldoctor.engine.store import Memo
from wheeldoctor.model.environment import Environment
from wheeldoctor.model.findings import Code, Finding, Kind
from wheeldoctor.model.ownership import Owner, UnownedFile, UnownedImport, UnownedScan
from wheeldoctor.where.fingerprint import Read
from wheeldoctor.where.ownership import Owners
from wheeldoctor.where.system_files import system_owners
from wheeldoctor.where.unowned import scan_unowned

#: Bump when what the audit finds from the same files changes (skipped names, what is importable),
#: or the shape of what it keeps (2: each owner's dist-info).
_MEMO_VERSION = 3
#: What the audit reads of a dist-info, by name (see :mod:`wheeldoctor.where.ownership`).
_READ_OF_DIST = ("RECORD", "installed-files.txt", "top_level.txt")


def audit_data(env: Environment, hooks: Sequence[str], cache_dir: str | None = None) -> list[Any]:
    """Who owns each of ``hooks``, and the unowned files, as plain data to cross a pipe (see :func:`from_data`).

    All that needs every RECORD is done here (the ownership map reads the RECORDs the
    verification deferred). With ``cache_dir``, what was found is kept there, and taken
    again while nothing it read has changed (:func:`_audit_memo`).
    """
    memo = _audit_memo(env, tuple(hooks), cache_dir)
    read = None
    if memo is not None:
        kept = memo.get()
        if is_audit(kept):
            return kept
        read = Read()
        _note_inputs(env, read)
    owners = Owners(env, system_owners(env), read=read)
    scan = scan_unowned(env, owners, read)
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


def _audit_memo(env: Environment, hooks: tuple[str, ...], cache_dir: str | None) -> Memo | None:
    """The audit's :class:`~wheeldoctor.engine.store.Memo`, made before anything it depends on is read.

    Its inputs, compared by value: the hooks asked about, the site directories and search
    path, and each distribution as the environment's read gave it. What it reads, by
    fingerprint: each dist-info and its RECORD, ``installed-files.txt`` and ``top_level.txt``
    (present or not), the search path's entries, every directory the walk lists, and where
    the audit reads dpkg's lists itself, dpkg's ``info`` directory, every list and the
    directory of each symlink met. None (nothing kept) where the environment's read took a
    system package manager's lists already (they were read before the audit could take
    their fingerprints), or a RECORD was read before the audit.
    """
    if cache_dir is None or env.system_files or any(d.record is not None for d in env.distributions):
        return None
    startup = env.startup
    inputs = (
        hooks,
        tuple(env.paths),
        tuple(os.path.realpath(p) for p in env.paths),
        None if startup is None else tuple(d.path for d in startup.site_dirs),
        None if startup is None else tuple(startup.paths),
        tuple(
            (
                d.path,
                d.location,
                d.root,
                d.name,
                d.version,
                d.active,
                d.record_deferred,
                None if d.managed_by is None else d.managed_by.tool.value,
            )
            for d in env.distributions
        ),
    )
    return Memo(cache_dir, "\0".join(env.paths), "audit", _MEMO_VERSION, inputs)


def _note_inputs(env: Environment, read: Read) -> None:
    """Take the fingerprints of what the audit reads besides the directories its walk lists."""
    for dist in env.distributions:
        read.note(dist.path)  # first: a file that comes and goes while read moves it
        for name in _READ_OF_DIST:
            read.note(os.path.join(dist.path, name))
    startup = env.startup
    for directory in startup.paths if startup is not None else env.paths:  # whether each is a directory
        read.note(directory)


def is_audit(value: object) -> TypeGuard[list[Any]]:
    """Whether ``value`` has the shape of :func:`audit_data`'s result."""
    if type(value) is not list or len(value) != 5:
        return False
    owners, files, importable, scanned, site_dirs = value
    return (
        type(scanned) is int
        and _rows(owners, (str, str, (str, type(None)), bool, (str, type(None)), (str, type(None))))
        and _rows(files, (str, str, (str, type(None)), (str, type(None))))
        and _rows(importable, (str, str, str))
        and type(site_dirs) is list
        and all(type(d) is str for d in site_dirs)
    )


def _rows(value: object, kinds: tuple[Any, ...]) -> bool:
    return type(value) is list and all(
        type(row) is tuple and len(row) == len(kinds) and all(isinstance(v, k) for v, k in zip(row, kinds, strict=True))
        for row in value
    )

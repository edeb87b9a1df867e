"""The audit of hooks' owners and unowned files, kept by what it read (see :mod:`wheeldoctor.engine.result_memo`).

What the audit finds follows from its inputs and from what it reads. The inputs, compared
by value: the hooks asked about, the site directories and search path, and each
distribution as the environment's read gave it (name, version, where, whether it is
active, which record it keeps, which manager holds it). What it reads, by fingerprint:
each distribution's dist-info and its RECORD, ``installed-files.txt`` and
``top_level.txt`` (present or not), the search path's entries, and every directory the
walk lists; and where the audit reads dpkg's file lists itself (a path below ``/usr`` or
``/etc`` that nothing else owns, such as Debian's ``sitecustomize``), dpkg's ``info``
directory, every list, and the directory holding each symlink met in resolving the path.

Not kept where the environment's read already took a system package manager's lists
(dpkg's for a system Python, conda-meta for a conda environment): those were read before
the audit could take their fingerprints, and they are large. Nor where a RECORD was read
before the audit (only verification defers them, and only ``check`` audits), nor where a
read failed for a reason that may pass (an I/O error, no descriptor left): what was read
would then be kept as what is there.
"""

from __future__ import annotations

import os
from typing import Any, TypeGuard

from wheeldoctor.engine.result_memo import Read, ResultMemo
from wheeldoctor.model.environment import Environment

_SUFFIX = ".audit"
#: Bump when what the audit finds from the same files changes (skipped names, what is importable),
#: or the shape of what it keeps (2: each owner's dist-info).
_VERSION = 2
#: What the audit reads of a dist-info, by name (see :mod:`wheeldoctor.engine.ownership`).
_READ_OF_DIST = ("RECORD", "installed-files.txt", "top_level.txt")


def audit_memo(env: Environment, hooks: tuple[str, ...], cache_dir: str | None) -> ResultMemo | None:
    """The memo of this audit, made before anything it depends on is read; None where none is kept."""
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
    return ResultMemo(cache_dir, "\0".join(env.paths), _SUFFIX, _VERSION, inputs)


def note_inputs(env: Environment, read: Read) -> None:
    """Take the fingerprints of what the audit reads besides the directories its walk lists."""
    for dist in env.distributions:
        read.note(dist.path)  # first: a file that comes and goes while read moves it
        for name in _READ_OF_DIST:
            read.note(os.path.join(dist.path, name))
    startup = env.startup
    for directory in startup.paths if startup is not None else env.paths:  # whether each is a directory
        read.note(directory)


def is_audit(value: object) -> TypeGuard[list[Any]]:
    """Whether ``value`` has the shape of :func:`wheeldoctor.engine.unowned.audit_data`'s result."""
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

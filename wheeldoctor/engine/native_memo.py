"""The native audit kept in the cache directory, by the fingerprint of every path its scan read.

What the native section finds follows from its inputs and from what its scan reads. The
inputs, compared by value: the interpreter, each distribution as the environment's read
gave it (where, name, version, whether it is active), ``--strict``, and which builds of
one project require which (all the judge asks of the requirements). What the scan reads,
by fingerprint taken before it is read (:mod:`wheeldoctor.where.native`): each RECORD, each
shared object, the interpreter, ld.so.cache, every directory searched (a library added to
one moves its mtime and ctime) and every file found there. A later run stats those paths
(see :mod:`wheeldoctor.engine.store`) and, where every one is unchanged, takes the
audit: findings, where each library comes from, and counts.

Not kept where a RECORD was read before the scan could take its fingerprint (only the
verification defers RECORDs), nor where a read failed for a reason that may pass.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from wheeldoctor.engine.store import keeper
from wheeldoctor.judge.native_audit import NativeAudit, NativeFinding, Source
from wheeldoctor.model.environment import Environment
from wheeldoctor.model.findings import Code, Finding, Kind
from wheeldoctor.where.fingerprint import Read


def kept_audit(
    env: Environment, cache_dir: str | None, inputs: tuple[str, ...], audit: Callable[[Read | None], NativeAudit]
) -> NativeAudit:
    """``audit(noted)``'s answer for ``env``, kept in ``cache_dir`` with what it read (``inputs``:
    what else it depends on, as text); None for ``noted`` where nothing is kept."""
    keep = keeper(cache_dir)
    if keep is None or any(d.record is not None for d in env.distributions):
        return audit(None)
    python = env.python or sys.executable
    described = (
        python,
        os.path.realpath(python),  # a venv's python link pointed at another interpreter: another machine, RPATH
        *inputs,
        *(f for d in env.distributions for f in (d.path, d.location, d.root, d.name, d.version, str(d.active))),
    )
    found = from_data(keep("native", described, lambda read: to_data(audit(read))))
    return found if found is not None else audit(None)


def to_data(audit: NativeAudit) -> tuple[Any, ...]:
    """``audit`` as nested tuples of plain values (what marshal writes); its findings are not yet accepted."""
    return (
        tuple(_finding(f) for f in audit.findings),
        tuple((s.provider, s.library, s.path, s.owner, s.needed_by) for s in audit.sources),
        (audit.machine, audit.ld_so_cache, audit.ld_so_cache_problem, audit.interpreter_rpath),
        (audit.objects, audit.extension_modules, audit.loaded_on_import, audit.foreign, audit.strict),
    )


def _finding(found: NativeFinding) -> tuple[Any, ...]:
    f = found.finding
    return (found.subject, found.version, found.site_dir, f.code.value, f.kind.value, f.path, f.message, f.expected)


_TEXT = (str,)
_MAYBE = (str, type(None))


def from_data(data: object) -> NativeAudit | None:
    """The audit ``data`` holds; None where it is not of :func:`to_data`'s shape."""
    if type(data) is not tuple or len(data) != 4:
        return None
    findings, sources, where, counts = data
    if not (
        _rows(findings, (_TEXT, _MAYBE, _MAYBE, _TEXT, _TEXT, _MAYBE, _TEXT, _MAYBE))
        and _rows(sources, (_TEXT, _TEXT, _MAYBE, _MAYBE, (int,)))
        and _rows((where,), (_MAYBE, _MAYBE, _MAYBE, (tuple,)))
        and all(type(p) is str for p in where[3])
        and _rows((counts,), ((int,), (int,), (int,), (int,), (bool,)))
    ):
        return None
    try:
        judged = tuple(
            NativeFinding(
                subject=subject,
                version=version,
                site_dir=site_dir,
                finding=Finding(code=Code(code), kind=Kind(kind), path=path, message=message, expected=expected),
            )
            for subject, version, site_dir, code, kind, path, message, expected in findings
        )
    except ValueError:  # a code or kind this code does not know
        return None
    machine, cache, problem, rpath = where
    objects, extensions, loaded, foreign, strict = counts
    return NativeAudit(
        findings=judged,
        sources=tuple(
            Source(provider=p, library=lib, path=path, owner=owner, needed_by=n) for p, lib, path, owner, n in sources
        ),
        machine=machine,
        ld_so_cache=cache,
        ld_so_cache_problem=problem,
        interpreter_rpath=rpath,
        objects=objects,
        extension_modules=extensions,
        loaded_on_import=loaded,
        foreign=foreign,
        strict=strict,
    )


def _rows(value: object, kinds: tuple[tuple[type, ...], ...]) -> bool:
    return type(value) is tuple and all(
        type(row) is tuple and len(row) == len(kinds) and all(type(v) in k for v, k in zip(row, kinds, strict=True))
        for row in value
    )

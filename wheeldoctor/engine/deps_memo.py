"""What ``deps`` judged of an environment, kept in the cache directory by a digest of everything it judged.

The judgement of requirements and compatibility (:func:`~wheeldoctor.judge.deps.check_dependencies`,
:func:`~wheeldoctor.judge.compat.check_compatibility`) is a function of the environment as
read and of the code that judges it: packaging parses every requirement, marker and
specifier of every distribution, which a warm ``deps`` otherwise spends most of its time
on. The judgement is kept beside a digest of its inputs, and a run whose inputs are the
same takes it instead, without importing packaging's parsers.

The inputs, digested as marshal writes them (version 2, which writes equal values as equal
bytes whatever their sharing): the code (:func:`~wheeldoctor.engine.store.code`, in the
header) and packaging's version; the target's interpreter, search path, prefixes, marker
environment and supported tags as the probe gave them; and every distribution as read, in
order: where it is, its name and version, whether it is active, its installer, its WHEEL
tags, its METADATA's parts and the problems its read found. What ``deps`` works out from
the environment besides (duplicates, repairs) is not kept: it is cheap, and made again.

It is a :class:`~wheeldoctor.engine.store.Memo` whose input is that digest (it reads no
path of its own): used while the digest is the same, else judged again and rewritten.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys

from wheeldoctor.engine import store
from wheeldoctor.judge.compat import CompatibilityFinding, CompatibilityReport
from wheeldoctor.judge.deps import ConflictKind, DependencyConflict, DependencyReport
from wheeldoctor.model.environment import Environment
from wheeldoctor.model.findings import Code

#: Bump when what is kept means something else with the same code (it never has).
_VERSION = 1

Judgement = tuple[DependencyReport, CompatibilityReport]
"""What is kept: the requirements' judgement and the compatibility judgement."""


class DepsMemo:
    """The kept judgement of one target: :meth:`get` it for an environment as read, :meth:`keep` a new one."""

    def __init__(self, cache_dir: str, target: str) -> None:
        """``target``: what names the environment before it is read (``--python``, ``--path``); one entry each."""
        self._cache_dir = cache_dir
        self._target = target
        self._digested: tuple[Environment, str | None] | None = None

    def present(self) -> bool:
        """Whether an entry is there to be tried (a cheap guess, before the environment is read)."""
        return os.path.isfile(store.entry_path(self._cache_dir, self._target, ".deps"))

    def get(self, env: Environment) -> Judgement | None:
        """The judgement kept for exactly this environment as read, else None."""
        memo = self._memo(env)
        return None if memo is None else _judgement(memo.get())

    def keep(self, env: Environment, judgement: Judgement) -> bool:
        """Write ``judgement``, made of ``env``; False if it could not be written or ``env`` cannot be digested."""
        memo = self._memo(env)
        return memo is not None and memo.keep(None, _plain(judgement))

    def _memo(self, env: Environment) -> store.Memo | None:
        """The memo of ``env``'s :func:`inputs`, by their digest (None where marshal refuses one of them)."""
        if self._digested is None or self._digested[0] is not env:
            try:
                digest: str | None = hashlib.sha256(marshal.dumps(inputs(env), 2)).hexdigest()  # type: ignore[arg-type]
            except ValueError:  # a str subclass or another type marshal does not write: never kept
                digest = None
            self._digested = (env, digest)
        digest = self._digested[1]
        return None if digest is None else store.Memo(self._cache_dir, self._target, "deps", _VERSION, digest)


def memo_for(cache_dir: str | None, python: str | None, paths: tuple[str, ...]) -> DepsMemo | None:
    """The memo of the target ``--python``/``--path`` name (neither: this interpreter); None without a cache."""
    if cache_dir is None:
        return None
    return DepsMemo(cache_dir, "\0".join(("deps", python or sys.executable, *paths)))


def inputs(env: Environment) -> tuple[object, ...]:
    """Everything the kept judgement depends on besides the code, as plain data (see the module's docstring)."""
    return (
        _packaging_version(),
        env.python,
        env.paths,
        env.prefixes,
        env.markers,
        env.tags,
        tuple(
            (
                d.path,
                d.location,
                d.name,
                d.version,
                d.active,
                d.installer,
                d.wheel_tags,
                None
                if d.metadata is None
                else (
                    d.metadata.name,
                    d.metadata.version,
                    d.metadata.requires_dist,
                    d.metadata.requires_python,
                    d.metadata.provides_extra,
                ),
                tuple((p.code.value, p.path, p.message) for p in d.problems),
            )
            for d in env.distributions
        ),
    )


def _packaging_version() -> str:
    """The version of the packaging that judges: another one may parse or evaluate differently."""
    import packaging  # its __init__ alone: a few names, no parser

    return str(packaging.__version__)


def _plain(judgement: Judgement) -> tuple[object, ...]:
    dependencies, compatibility = judgement
    return (
        tuple(
            (
                c.dist,
                c.version,
                c.requirement,
                c.name,
                c.wanted,
                c.kind.value,
                c.installed,
                c.via_extra,
                c.requested_by,
            )
            for c in dependencies.conflicts
        ),
        tuple(_plain_finding(f) for f in dependencies.problems),
        dependencies.distributions,
        dependencies.requirements,
        tuple(_plain_finding(f) for f in compatibility.findings),
        compatibility.python_version,
        compatibility.tags_known,
    )


def _plain_finding(finding: CompatibilityFinding) -> tuple[object, ...]:
    return (finding.code.value, finding.dist, finding.version, finding.message, finding.expected, finding.found)


def _judgement(kept: object) -> Judgement | None:
    """The judgement :func:`_plain` wrote, or None where ``kept`` is not of its shape."""
    if type(kept) is not tuple or len(kept) != 7:
        return None
    conflicts, problems, distributions, requirements, findings, python_version, tags_known = kept
    if (
        type(conflicts) is not tuple
        or type(distributions) is not int
        or type(requirements) is not int
        or type(tags_known) is not bool
        or not _optional_str(python_version)
    ):
        return None
    built_problems = _findings(problems)
    built_findings = _findings(findings)
    if built_problems is None or built_findings is None:
        return None
    built: list[DependencyConflict] = []
    for row in conflicts:
        if type(row) is not tuple or len(row) != 9:
            return None
        dist, version, requirement, name, wanted, kind, installed, via_extra, requested_by = row
        if (
            not all(type(v) is str for v in (dist, version, requirement, name, wanted, kind))
            or not _optional_str(installed)
            or not _optional_str(via_extra)
            or type(requested_by) is not tuple
            or not all(type(v) is str for v in requested_by)
            or kind not in _KINDS
        ):
            return None
        built.append(
            DependencyConflict(
                dist=dist,
                version=version,
                requirement=requirement,
                name=name,
                wanted=wanted,
                kind=_KINDS[kind],
                installed=installed,
                via_extra=via_extra,
                requested_by=requested_by,
            )
        )
    return (
        DependencyReport(
            conflicts=tuple(built), problems=built_problems, distributions=distributions, requirements=requirements
        ),
        CompatibilityReport(built_findings, python_version, tags_known),
    )


_KINDS = {kind.value: kind for kind in ConflictKind}
_CODES = {code.value: code for code in Code}


def _findings(rows: object) -> tuple[CompatibilityFinding, ...] | None:
    if type(rows) is not tuple:
        return None
    built = []
    for row in rows:
        if type(row) is not tuple or len(row) != 6:
            return None
        code, dist, version, message, expected, found = row
        if (
            not all(type(v) is str for v in (code, dist, version, message))
            or not _optional_str(expected)
            or not _optional_str(found)
            or code not in _CODES
        ):
            return None
        built.append(
            CompatibilityFinding(
                code=_CODES[code], dist=dist, version=version, message=message, expected=expected, found=found
            )
        )
    return tuple(built)


def _optional_str(value: object) -> bool:
    return value is None or type(value) is str

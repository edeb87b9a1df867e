"""The native section's verdict as data: findings with their subjects, where each library comes from, counts.

Apart from the judge (:mod:`wheeldoctor.judge.native`), so that a warm check, which takes
the verdict from its memo, imports neither the judge nor the scan's data model.
"""

from __future__ import annotations

from dataclasses import dataclass

from wheeldoctor.model.findings import Code, Finding

#: Codes that fail a run unless accepted; WD094 fails only with ``--strict``, WD091 never.
FAILING_CODES = frozenset({Code.LIBRARY_UNRESOLVED, Code.CUDA_MAJORS_MIXED, Code.CUDA_BUILDS_MIXED})


@dataclass(frozen=True, slots=True, kw_only=True)
class NativeFinding:
    """One finding of the native section, with the subject accept rules and baselines name.

    The subject is the distribution that installed the object (WD090, WD091, WD094), the
    library (``libcudart``: WD092) or the project (``nvidia-cuda-runtime``: WD093).
    """

    subject: str
    version: str | None
    site_dir: str | None
    finding: Finding


@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    """One library the environment's objects need, where it comes from, and how many objects need it."""

    provider: str
    """A :class:`~wheeldoctor.model.native.Provider` value, or ``driver`` (found nowhere, the driver's)."""
    library: str
    path: str | None
    owner: str | None
    needed_by: int


@dataclass(frozen=True, slots=True, kw_only=True)
class NativeAudit:
    """The native section of a check: what was read, what it means, and what each library is taken from.

    It holds counts of the scan, not the scan: what a report shows, and what is kept for a
    warm check (:mod:`wheeldoctor.engine.native_memo`).
    """

    findings: tuple[NativeFinding, ...]
    sources: tuple[Source, ...]
    machine: str | None
    """The interpreter's (``x86_64``); None when it could not be read."""
    ld_so_cache: str | None
    ld_so_cache_problem: str | None = None
    interpreter_rpath: tuple[str, ...] = ()
    objects: int = 0
    """Shared objects of the interpreter's machine."""
    extension_modules: int = 0
    loaded_on_import: int = 0
    foreign: int = 0
    """Objects for another class or machine: not judged."""
    strict: bool = False

    @property
    def failing(self) -> tuple[NativeFinding, ...]:
        """The findings that fail the run: not accepted, of a failing code (WD094 too with ``strict``)."""
        codes = FAILING_CODES | {Code.SHARED_OBJECT_UNREADABLE} if self.strict else FAILING_CODES
        return tuple(f for f in self.findings if f.finding.accepted is None and f.finding.code in codes)

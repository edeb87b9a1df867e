"""Requirements against what is installed: ``pip check``'s rules first, then where pip is silent.

Pure: takes one environment's requirement model
(:class:`~wheeldoctor.judge.requirements.Requirements`, which deps, the requirement graph,
preflight and fix share), returns data; packaging parses every name,
version, specifier and marker. The base pass is pip's ``check_package_set`` exactly: for each active
distribution, every Requires-Dist whose marker holds for the target interpreter with
``extra == ""``; missing when no distribution of that name is active, incompatible when
``specifier.contains(version, prereleases=True)`` says no. Markers are evaluated with the
target's environment (``Environment.markers``), never ours.

Then further than pip: a requirement such as ``b[x]`` makes ``b``'s ``extra == "x"``
requirements needed too (as pip's resolver installs them), followed transitively; their
conflicts carry ``via_extra``, so the base set stays comparable with ``pip check``.
A requirement that does not parse, or a marker that cannot be evaluated, is a finding.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from wheeldoctor.judge.requirements import EXTRA_PAIRS, Requirements, Requiring, requirement_finding
from wheeldoctor.model.findings import Code

if TYPE_CHECKING:
    from packaging.requirements import Requirement
    from packaging.utils import NormalizedName

    from wheeldoctor.judge.compat import CompatibilityFinding


class ConflictKind(str, Enum):
    """The two ways a requirement fails; the JSON ``kind`` field."""

    MISSING = "missing"
    INCOMPATIBLE = "incompatible"


@dataclass(frozen=True, slots=True, kw_only=True)
class DependencyConflict:
    """One requirement of one active distribution that what is installed does not satisfy."""

    dist: str
    version: str
    requirement: str
    """The requirement as packaging writes it (``name[extras]specifier; marker``)."""
    name: str
    """Canonical name of the required project."""
    wanted: str
    """``name[extras]specifier``: what would satisfy it, without the marker."""
    kind: ConflictKind
    installed: str | None
    """The active version of ``name``; None when it is not installed."""
    via_extra: str | None = None
    """Set when the requirement is needed only because someone asked for ``dist[via_extra]``:
    ``pip check`` does not look at these."""
    requested_by: tuple[str, ...] = ()
    """Who asked for ``dist[via_extra]``."""

    @property
    def code(self) -> Code:
        """WD040 for missing, WD041 for incompatible."""
        return Code.DEPENDENCY_MISSING if self.kind is ConflictKind.MISSING else Code.DEPENDENCY_INCOMPATIBLE

    @property
    def found(self) -> str:
        """What is installed instead, side by side with ``wanted``."""
        return f"{self.name} {self.installed}" if self.installed is not None else "nothing"

    @property
    def message(self) -> str:
        """One line: what is required, and why (for an extra, on whose behalf)."""
        why = ""
        if self.via_extra is not None:
            who = ", ".join(self.requested_by)
            why = f" for extra {self.via_extra!r} (asked for by {who})"
        if self.kind is ConflictKind.MISSING:
            return f"requires {self.requirement}{why}, which is not installed"
        return f"requires {self.requirement}{why}, but {self.name} {self.installed} is installed"


@dataclass(frozen=True, slots=True, kw_only=True)
class DependencyReport:
    """Every conflict, every requirement that could not be judged, and how much was looked at."""

    conflicts: tuple[DependencyConflict, ...]
    problems: tuple[CompatibilityFinding, ...]
    distributions: int
    requirements: int

    def pip_comparable(self) -> tuple[DependencyConflict, ...]:
        """The conflicts ``pip check`` reports too: those not reached through an extra."""
        return tuple(c for c in self.conflicts if c.via_extra is None)


class _Judge:
    """pip's view of markers: one that cannot be evaluated is a finding, and never holds after."""

    def __init__(self, requirements: Requirements) -> None:
        self._requirements = requirements
        # Requirements are shared between distributions with the same text (parse_requirement):
        # a verdict is the text's, a broken marker is reported for each distribution that has it.
        self._broken: set[tuple[str, int]] = set()
        self.problems: list[CompatibilityFinding] = []

    def applies(self, owner: Requiring, req: Requirement, extra: str) -> bool:
        """Whether ``req``'s marker holds for the target with ``extra``; unevaluable is a finding."""
        if req.marker is None:
            return True
        broken = (owner.dist.name, id(req))
        if broken in self._broken:
            return False
        holds = self._requirements.marker(req, extra)
        if isinstance(holds, str):
            self._broken.add(broken)
            self.problems.append(requirement_finding(owner.dist, str(req), f"marker cannot be evaluated ({holds})"))
            return False
        return holds

    def conflict(self, req: Requirement) -> tuple[ConflictKind, str | None, NormalizedName] | None:
        """(kind, installed version, required name) when ``req`` is not satisfied; None when it is."""
        from packaging.utils import canonicalize_name

        name = canonicalize_name(req.name)
        target = self._requirements.get(name)
        if target is None:
            return ConflictKind.MISSING, None, name
        if target.version is None:
            # Not PEP 440: no specifier can match it (pip's LegacyVersion never did either).
            return (ConflictKind.INCOMPATIBLE, target.dist.version, name) if len(req.specifier) else None
        if req.specifier.contains(target.version, prereleases=True):
            return None
        return ConflictKind.INCOMPATIBLE, target.dist.version, name


def check_dependencies(requirements: Requirements) -> DependencyReport:
    """Judge every requirement of every active distribution against the active ones."""
    from packaging.utils import canonicalize_name

    installed = {name: r for name in requirements.names() if (r := requirements.get(name)) is not None}
    problems = [finding for r in installed.values() for finding in r.unparsed]
    judge = _Judge(requirements)
    found: dict[
        tuple[str, str, str | None], tuple[DependencyConflict, tuple[NormalizedName, NormalizedName] | None]
    ] = {}
    wanted_extras: dict[tuple[NormalizedName, NormalizedName], set[str]] = {}
    queue: list[tuple[NormalizedName, NormalizedName]] = []

    def ask_extras(req: Requirement, by: str) -> None:
        for extra in req.extras:
            key = (canonicalize_name(req.name), canonicalize_name(extra))
            if key not in wanted_extras:
                wanted_extras[key] = set()
                queue.append(key)
            wanted_extras[key].add(by)

    def record(owner: Requiring, req: Requirement, extra_key: tuple[NormalizedName, NormalizedName] | None) -> None:
        try:
            verdict = judge.conflict(req)
        except ValueError:  # a version of more than int()'s 4,300 digits: compared, packaging refuses it
            judge.problems.append(requirement_finding(owner.dist, str(req), "its version specifier cannot be compared"))
            return
        if verdict is None:
            return
        kind, version, name = verdict
        key = (owner.dist.name, str(req), extra_key[1] if extra_key else None)
        found.setdefault(key, (_conflict(owner, req, kind, version, name, extra_key), extra_key))

    # pip check's pass: base requirements only (marker true with extra == "").
    for owner in installed.values():
        for req in owner.requirements:
            if judge.applies(owner, req, ""):
                record(owner, req, None)
                ask_extras(req, owner.dist.name)
    # Beyond pip: what the extras that were asked for pull in, transitively; at most EXTRA_PAIRS looked at.
    pairs = 0
    while queue:
        name, extra = queue.pop()
        asked = requirements.get(name)
        if asked is None:
            continue  # its absence is already a conflict of whoever asked
        candidates = requirements.needing(asked.requirements, extra)
        pairs += len(candidates)
        if pairs > EXTRA_PAIRS:
            why = f"not judged: its extras' markers ask for more than {EXTRA_PAIRS} requirement and extra pairs"
            judge.problems.append(requirement_finding(asked.dist, f"{name}[{extra}]", why))
            break
        for req in candidates:
            if not judge.applies(asked, req, "") and judge.applies(asked, req, extra):
                record(asked, req, (name, extra))
                ask_extras(req, name)

    conflicts = [c if key is None else _with_requesters(c, wanted_extras[key]) for c, key in found.values()]
    conflicts.sort(key=lambda c: (c.dist, c.via_extra or "", c.requirement))
    problems.extend(judge.problems)
    problems.sort(key=lambda f: (f.dist, f.code.value, f.found or ""))
    return DependencyReport(
        conflicts=tuple(conflicts),
        problems=tuple(problems),
        distributions=len(installed),
        requirements=sum(len(i.requirements) for i in installed.values()),
    )


def _conflict(
    owner: Requiring,
    req: Requirement,
    kind: ConflictKind,
    installed: str | None,
    name: str,
    extra_key: tuple[str, str] | None,
) -> DependencyConflict:
    extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
    return DependencyConflict(
        dist=owner.dist.name,
        version=owner.dist.version,
        requirement=str(req),
        name=name,
        wanted=f"{req.name}{extras}{req.specifier}",
        kind=kind,
        installed=installed,
        via_extra=extra_key[1] if extra_key else None,
    )


def _with_requesters(conflict: DependencyConflict, requesters: set[str]) -> DependencyConflict:
    from dataclasses import replace

    return replace(conflict, requested_by=tuple(sorted(requesters)))

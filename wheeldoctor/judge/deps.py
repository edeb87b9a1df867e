"""Requirements against what is installed: ``pip check``'s rules first, then where pip is silent.

Pure: takes one environment's requirement model (:class:`Requirements`, which deps, the
requirement graph, preflight and fix share), returns data; packaging parses every name,
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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from wheeldoctor.formats.requirement import parse_requirement
from wheeldoctor.model.environment import Environment, InstalledDistribution
from wheeldoctor.model.findings import Code

if TYPE_CHECKING:
    from packaging.requirements import Requirement
    from packaging.utils import NormalizedName
    from packaging.version import Version

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


@dataclass(frozen=True, slots=True, kw_only=True)
class Requiring:
    """One active distribution's side of the requirements: its version and parsed Requires-Dist."""

    dist: InstalledDistribution
    version: Version | None
    """None when the version is not PEP 440 (compat reports it)."""
    requirements: tuple[Requirement, ...]
    unparsed: tuple[CompatibilityFinding, ...]
    """A finding for each Requires-Dist line that does not parse."""


class Requirements:
    """One environment's requirement model: deps, :class:`RequirementGraph`, preflight and fix share it.

    Each active distribution's Requires-Dist is parsed when first asked for, and each
    marker is evaluated for the target (``markers``) once per extra, whoever asks.
    """

    def __init__(self, dists: Mapping[str, InstalledDistribution], markers: Mapping[str, str]) -> None:
        """``dists``: active distributions with readable metadata, by canonical name."""
        self._dists = dists
        self.markers = dict(markers)
        self._parsed: dict[str, Requiring] = {}
        self._evaluated: dict[tuple[int, str], bool | str] = {}

    @classmethod
    def of(cls, env: Environment) -> Requirements:
        """The model of ``env``'s active distributions, markers as its interpreter sees them."""
        # No Name/Version: invisible to pip and importlib.metadata (compat reports it).
        return cls({d.name: d for d in env.active() if d.metadata is not None}, dict(env.markers))

    def names(self) -> list[str]:
        """The distributions' names, in the environment's order."""
        return list(self._dists)

    def get(self, name: str) -> Requiring | None:
        """Distribution ``name``'s side, parsed on first use; None when it is not here."""
        found = self._parsed.get(name)
        if found is None:
            dist = self._dists.get(name)
            if dist is None:
                return None
            found = self._parsed[name] = _requiring(dist)
        return found

    def marker(self, req: Requirement, extra: str) -> bool | str:
        """Whether ``req``'s marker holds for the target with ``extra``, or why it cannot be evaluated."""
        assert req.marker is not None
        key = (id(req), extra)  # parse_requirement is memoised: one object per text, a verdict per text
        found = self._evaluated.get(key)
        if found is None:
            try:
                found = bool(req.marker.evaluate({**self.markers, "extra": extra}))
            except ValueError as e:  # UndefinedComparison, UndefinedEnvironmentName, InvalidVersion
                found = str(e)
            self._evaluated[key] = found
        return found


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
            self.problems.append(_invalid(owner.dist, str(req), f"marker cannot be evaluated ({holds})"))
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
        verdict = judge.conflict(req)
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
    # Beyond pip: what the extras that were asked for pull in, transitively.
    while queue:
        name, extra = queue.pop()
        asked = requirements.get(name)
        if asked is None:
            continue  # its absence is already a conflict of whoever asked
        for req in asked.requirements:
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


def _requiring(dist: InstalledDistribution) -> Requiring:
    """``dist``'s version and Requires-Dist, parsed; what does not parse, as findings."""
    from packaging.requirements import InvalidRequirement
    from packaging.version import InvalidVersion, Version

    assert dist.metadata is not None
    try:
        version: Version | None = Version(dist.version)
    except InvalidVersion:
        version = None  # compat reports it
    requirements: list[Requirement] = []
    unparsed: list[CompatibilityFinding] = []
    for line in dist.metadata.requires_dist:
        parsed = parse_requirement(line)
        if isinstance(parsed, InvalidRequirement):
            # pip drops the whole distribution here (and then calls it missing); we keep
            # it installed and judge its other requirements.
            unparsed.append(_invalid(dist, line, f"Requires-Dist does not parse ({_first_line(parsed)})"))
        else:
            requirements.append(parsed)
    return Requiring(dist=dist, version=version, requirements=tuple(requirements), unparsed=tuple(unparsed))


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


def _invalid(dist: InstalledDistribution, text: str, message: str) -> CompatibilityFinding:
    from wheeldoctor.judge.compat import CompatibilityFinding  # only where a requirement does not parse

    return CompatibilityFinding(
        code=Code.REQUIREMENT_INVALID, dist=dist.name, version=dist.version, message=message, found=text
    )


def _first_line(error: Exception) -> str:
    # packaging's parse errors draw a caret diagram on later lines; findings are one line.
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


class RequirementGraph:
    """Who requires whom, directly or through others, by canonical name; built from Requires-Dist.

    The walk is the one :func:`check_dependencies` makes: a requirement counts when its
    marker holds for the target (``extra == ""``), and ``b[x]`` brings in ``b``'s
    ``extra == "x"`` requirements too, transitively. Names only: whether versions fit
    is ``deps``'s question. A requirement or marker that cannot be judged is left out
    (``deps`` reports it). Closures are computed on first use, per name.
    """

    def __init__(self, requirements: Requirements, added: Mapping[str, Sequence[str]] | None = None) -> None:
        """``added``: Requires-Dist by canonical name, in place of ``requirements``' own (wheels not installed yet)."""
        self._requirements = requirements
        self._added = added or {}
        self._parsed: dict[str, tuple[Requirement, ...]] = {}
        self._closures: dict[str, frozenset[str]] = {}

    @classmethod
    def of(cls, env: Environment) -> RequirementGraph:
        """The graph of an environment's active distributions, markers as its interpreter sees them."""
        return cls(Requirements.of(env))

    @classmethod
    def of_texts(cls, requires_dist: Mapping[str, Sequence[str]], markers: Mapping[str, str]) -> RequirementGraph:
        """The graph of Requires-Dist texts alone, by canonical name, with the target's ``markers``."""
        return cls(Requirements({}, markers), requires_dist)

    def requires(self, dist: str, other: str) -> bool:
        """Whether ``dist`` requires ``other``, directly or through other requirements."""
        return other in self.closure(dist)

    def closure(self, name: str) -> frozenset[str]:
        """Every name ``name`` requires, directly or not (itself only through a cycle)."""
        done = self._closures.get(name)
        if done is None:
            done = self._closures[name] = self._walk(name)
        return done

    def _walk(self, name: str) -> frozenset[str]:
        from packaging.utils import canonicalize_name

        seen: set[tuple[str, str]] = set()
        queue = [(name, "")]
        names: set[str] = set()
        while queue:
            node, extra = queue.pop()
            for req in self._requirements_of(node):
                if not self._holds(req, extra):
                    continue
                wanted = canonicalize_name(req.name)
                names.add(wanted)
                for key in ((wanted, ""), *((wanted, canonicalize_name(e)) for e in req.extras)):
                    if key not in seen:
                        seen.add(key)
                        queue.append(key)
        return frozenset(names)

    def _holds(self, req: Requirement, extra: str) -> bool:
        """Base requirements for ``extra == ""``; for an extra, those that hold only with it."""
        if req.marker is None:
            return extra == ""
        base = self._requirements.marker(req, "")  # unevaluable (a str): deps reports it
        if extra == "":
            return base is True
        return base is False and self._requirements.marker(req, extra) is True

    def _requirements_of(self, name: str) -> tuple[Requirement, ...]:
        texts = self._added.get(name)
        if texts is None:
            installed = self._requirements.get(name)
            return installed.requirements if installed is not None else ()
        parsed = self._parsed.get(name)
        if parsed is None:
            from packaging.requirements import Requirement

            found = [r for text in texts if isinstance(r := parse_requirement(text), Requirement)]
            parsed = self._parsed[name] = tuple(found)  # what does not parse, deps reports
        return parsed

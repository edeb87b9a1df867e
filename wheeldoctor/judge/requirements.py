"""One environment's requirement model: each Requires-Dist parsed once, each marker evaluated for the target.

:class:`Requirements` is what ``deps`` (:mod:`wheeldoctor.judge.deps`), the requirement
graph, preflight and fix share; :class:`RequirementGraph` says who requires whom, by
name. Pure; packaging parses every name, version, requirement and marker.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wheeldoctor.formats.requirement import parse_requirement
from wheeldoctor.model.environment import Environment, InstalledDistribution
from wheeldoctor.model.findings import Code

if TYPE_CHECKING:
    from packaging.requirements import Requirement
    from packaging.version import Version

    from wheeldoctor.judge.compat import CompatibilityFinding


@dataclass(frozen=True, slots=True, kw_only=True)
class Requiring:
    """One active distribution's side of the requirements: its version and parsed Requires-Dist."""

    dist: InstalledDistribution
    version: Version | None
    """None when the version is not PEP 440 (compat reports it)."""
    requirements: tuple[Requirement, ...]
    unparsed: tuple[CompatibilityFinding, ...]
    """A finding for each Requires-Dist line that does not parse."""


#: Requirements looked at for the extras asked for (beyond pip's pass), per judge or graph. Real environments
#: need a few hundred (markers name their extra, and the index finds it); a hostile METADATA cannot make the
#: walk quadratic past this.
EXTRA_PAIRS = 100_000
#: ``extra == "x"`` or ``"x" != extra`` as packaging writes a marker (values quoted, extras normalized).
_EXTRA_TEST = re.compile(r"""\bextra\s*(?:==|!=)\s*("[^"]*"|'[^']*')|("[^"]*"|'[^']*')\s*(?:==|!=)\s*extra\b""")
_QUOTED = re.compile(r""""[^"]*"|'[^']*'""")
_EXTRA_WORD = re.compile(r"\bextra\b")
#: An extra no marker names (one that does is judged by hand): what "any other extra" evaluates to.
_OTHER_EXTRA = "wheeldoctor-any-other-extra"


@dataclass(slots=True)
class _ExtraIndex:
    """Of one tuple of requirements, those an extra may add: by the extra their marker names, or for any extra."""

    requirements: tuple[Requirement, ...]
    """Kept: the index is found by this tuple's ``id``."""
    named: dict[str, list[int]] = field(default_factory=dict)
    anywhere: list[int] = field(default_factory=list)


def _extras_named(text: str) -> frozenset[str] | None:
    """The extras a marker compares ``extra`` with by ``==``/``!=``; None when it uses ``extra`` any other way."""
    from packaging.utils import canonicalize_name

    named = {canonicalize_name((found[1] or found[2])[1:-1]) for found in _EXTRA_TEST.finditer(text)}
    if _EXTRA_WORD.search(_QUOTED.sub(" ", _EXTRA_TEST.sub(" ", text))):
        return None
    return frozenset(named)


class Requirements:
    """One environment's requirement model: deps, :class:`RequirementGraph`, preflight and fix share it.

    Each active distribution's Requires-Dist is parsed when first asked for, and each
    marker is evaluated for the target (``markers``) once per extra, whoever asks. Which
    requirements an extra can add is found through an index of the extras each marker
    names (:meth:`needing`), so that asking for many extras of a distribution with many
    requirements costs their sum, not their product.
    """

    def __init__(self, dists: Mapping[str, InstalledDistribution], markers: Mapping[str, str]) -> None:
        """``dists``: active distributions with readable metadata, by canonical name."""
        self._dists = dists
        self.markers = dict(markers)
        self._parsed: dict[str, Requiring] = {}
        self._evaluated: dict[tuple[int, str], bool | str] = {}
        self._indexes: dict[int, _ExtraIndex] = {}

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
            except ValueError as e:  # UndefinedComparison, InvalidVersion
                found = str(e)
            except KeyError as e:  # UndefinedEnvironmentName: ``"x" in extras`` names a lock's variable
                found = f"no {e.args[0] if e.args else e} in METADATA's markers"
            self._evaluated[key] = found
        return found

    def needing(self, requirements: tuple[Requirement, ...], extra: str) -> list[Requirement]:
        """Of ``requirements``, those whose marker may hold with ``extra`` though it does not without one.

        A superset of what asking for ``extra`` adds (the caller evaluates each); in their order.
        Markers that name ``extra`` only in ``extra == "x"`` or ``!=`` tests are indexed by
        the names; one that holds for an extra it does not name, or uses ``extra`` another
        way, is a candidate for every extra.
        """
        index = self._indexes.get(id(requirements))
        if index is None:
            index = self._indexes[id(requirements)] = self._index(requirements)
        positions = index.named.get(extra, [])
        if index.anywhere:
            positions = sorted({*positions, *index.anywhere})
        return [requirements[i] for i in positions]

    def _index(self, requirements: tuple[Requirement, ...]) -> _ExtraIndex:
        index = _ExtraIndex(requirements)
        for i, req in enumerate(requirements):
            if req.marker is None or self.marker(req, "") is not False:
                continue  # a base requirement, or a marker that cannot be evaluated (never holds after)
            named = _extras_named(str(req.marker))
            if named is None or _OTHER_EXTRA in named or self.marker(req, _OTHER_EXTRA) is not False:
                index.anywhere.append(i)
            else:
                for extra in named:
                    index.named.setdefault(extra, []).append(i)
        return index


def _requiring(dist: InstalledDistribution) -> Requiring:
    """``dist``'s version and Requires-Dist, parsed; what does not parse, as findings."""
    from packaging.requirements import InvalidRequirement
    from packaging.version import Version

    assert dist.metadata is not None
    try:
        version: Version | None = Version(dist.version)
    except ValueError:  # InvalidVersion, or a number past int()'s 4,300 digits
        version = None  # compat reports it
    requirements: list[Requirement] = []
    unparsed: list[CompatibilityFinding] = []
    for line in dist.metadata.requires_dist:
        parsed = parse_requirement(line)
        if isinstance(parsed, InvalidRequirement):
            # pip drops the whole distribution here (and then calls it missing); we keep
            # it installed and judge its other requirements.
            unparsed.append(requirement_finding(dist, line, f"Requires-Dist does not parse ({_first_line(parsed)})"))
        else:
            requirements.append(parsed)
    return Requiring(dist=dist, version=version, requirements=tuple(requirements), unparsed=tuple(unparsed))


def requirement_finding(dist: InstalledDistribution, text: str, message: str) -> CompatibilityFinding:
    from wheeldoctor.judge.compat import CompatibilityFinding  # only where a requirement does not parse

    return CompatibilityFinding(
        code=Code.REQUIREMENT_INVALID, dist=dist.name, version=dist.version, message=message, found=text
    )


def _first_line(error: Exception) -> str:
    # packaging's parse errors draw a caret diagram on later lines; findings are one line.
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


class RequirementGraph:
    """Who requires whom, directly or through others, by canonical name; built from Requires-Dist.

    The walk is the one :func:`wheeldoctor.judge.deps.check_dependencies` makes: a requirement counts when its
    marker holds for the target (``extra == ""``), and ``b[x]`` brings in ``b``'s
    ``extra == "x"`` requirements too, transitively. Names only: whether versions fit
    is ``deps``'s question. A requirement or marker that cannot be judged is left out
    (``deps`` reports it), as is what lies past :data:`EXTRA_PAIRS` requirements looked at
    for extras. Closures are computed on first use, per name.
    """

    def __init__(self, requirements: Requirements, added: Mapping[str, Sequence[str]] | None = None) -> None:
        """``added``: Requires-Dist by canonical name, in place of ``requirements``' own (wheels not installed yet)."""
        self._requirements = requirements
        self._added = added or {}
        self._parsed: dict[str, tuple[Requirement, ...]] = {}
        self._closures: dict[str, frozenset[str]] = {}
        self._pairs = 0

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

    def direct(self, name: str, extras: Iterable[str] = ()) -> dict[str, frozenset[str]]:
        """What ``name`` requires itself, by canonical name, with the extras it asks of each.

        Its base requirements, and those of its ``extras`` (as another distribution's ``name[x]``
        asks for them), whose markers hold for the target.
        """
        from packaging.utils import canonicalize_name

        found: dict[str, set[str]] = {}
        for extra in ("", *extras):
            for req in self._requirements_of(name):
                if self._holds(req, extra):
                    asked = found.setdefault(canonicalize_name(req.name), set())
                    asked.update(canonicalize_name(e) for e in req.extras)
        return {wanted: frozenset(asked) for wanted, asked in found.items()}

    def _walk(self, name: str) -> frozenset[str]:
        from packaging.utils import canonicalize_name

        seen: set[tuple[str, str]] = set()
        queue = [(name, "")]
        names: set[str] = set()
        while queue:
            node, extra = queue.pop()
            found = self._requirements_of(node)
            if extra:
                found = tuple(self._requirements.needing(found, extra))
                self._pairs += len(found)
                if self._pairs > EXTRA_PAIRS:
                    break  # what is left is not judged here (deps says so)
            for req in found:
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

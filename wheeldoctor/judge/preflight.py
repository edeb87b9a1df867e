"""``wheels``: wheel files checked against each other and against an environment, before install.

Pure over :class:`~wheeldoctor.formats.wheelfile.WheelFile` values and an optional
:class:`~wheeldoctor.where.environment.Environment`: nothing is installed or extracted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wheeldoctor.formats.wheelfile import Member, WheelFile
from wheeldoctor.judge.claims import Claim, resolve
from wheeldoctor.judge.clash import Clash, Relation
from wheeldoctor.judge.hooks import HookAudit
from wheeldoctor.judge.requirements import RequirementGraph, Requirements
from wheeldoctor.model.environment import Environment
from wheeldoctor.model.findings import BREAKING_KINDS
from wheeldoctor.model.sitedirs import dir_prefix, install_target, is_site_packages, root_for, scripts_dir

if TYPE_CHECKING:
    from packaging.utils import NormalizedName

    from wheeldoctor.formats.lock_fetched import FetchSummary
    from wheeldoctor.judge.policy import Policy


#: The hooks of wheels that would install none.
NO_HOOKS = HookAudit(())


@dataclass(frozen=True, slots=True, kw_only=True)
class Overwrite:
    """An installed file that installing a wheel would replace."""

    wheel: str
    path: str
    location: str
    owners: tuple[str, ...]
    """Installed distributions that record this path; empty for a file nobody records."""
    identical: bool
    """Every owner records the bytes the wheel ships: replacing it changes nothing."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WheelPair:
    """Two wheels that ship some of the same paths with different bytes, and how they are related."""

    first: str
    second: str
    differing: int
    relation: Relation
    overlay: str | None
    """The one that requires the other (install it last); None for unrelated wheels."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PreflightResult:
    """What installing these wheels together (into that environment) would do."""

    wheels: tuple[WheelFile, ...]
    clashes: tuple[Clash, ...]
    overwrites: tuple[Overwrite, ...]
    environment: Environment | None
    pairs: tuple[WheelPair, ...] = ()
    fetched: FetchSummary | None = None
    """For ``wheels --lock``: how the locked wheels' RECORDs were had; None for wheel files."""
    hooks: HookAudit = NO_HOOKS
    """The start-up hooks the wheels would install, judged (:mod:`wheeldoctor.judge.wheel_hooks`)."""
    config: str | None = None
    """The config file whose known hooks and accept rules judged the hooks; None when none was read."""
    narrowed: tuple[str, ...] = ()
    """What that config set that narrows the run (:func:`wheeldoctor.judge.policy.narrowed`)."""

    @property
    def healthy(self) -> bool:
        """No broken wheel, no differing clash, no other distribution's different bytes overwritten, no failing hook."""
        return (
            not any(f.kind in BREAKING_KINDS for w in self.wheels for f in w.findings)
            and all(c.identical for c in self.clashes)
            and all(o.identical for o in self.overwrites)
            and not self.hooks.failing
        )


def _same(rows: Sequence[Member]) -> bool:
    return len({(m.row.algorithm, m.row.digest, m.row.size) for m in rows}) == 1


def wheel_clashes(wheels: Sequence[WheelFile]) -> list[Clash]:
    """Every install path that two or more of the wheels ship."""
    shipped: dict[str, list[tuple[str, Member]]] = {}
    for wheel in wheels:
        for member in wheel.members:
            shipped.setdefault(member.target, []).append((wheel.name, member))
    clashes = []
    for target, claims in shipped.items():
        names = tuple(dict.fromkeys(name for name, _ in claims))
        if len(names) > 1:
            clashes.append(
                Clash(
                    path=target, location=target, claimants=names, identical=_same([m for _, m in claims]), on_disk=None
                )
            )
    clashes.sort(key=lambda c: (c.claimants, c.path))
    return clashes


def site_directory(env: Environment) -> str | None:
    """Where the environment installs pure Python files: its main site-packages."""
    candidates = [p for p in env.paths if is_site_packages(p)]
    own = [p for p in candidates if env.prefixes and p.startswith(dir_prefix(env.prefixes[0]))]
    ranked = own or candidates or list(env.paths)
    return ranked[0] if ranked else None


def overwrites(wheels: Sequence[WheelFile], env: Environment, exists: Callable[[str], bool]) -> list[Overwrite]:
    """Installed files each wheel would replace, and whose they are (its own name excluded).

    ``exists`` says whether something is at a path (``os.path.lexists``, given by the caller).
    """
    site = site_directory(env)
    if site is None:
        return []
    owners: dict[str, list[Claim]] = {}
    for dist in env.active():
        for claim in resolve(dist)[0]:
            owners.setdefault(claim.path, []).append(claim)
    scripts = scripts_dir(root_for(site, env.prefixes))
    found = []
    for wheel in wheels:
        for member in wheel.members:
            location = install_target(member.target, site, scripts)
            if location is None:
                continue
            claims = [c for c in owners.get(location, ()) if c.dist.name != wheel.name]
            if not claims and (location in owners or not exists(location)):
                continue  # only the wheel's own older version records it, or nothing is there
            row = member.row
            identical = bool(claims) and all(
                (c.row.algorithm, c.row.digest, c.row.size) == (row.algorithm, row.digest, row.size) for c in claims
            )
            names = tuple(dict.fromkeys(c.dist.name for c in claims))
            found.append(
                Overwrite(wheel=wheel.name, path=member.target, location=location, owners=names, identical=identical)
            )
    return found


def wheel_pairs(wheels: Sequence[WheelFile], clashes: Sequence[Clash], env: Environment | None) -> list[WheelPair]:
    """Each pair of wheels with differing shared paths, judged overlay or unrelated from Requires-Dist.

    The wheels' own Requires-Dist decide, with the environment's installed distributions
    filling in the chain (W requires M, installed, which requires L); markers are the
    environment's interpreter's, else this one's.
    """
    from itertools import combinations

    counts: dict[tuple[str, str], int] = {}
    for clash in clashes:
        if not clash.identical:
            for a, b in combinations(sorted(clash.claimants), 2):
                counts[(a, b)] = counts.get((a, b), 0) + 1
    if not counts:
        return []
    installed = Requirements.of(env) if env is not None else Requirements({}, _markers())
    graph = RequirementGraph(installed, {_canonical(w.name): w.requires_dist for w in wheels})
    pairs = []
    for (a, b), differing in sorted(counts.items()):
        ca, cb = _canonical(a), _canonical(b)
        a_needs, b_needs = graph.requires(ca, cb), graph.requires(cb, ca)
        overlay = a if a_needs and not b_needs else b if b_needs and not a_needs else None
        relation = Relation.OVERLAY if overlay is not None else Relation.UNRELATED
        pairs.append(WheelPair(first=a, second=b, differing=differing, relation=relation, overlay=overlay))
    return pairs


def wheels_hooks(wheels: Sequence[WheelFile], policy: Policy | None) -> HookAudit:
    """The start-up hooks ``wheels`` would install, judged, with the findings ``policy`` accepts marked."""
    from wheeldoctor.judge.wheel_hooks import wheel_hooks

    known = policy.config.known_hooks if policy is not None else ()
    found = HookAudit(tuple(h for w in wheels for h in wheel_hooks(w, known)))
    if policy is None or not found.findings:
        return found
    from wheeldoctor.judge.hook_policy import accept_startup
    from wheeldoctor.model.ownership import UnownedScan

    return accept_startup(found, UnownedScan(files=(), importable=(), scanned=0, site_dirs=()), policy)[0]


def _canonical(name: str) -> NormalizedName:
    from packaging.utils import canonicalize_name

    return canonicalize_name(name)


def _markers() -> dict[str, str]:
    from packaging.markers import default_environment

    return {key: str(value) for key, value in default_environment().items()}


def preflight(
    wheels: Sequence[WheelFile],
    env: Environment | None,
    exists: Callable[[str], bool] = lambda _: False,
    policy: Policy | None = None,
) -> PreflightResult:
    """Check wheels against each other and, if given, against an environment; judge the hooks they would install.

    ``policy``: the config's known hooks (tried before the shipped registry) and accept rules, for the hooks.
    """
    clashes = wheel_clashes(wheels)
    if policy is not None:
        from wheeldoctor.judge.policy import narrowed

    return PreflightResult(
        config=policy.config.source if policy is not None else None,
        narrowed=narrowed(policy) if policy is not None else (),
        hooks=wheels_hooks(wheels, policy),
        wheels=tuple(wheels),
        clashes=tuple(clashes),
        overwrites=tuple(overwrites(wheels, env, exists)) if env is not None else (),
        environment=env,
        pairs=tuple(wheel_pairs(wheels, clashes, env)),
    )

"""Paths claimed by several distributions: who ships what, and whose bytes are on disk.

Pure: takes the ownership map and file states of a verification pass, returns data.
A path every claimant records with the same hash is shared but harmless; one recorded
with different hashes is a clash, and only one claimant's bytes can be on disk.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from itertools import combinations
from typing import Protocol

from wheeldoctor.judge.claims import Claim, matches
from wheeldoctor.model.environment import InstalledDistribution
from wheeldoctor.model.files import FileState


@dataclass(frozen=True, slots=True, kw_only=True)
class Clash:
    """One real path that two or more distributions record."""

    path: str
    """As the first claimant's RECORD writes it."""
    location: str
    """The absolute path on disk."""
    claimants: tuple[str, ...]
    identical: bool
    """Every claimant records the same bytes: shared, not a problem."""
    on_disk: str | None
    """The first claimant whose recorded bytes are on disk; None when nobody's are."""


class Requires(Protocol):
    """Who requires whom (:class:`wheeldoctor.judge.requirements.RequirementGraph` is one)."""

    def requires(self, dist: str, other: str) -> bool:
        """Whether ``dist`` requires ``other``, directly or through other requirements."""


class Relation(str, Enum):
    """How two clashing distributions are related; the JSON ``relation`` field."""

    OVERLAY = "overlay"
    """One requires the other (directly or not) and is meant to lie on top of it."""
    UNRELATED = "unrelated"
    """Neither requires the other (or each requires the other): they are alternatives."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClashPair:
    """Two distributions that record different bytes for some of the same paths."""

    first: InstalledDistribution
    second: InstalledDistribution
    shared: int
    differing: int
    from_first: int
    from_second: int
    from_neither: int
    winner: InstalledDistribution
    """The one to reinstall last: the dependent of the two, else the one most on disk."""
    reason: str
    relation: Relation = Relation.UNRELATED
    """``overlay`` when exactly one of the two requires the other: then that one is ``winner``."""

    @property
    def overlay(self) -> InstalledDistribution | None:
        """The distribution on top (it requires the other) when the pair is an overlay, else None."""
        return self.winner if self.relation is Relation.OVERLAY else None

    @property
    def loser(self) -> InstalledDistribution:
        """The other one: whichever does not win keeps the winner's bytes in its paths."""
        return self.second if self.winner is self.first else self.first

    @property
    def settled(self) -> bool:
        """The winner already holds its own bytes in every differing path: nothing to repair."""
        held = self.from_first if self.winner is self.first else self.from_second
        return held == self.differing

    @property
    def broken(self) -> tuple[str, ...]:
        """Names of the members the pair leaves broken: those that do not hold their own bytes in every
        differing path, except the base a settled overlay lies on top of (it is overlaid, as meant)."""
        if self.relation is Relation.OVERLAY and self.settled:
            return ()
        return tuple(
            d.name for d, n in ((self.first, self.from_first), (self.second, self.from_second)) if n < self.differing
        )


def _same_bytes(claims: Sequence[Claim], state: FileState | None) -> bool:
    rows = {(c.row.algorithm, c.row.digest, c.row.size) for c in claims}
    if len(rows) == 1:
        return True
    if len({c.row.algorithm for c in claims}) > 1 and state is not None:
        # Different algorithms can still vouch for the same bytes: ask the file.
        return all(matches(c.row, state) for c in claims)
    return False


def find_clashes(
    owners: Mapping[str, Sequence[Claim]], states: Mapping[str, FileState], involving: Iterable[str] | None = None
) -> list[Clash]:
    """Every path with several claimants, optionally only those involving ``involving`` names."""
    wanted = set(involving) if involving is not None else None
    clashes = []
    for location, claims in owners.items():
        if len(claims) < 2:  # nearly every path: skipped before any work
            continue
        names = tuple(dict.fromkeys(c.dist.name for c in claims))
        if len(names) < 2 or (wanted is not None and wanted.isdisjoint(names)):
            continue
        state = states.get(location)
        on_disk = next((c.dist.name for c in claims if matches(c.row, state)), None) if state is not None else None
        clashes.append(
            Clash(
                path=claims[0].row.path,
                location=location,
                claimants=names,
                identical=_same_bytes(claims, state),
                on_disk=on_disk,
            )
        )
    clashes.sort(key=lambda c: (c.claimants, c.path))
    return clashes


def pair_up(
    clashes: Iterable[Clash], distributions: Iterable[InstalledDistribution], requirements: Requires
) -> list[ClashPair]:
    """Summarise clashes per pair of distributions that record different bytes.

    ``requirements`` says who requires whom (markers evaluated for the target), which
    makes a pair an overlay or unrelated.
    """
    by_name = {d.name: d for d in distributions if d.active}
    counts: dict[tuple[str, str], list[int]] = {}
    for clash in clashes:
        for a, b in combinations(sorted(clash.claimants), 2):
            tally = counts.setdefault((a, b), [0, 0, 0, 0, 0])
            tally[0] += 1
            if not clash.identical:
                tally[1] += 1
                tally[2 if clash.on_disk == a else 3 if clash.on_disk == b else 4] += 1
    pairs = []
    for (a, b), (shared, differing, from_a, from_b, neither) in sorted(counts.items()):
        if differing == 0 or a not in by_name or b not in by_name:
            continue
        first, second = by_name[a], by_name[b]
        winner, reason, relation = _winner(first, second, from_a, from_b, requirements)
        pairs.append(
            ClashPair(
                first=first,
                second=second,
                shared=shared,
                differing=differing,
                from_first=from_a,
                from_second=from_b,
                from_neither=neither,
                winner=winner,
                reason=reason,
                relation=relation,
            )
        )
    return pairs


def _winner(
    first: InstalledDistribution,
    second: InstalledDistribution,
    from_first: int,
    from_second: int,
    requirements: Requires,
) -> tuple[InstalledDistribution, str, Relation]:
    """Which of two clashing distributions should be reinstalled last, and how they are related.

    A distribution that requires the other, directly or through others, is the layer on
    top (an overlay such as a CUDA variant over its base), so it wins. Otherwise the one
    already most on disk wins, which changes the fewest files.
    """
    first_needs = requirements.requires(first.name, second.name)
    second_needs = requirements.requires(second.name, first.name)
    if first_needs and not second_needs:
        return first, f"it requires {second.name}", Relation.OVERLAY
    if second_needs and not first_needs:
        return second, f"it requires {first.name}", Relation.OVERLAY
    majority = "most of the differing paths already hold its bytes"
    if from_second > from_first:
        return second, majority, Relation.UNRELATED
    tie = "as many paths hold either's bytes; first by name"
    return first, majority if from_first > from_second else tie, Relation.UNRELATED

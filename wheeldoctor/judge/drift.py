"""Snapshots of several nodes -> what differs between them, and which nodes are the odd ones out.

Judgement on data alone: each aspect of a node (a distribution's version, its RECORD digest,
a file's bytes, a hook) gets one value per node; where the values are not all equal that is
a :class:`Difference`. The value most nodes share, when strictly more share it than any
other, is the majority's, and the nodes without it are that difference's odd ones. Two nodes
have no majority: the first is the reference the second is described against.

Files are named from what the snapshots hold: every file that differs from its RECORD is
listed with the digest found. Two nodes intact against RECORDs that differ (another wheel,
a rebuilt wheel) differ in their RECORD digests; which files differ is not kept, for size,
so the distribution is named, not its files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

from wheeldoctor.model.snapshot import DistributionState, Snapshot


class DriftKind(str, Enum):
    """What differs; the JSON ``kind`` field."""

    INTERPRETER = "interpreter"
    TAGS = "tags"
    #: Installed on some nodes only, or at another version.
    DISTRIBUTION = "distribution"
    #: Same version, other RECORD: installed from another wheel.
    RECORD = "record"
    #: A file's bytes.
    FILE = "file"
    #: The bytes on disk, where no listed file says which (more than a snapshot lists).
    DISK = "disk"
    HOOK = "hook"
    UNOWNED = "unowned"


@dataclass(frozen=True, slots=True, kw_only=True)
class Difference:
    """One aspect on which the nodes disagree.

    ``values`` has one entry per node, in the order the snapshots were given: None where the
    node lacks the thing (a distribution, a hook) or where it was not compared (another
    version). ``odd`` are the indices of the nodes outside the majority (empty when none).
    """

    kind: DriftKind
    subject: str
    path: str | None
    values: tuple[str | None, ...]
    compared: tuple[bool, ...]
    reference: str | None
    odd: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Drift:
    """Every difference between the snapshots, in a stable order."""

    labels: tuple[str, ...]
    hosts: tuple[str, ...]
    differences: tuple[Difference, ...]

    @property
    def agree(self) -> bool:
        """Whether every node has the same environment (this decides the exit code)."""
        return not self.differences

    @property
    def odd(self) -> tuple[int, ...]:
        """The nodes that are outside the majority on some difference, in order."""
        return tuple(sorted({i for d in self.differences for i in d.odd}))

    @property
    def undecided(self) -> tuple[Difference, ...]:
        """Differences with no majority (two nodes, or a tie)."""
        return tuple(d for d in self.differences if not d.odd)


def compare(labels: Sequence[str], snapshots: Sequence[Snapshot]) -> Drift:
    """What differs between ``snapshots`` (named by ``labels``, one each; one alone differs from nothing)."""
    found: list[Difference] = []
    every = [True] * len(snapshots)

    def add(kind: DriftKind, subject: str, path: str | None, values: list[str | None], compared: list[bool]) -> None:
        difference = _difference(kind, subject, path, values, compared)
        if difference is not None:
            found.append(difference)

    add(DriftKind.INTERPRETER, "interpreter", None, [_interpreter(s) for s in snapshots], every)
    add(DriftKind.TAGS, "platform tags", None, [_tags(s) for s in snapshots], every)
    names = sorted({d.name for s in snapshots for d in s.distributions})
    for name in names:
        dists = [s.find(name) for s in snapshots]
        versions = [d.version if d is not None else None for d in dists]
        presence = _difference(DriftKind.DISTRIBUTION, name, None, versions, every)
        if presence is not None:
            found.append(presence)
        reference = presence.reference if presence is not None else versions[0]
        # Bytes are compared between nodes at the reference version: another version's differ anyway.
        same = [d is not None and d.version == reference for d in dists]
        if sum(same) < 2:
            continue
        record = _difference(DriftKind.RECORD, name, None, _each(dists, same, lambda d: d.record), same)
        files = _files(name, dists, same)
        found.extend(d for d in (record, *files) if d is not None)
        if record is None and not files:  # the same RECORD, and no listed file says what differs on disk
            add(DriftKind.DISK, name, None, _each(dists, same, lambda d: d.disk), same)
    hooks = sorted({(h.path, h.kind) for s in snapshots for h in s.hooks})
    for path, kind in hooks:
        values = []
        for s in snapshots:
            hook = next((h for h in s.hooks if (h.path, h.kind) == (path, kind)), None)
            values.append(None if hook is None else f"{kind} of {hook.owner or 'nobody'}, {hook.sha256 or 'unread'}")
        add(DriftKind.HOOK, path, None, values, every)
    add(DriftKind.UNOWNED, "unowned files", None, [_unowned(s) for s in snapshots], every)
    return Drift(labels=tuple(labels), hosts=tuple(s.host for s in snapshots), differences=tuple(found))


def _difference(
    kind: DriftKind, subject: str, path: str | None, values: list[str | None], compared: list[bool]
) -> Difference | None:
    shown = [v for v, c in zip(values, compared, strict=True) if c]
    if len(set(shown)) <= 1:
        return None
    counts = Counter(shown).most_common()
    reference: str | None
    odd: tuple[int, ...] = ()
    if counts[0][1] > counts[1][1]:  # a majority, which may be "absent" (None)
        reference = counts[0][0]
        odd = tuple(i for i, (v, c) in enumerate(zip(values, compared, strict=True)) if c and v != reference)
    else:
        reference = next(v for v, c in zip(values, compared, strict=True) if c)
    return Difference(
        kind=kind,
        subject=subject,
        path=path,
        values=tuple(values),
        compared=tuple(compared),
        reference=reference,
        odd=odd,
    )


def _each(
    dists: Sequence[DistributionState | None], same: Sequence[bool], value: Callable[[DistributionState], str | None]
) -> list[str | None]:
    return [value(d) if d is not None and s else None for d, s in zip(dists, same, strict=True)]


def _files(name: str, dists: Sequence[DistributionState | None], same: Sequence[bool]) -> list[Difference]:
    """One difference per listed file whose bytes are not the same on every compared node.

    A node that does not list a file holds its RECORD's bytes: the ``recorded`` digest another
    node with the same RECORD gives for it. A node with another RECORD that does not list the
    file is not compared on it: its RECORD difference already names the distribution.
    """
    compared = [d for d, s in zip(dists, same, strict=True) if d is not None and s]
    paths = sorted({f.path for d in compared for f in d.files})
    out = []
    for path in paths:
        recorded: dict[str | None, str] = {}
        for c in compared:
            for f in c.files:
                if f.path == path and f.recorded is not None:
                    recorded.setdefault(c.record, f.recorded)
        values: list[str | None] = []
        known: list[bool] = []
        for d, s in zip(dists, same, strict=True):
            listed = None if d is None or not s else next((f for f in d.files if f.path == path), None)
            value = listed.found if listed is not None else recorded.get(d.record) if d is not None and s else None
            values.append(value)
            known.append(value is not None)
        difference = _difference(DriftKind.FILE, name, path, values, known)
        if difference is not None:
            out.append(difference)
    return out


def _interpreter(s: Snapshot) -> str:
    return f"{s.implementation} {s.python} {s.platform}"


def _tags(s: Snapshot) -> str:
    head = s.tags_head[0] if s.tags_head else "none"
    return f"{s.tags_count} tags from {head} (sha256 {(s.tags_sha256 or '')[:16]})"


def _unowned(s: Snapshot) -> str | None:
    if s.unowned is None:
        return None
    names = ", ".join(s.unowned.importable)
    return f"{s.unowned.files} file(s)" + (f", importable: {names}" if names else "")

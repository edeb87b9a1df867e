"""Snapshots of several nodes -> what differs between them, and which nodes are the odd ones out.

Judgement on data alone: each aspect of a node (a distribution's version, its RECORD digest,
a file's bytes, a hook) gets one value per node; where the values are not all equal that is
a :class:`Difference`. The value most nodes share, when strictly more share it than any
other, is the majority's, and the nodes without it are that difference's odd ones. Two nodes
have no majority: the first is the reference the second is described against. A reference
snapshot (``diff --reference``) is the reference of every difference instead, and every node
unlike it is odd.

A RECORD that differs at the same version is named by its cause where the snapshots show
one: the nodes that differ also differ in installer (pip and uv write other files into
RECORD), or in Python (an installer compiles ``.pyc`` files for its interpreter); else the
node was installed from another wheel.

Files are named from what the snapshots hold: every file that differs from its RECORD is
listed with the digest found. Two nodes intact against RECORDs that differ (another wheel,
a rebuilt wheel) differ in their RECORD digests; which files differ is not kept, for size,
so the distribution is named, not its files.
"""

from __future__ import annotations

import fnmatch
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

from wheeldoctor.model.snapshot import DistributionState, Snapshot, UnownedSummary


class DriftKind(str, Enum):
    """What differs; the JSON ``kind`` field and the first part of an ignore rule."""

    INTERPRETER = "interpreter"
    TAGS = "tags"
    #: Installed on some nodes only, or at another version.
    DISTRIBUTION = "distribution"
    #: Same version, other RECORD, and the nodes that differ were installed by another installer.
    INSTALLER = "installer"
    #: Same version, other RECORD, and the nodes that differ run another Python.
    PYTHON = "python"
    #: Same version, other RECORD, same installer and Python: installed from another wheel.
    RECORD = "record"
    #: A file's bytes.
    FILE = "file"
    #: The bytes on disk, where no listed file says which (more than a snapshot lists).
    DISK = "disk"
    HOOK = "hook"
    UNOWNED = "unowned"


@dataclass(frozen=True, slots=True)
class Interpreter:
    """The interpreter a node runs, as its snapshot names it."""

    implementation: str
    python: str
    platform: str


@dataclass(frozen=True, slots=True)
class Tags:
    """A node's platform tags, as its snapshot sums them up."""

    count: int
    head: tuple[str, ...]
    sha256: str | None


@dataclass(frozen=True, slots=True)
class Hook:
    """A start-up hook at one path: its kind, owner and digest."""

    kind: str
    owner: str | None
    sha256: str | None


#: One node's value on one aspect: a version, a digest or an installer's name, or a small record.
Value = str | Interpreter | Tags | Hook | UnownedSummary


@dataclass(frozen=True, slots=True, kw_only=True)
class Difference:
    """One aspect on which the nodes disagree.

    ``values`` has one entry per node, in the order the snapshots were given: None where the
    node lacks the thing (a distribution, a hook) or where it was not compared (another
    version). ``odd`` are the indices of the nodes outside the majority, or unlike the
    reference snapshot (empty when there is no majority).
    """

    kind: DriftKind
    subject: str
    path: str | None
    values: tuple[Value | None, ...]
    compared: tuple[bool, ...]
    reference: Value | None
    odd: tuple[int, ...]

    def deviants(self) -> tuple[int, ...]:
        """The nodes this difference is told for: the odd ones, else every compared node unlike the reference."""
        if self.odd:
            return self.odd
        return tuple(
            i for i, (v, c) in enumerate(zip(self.values, self.compared, strict=True)) if c and v != self.reference
        )


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    """``--ignore KIND[:GLOB]``: differences of ``kind`` whose subject or path matches ``pattern``."""

    kind: DriftKind
    pattern: str = "*"

    def matches(self, difference: Difference) -> bool:
        """Whether ``difference`` is one this rule leaves out."""
        if difference.kind is not self.kind:
            return False
        named = [difference.subject, *([difference.path] if difference.path is not None else [])]
        return any(fnmatch.fnmatchcase(name, self.pattern) for name in named)


def ignore_rule(text: str) -> IgnoreRule:
    """``KIND`` or ``KIND:GLOB`` as a rule; ValueError naming the kinds for anything else."""
    kind, _, pattern = text.partition(":")
    try:
        return IgnoreRule(DriftKind(kind.strip()), pattern or "*")
    except ValueError:
        kinds = ", ".join(k.value for k in DriftKind)
        raise ValueError(f"--ignore {text!r}: give KIND or KIND:GLOB, KIND one of {kinds}") from None


@dataclass(frozen=True, slots=True, kw_only=True)
class Drift:
    """Every difference between the snapshots, in a stable order."""

    labels: tuple[str, ...]
    hosts: tuple[str, ...]
    differences: tuple[Difference, ...]
    reference: int | None = None
    """The index of the reference snapshot (``--reference``), if one was given."""
    ignored: int = 0
    """Differences an ignore rule left out."""

    @property
    def agree(self) -> bool:
        """Whether every node has the same environment (this decides the exit code)."""
        return not self.differences

    @property
    def odd(self) -> tuple[int, ...]:
        """The nodes that are outside the majority on some difference, in order."""
        return tuple(sorted({i for d in self.differences for i in d.odd}))

    def by_node(self) -> list[tuple[int, list[Difference]]]:
        """Each node a difference is told for, in the order given, with its differences in order."""
        told: dict[int, list[Difference]] = {}
        for difference in self.differences:
            for i in difference.deviants():
                told.setdefault(i, []).append(difference)
        return sorted(told.items())


def compare(
    labels: Sequence[str],
    snapshots: Sequence[Snapshot],
    *,
    reference: int | None = None,
    ignore: Sequence[IgnoreRule] = (),
) -> Drift:
    """What differs between ``snapshots`` (named by ``labels``, one each; one alone differs from nothing).

    ``reference``: the index of the snapshot every other is compared with (no majority then);
    ``ignore``: differences these rules match are left out, and counted.
    """
    found: list[Difference] = []
    every = [True] * len(snapshots)

    def add(kind: DriftKind, subject: str, path: str | None, values: list[Value | None], compared: list[bool]) -> None:
        difference = _difference(kind, subject, path, values, compared, reference)
        if difference is not None:
            found.append(difference)

    add(DriftKind.INTERPRETER, "interpreter", None, [_interpreter(s) for s in snapshots], every)
    add(DriftKind.TAGS, "platform tags", None, [_tags(s) for s in snapshots], every)
    for name in sorted({d.name for s in snapshots for d in s.distributions}):
        found.extend(_distribution(name, snapshots, reference))
    for path, kind in sorted({(h.path, h.kind) for s in snapshots for h in s.hooks}):
        values: list[Value | None] = []
        for s in snapshots:
            hook = next((h for h in s.hooks if (h.path, h.kind) == (path, kind)), None)
            values.append(None if hook is None else Hook(kind=kind, owner=hook.owner, sha256=hook.sha256))
        add(DriftKind.HOOK, path, None, values, every)
    add(DriftKind.UNOWNED, "unowned files", None, [s.unowned for s in snapshots], every)
    kept = [d for d in found if not any(rule.matches(d) for rule in ignore)]
    return Drift(
        labels=tuple(labels),
        hosts=tuple(s.host for s in snapshots),
        differences=tuple(kept),
        reference=reference,
        ignored=len(found) - len(kept),
    )


def _distribution(name: str, snapshots: Sequence[Snapshot], reference: int | None) -> list[Difference]:
    """A distribution's differences: presence and version, then its RECORD and files at the reference version."""
    dists = [s.find(name) for s in snapshots]
    versions: list[Value | None] = [d.version if d is not None else None for d in dists]
    presence = _difference(DriftKind.DISTRIBUTION, name, None, versions, [True] * len(dists), reference)
    found = [presence] if presence is not None else []
    version = presence.reference if presence is not None else versions[0]
    # Bytes are compared between nodes at the reference version: another version's differ anyway.
    same = [d is not None and d.version == version for d in dists]
    if sum(same) < 2 or (reference is not None and not same[reference]):
        return found
    kind = _record_kind(snapshots, dists, same)
    if kind is DriftKind.INSTALLER:  # named by the installers themselves: their RECORDs differ with them
        records = _each(dists, same, lambda d: d.installer or "unknown")
    else:
        records = _each(dists, same, lambda d: d.record)
    record = _difference(kind, name, None, records, same, reference)
    files = _files(name, dists, same, reference)
    found.extend(d for d in (record, *files) if d is not None)
    if record is None and not files:  # the same RECORD, and no listed file says what differs on disk
        disk = _difference(DriftKind.DISK, name, None, _each(dists, same, lambda d: d.disk), same, reference)
        found.extend([disk] if disk is not None else [])
    return found


def _record_kind(
    snapshots: Sequence[Snapshot], dists: Sequence[DistributionState | None], same: Sequence[bool]
) -> DriftKind:
    """What explains RECORDs that differ at one version: the installer, the Python, or another wheel.

    A cause holds where it differs between the nodes compared, and each RECORD seen belongs to
    one value of it (every node with that RECORD has the same installer, or the same Python).
    """
    compared = [(d, s) for d, s, c in zip(dists, snapshots, same, strict=True) if c and d is not None]
    causes: list[tuple[DriftKind, Callable[[DistributionState, Snapshot], str]]] = [
        (DriftKind.INSTALLER, lambda d, s: d.installer or ""),
        (DriftKind.PYTHON, lambda d, s: f"{s.implementation} {'.'.join(s.python.split('.')[:2])}"),
    ]
    for kind, cause in causes:
        by_record: dict[str | None, set[str]] = {}
        for d, s in compared:
            by_record.setdefault(d.record, set()).add(cause(d, s))
        if len({cause(d, s) for d, s in compared}) > 1 and all(len(v) == 1 for v in by_record.values()):
            return kind
    return DriftKind.RECORD


def _difference(
    kind: DriftKind,
    subject: str,
    path: str | None,
    values: Sequence[Value | None],
    compared: Sequence[bool],
    reference: int | None = None,
) -> Difference | None:
    shown = [v for v, c in zip(values, compared, strict=True) if c]
    if len(set(shown)) <= 1:
        return None
    odd: tuple[int, ...] = ()
    chosen: Value | None
    if reference is not None and compared[reference]:
        chosen = values[reference]
        odd = tuple(i for i, (v, c) in enumerate(zip(values, compared, strict=True)) if c and v != chosen)
    elif (counts := Counter(shown).most_common())[0][1] > counts[1][1]:  # a majority, which may be "absent"
        chosen = counts[0][0]
        odd = tuple(i for i, (v, c) in enumerate(zip(values, compared, strict=True)) if c and v != chosen)
    else:
        chosen = next(v for v, c in zip(values, compared, strict=True) if c)
    return Difference(
        kind=kind,
        subject=subject,
        path=path,
        values=tuple(values),
        compared=tuple(compared),
        reference=chosen,
        odd=odd,
    )


def _each(
    dists: Sequence[DistributionState | None], same: Sequence[bool], value: Callable[[DistributionState], str | None]
) -> list[Value | None]:
    return [value(d) if d is not None and s else None for d, s in zip(dists, same, strict=True)]


def _files(
    name: str, dists: Sequence[DistributionState | None], same: Sequence[bool], reference: int | None
) -> list[Difference]:
    """One difference per listed file whose bytes are not the same on every compared node.

    A node that does not list a file holds its RECORD's bytes: the ``recorded`` digest another
    node with the same RECORD gives for it. A node with another RECORD that does not list the
    file is not compared on it: its RECORD difference already names the distribution.
    """
    compared = [d for d, s in zip(dists, same, strict=True) if d is not None and s]
    out = []
    for path in sorted({f.path for d in compared for f in d.files}):
        recorded: dict[str | None, str] = {}
        for c in compared:
            for f in c.files:
                if f.path == path and f.recorded is not None:
                    recorded.setdefault(c.record, f.recorded)
        values: list[Value | None] = []
        for d, s in zip(dists, same, strict=True):
            if d is None or not s:
                values.append(None)
                continue
            listed = next((f for f in d.files if f.path == path), None)
            values.append(listed.found if listed is not None else recorded.get(d.record))
        difference = _difference(DriftKind.FILE, name, path, values, [v is not None for v in values], reference)
        if difference is not None:
            out.append(difference)
    return out


def _interpreter(s: Snapshot) -> Interpreter:
    return Interpreter(implementation=s.implementation, python=s.python, platform=s.platform)


def _tags(s: Snapshot) -> Tags:
    return Tags(count=s.tags_count, head=s.tags_head, sha256=s.tags_sha256)

"""What the spread's parent and its workers say to each other (:mod:`.spread`, :mod:`.spread_worker`).

Each message is a named tuple; on the pipe it is ``(tag, *fields)`` marshal data (marshal
takes plain tuples only), nested messages as plain tuples of their fields. :func:`encode`
and :func:`decode` are the only places that know the wire form, with
:func:`pickle_problems` and :func:`unpickle_problems` for the rare findings of a RECORD.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from wheeldoctor.engine.cache import Row as Row  # noqa: PLC0414  (the wire's vocabulary, re-exported)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from wheeldoctor.engine.cache import JudgedFile
    from wheeldoctor.model.findings import Finding

Identity = tuple[int, int, int, int, int]
"""A file's fingerprint: (size, mtime_ns, ctime_ns, inode, device)."""
Proof = tuple[int, int, int, int, int, int, bool]
"""(row index, mtime_ns, ctime_ns, inode, device, links, whether the cache's fingerprint proved it)."""
FileRecord = tuple[str, Identity, tuple[tuple[str, bytes], ...]]
"""A proven file's cache record: (absolute path, fingerprint, digests)."""
Cut = tuple[int, int, int]
"""A piece of a RECORD's rows to prove: (first row, end row, weight)."""

#: The ``first`` of the proofs made while a RECORD was parsed: before every piece's first row.
AT_PARSE = -1


# The parent's tasks.
class Look(NamedTuple):
    """Settle these distributions on the cache's verdict, or weigh them for the parse order."""

    indices: list[int]


class Parse(NamedTuple):
    """Read, parse and resolve this distribution's RECORD; cut its work into pieces."""

    dist: int


class Prove(NamedTuple):
    """Prove rows ``first`` to ``first + len(paths)`` of a distribution, reading each file.

    ``decided`` marks rows already settled while parsing (proved there by the cache's
    fingerprint, or left to the parent's exact path for the cache's other digest): skipped.
    """

    dist: int
    first: int
    paths: list[str]
    rows: list[Row]
    decided: list[bool]


class Judge(NamedTuple):
    """Judge these distributions' names and versions for a command line
    (:func:`wheeldoctor.formats.names.unsafe_words`): a repair step will likely name them."""

    dists: list[int]


class Stop(NamedTuple):
    """Nothing more to do: end."""


# The workers' answers.
class Settled(NamedTuple):
    """The cache's verdict held for this distribution: its paths, and what its files weigh.

    ``judged``: for a checked distribution, the files a verdict with findings kept as judged
    (:data:`wheeldoctor.engine.cache.JudgedFile`; their paths are among ``paths``), each of
    whose fingerprints held too.
    """

    dist: int
    record: Identity
    paths: list[str]
    files: int
    size: int
    judged: list[JudgedFile]


class Looked(NamedTuple):
    """A :class:`Look` done: the distributions settled, and (distribution, weight) of the others."""

    settled: list[Settled]
    weighed: list[tuple[int, int]]


class Judged(NamedTuple):
    """A :class:`Judge` done: the distributions whose words were found fit."""

    fit: list[int]


class Proved(NamedTuple):
    """What proving some rows of a distribution gave: the proofs, cache records, bytes proved."""

    dist: int
    first: int
    proofs: list[Proof]
    files: list[FileRecord]
    size: int


class RecordParsed(NamedTuple):
    """A :class:`Parse` done.

    ``problems`` is pickled ``(findings of reading RECORD, rows outside the root)``, None when
    there are none; ``entry_found`` whether a cache entry was found and ``entry_hash`` its
    ``hash()`` (None for a malformed one, which differs from any entry written); ``decided``
    is per row (see :class:`Prove`), None when no entry vouched for any.
    ``linked``: each recorded path that a directory link on the way takes elsewhere, and where
    it resolves (:func:`wheeldoctor.where.links.through_links`); None where it was not asked.
    """

    dist: int
    identity: Identity | None
    paths: list[str]
    rows: list[Row]
    decided: list[bool] | None
    cuts: list[Cut]
    problems: bytes | None
    entry_found: bool
    entry_hash: int | None
    linked: dict[str, str] | None
    proved: Proved
    files: int
    size: int


Message = Look | Parse | Prove | Judge | Stop | Looked | RecordParsed | Proved | Judged
_KINDS: tuple[type[Any], ...] = (Look, Parse, Prove, Judge, Stop, Looked, RecordParsed, Proved, Judged)
_TAG = {kind: tag for tag, kind in enumerate(_KINDS)}


def encode(message: Message) -> tuple[Any, ...]:
    """``message`` as marshal takes it."""
    if isinstance(message, Looked):
        return (_TAG[Looked], [tuple(s) for s in message.settled], message.weighed)
    if isinstance(message, RecordParsed):
        return (_TAG[RecordParsed], *message[:-3], tuple(message.proved), message.files, message.size)
    return (_TAG[type(message)], *message)


def decode(frame: tuple[Any, ...] | list[Any]) -> Message:
    """The message :func:`encode` gave ``frame`` for."""
    kind = _KINDS[frame[0]]
    if kind is Looked:
        return Looked([Settled._make(s) for s in frame[1]], [tuple(w) for w in frame[2]])
    if kind is RecordParsed:
        fields = list(frame[1:])
        fields[-3] = Proved._make(fields[-3])
        return RecordParsed._make(fields)
    message: Message = kind._make(frame[1:])
    return message


def pickle_problems(problems: Sequence[Finding], outside: Sequence[Finding]) -> bytes:
    """:attr:`RecordParsed.problems`: the findings of reading a RECORD, pickled (the rare case)."""
    import pickle  # only for the rare findings of parsing a RECORD

    return pickle.dumps((tuple(problems), tuple(outside)))


def unpickle_problems(data: bytes) -> tuple[tuple[Finding, ...], tuple[Finding, ...]]:
    """What :func:`pickle_problems` gave ``data`` for (a worker's own bytes, forked from this process)."""
    import pickle

    found: tuple[tuple[Finding, ...], tuple[Finding, ...]] = pickle.loads(data)
    return found

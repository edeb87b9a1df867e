"""What the engine's executors carry: named tasks and results, and the one wire form between processes.

The parent's schedule (:mod:`.schedule`) hands out tasks; an executor (:mod:`.executors`)
runs each task's body (:mod:`.tasks`) and gives the schedule its result, in this process
or from a forked worker. Between processes each message is one length-prefixed marshal
frame, ``(tag, *fields)``, named tuples nested in it as plain tuples (marshal takes
nothing else), the rare findings of reading a RECORD pickled: :func:`encode` and
:func:`decode` are the only places that know that form. The reader is the parent of the
writer, forked from it.
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Iterator
from typing import Any, NamedTuple

from wheeldoctor.model.findings import Finding
from wheeldoctor.model.fingerprint import Identity
from wheeldoctor.model.record import RecordRow, fast_tuple

Digests = tuple[tuple[str, bytes], ...]

_HEADER = 4


class Proof(NamedTuple):
    """A file proved to hold its row's bytes: the row's index, and what the proof's stat saw."""

    row: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    device: int
    links: int
    vouched: bool
    """Proved by the cache's fingerprint (one ``lstat``), not by reading."""


class FileRecord(NamedTuple):
    """A file that matched its row, as the cache keeps it (:data:`wheeldoctor.engine.cache.FileRecord`)."""

    path: str
    fingerprint: Identity
    """When it was read, or proved by its cache entry's fingerprint."""
    digests: Digests


class KeptFile(NamedTuple):
    """A file a verdict with findings kept as judged (the cache's ``JudgedFile``, named)."""

    path: str
    row: tuple[str, str | None, bytes | None, int | None, int]
    fingerprint: Identity
    status: str
    digests: Digests
    links: int
    prefixes: tuple[tuple[int, Digests], ...]
    place: int
    """The row's place among all the distribution's rows."""


class Cut(NamedTuple):
    """A piece of a RECORD's rows to prove: rows ``first`` to ``end``, and what it weighs."""

    first: int
    end: int
    weight: int


# The tasks.
class Audit(NamedTuple):
    """Who owns the start-up hooks, and which files nobody recorded (:mod:`.audit`)."""


class Look(NamedTuple):
    """Settle these distributions on the cache's verdict, or weigh them for the parse order."""

    dists: list[int]


class Parse(NamedTuple):
    """Read, parse and resolve this distribution's RECORD; read its cache entry; cut its work into pieces."""

    dist: int


class Prove(NamedTuple):
    """Prove rows ``first`` to ``first + len(paths)`` of a distribution; skip the ``decided`` ones."""

    dist: int
    first: int
    paths: list[str]
    rows: list[RecordRow]
    decided: list[bool]


class Stop(NamedTuple):
    """Nothing more to do: end."""


# The results.
class Audited(NamedTuple):
    """An :class:`Audit` done: its plain data (:func:`wheeldoctor.engine.audit.audit_data`)."""

    data: list[Any]


class Settled(NamedTuple):
    """The cache's verdict held for this distribution: its paths, what its files weigh, the files kept as judged."""

    dist: int
    record: Identity
    paths: list[str]
    files: int
    size: int
    kept: list[KeptFile]


class Weighed(NamedTuple):
    """A distribution not settled, and its weight for the parse order."""

    dist: int
    weight: int


class Looked(NamedTuple):
    """A :class:`Look` done."""

    settled: list[Settled]
    weighed: list[Weighed]


class Proved(NamedTuple):
    """What proving some rows of a distribution gave: the proofs, the cache's records, the bytes proved."""

    dist: int
    first: int
    proofs: list[Proof]
    records: list[FileRecord]
    size: int


class Parsed(NamedTuple):
    """A :class:`Parse` done.

    ``problems``: the findings of reading RECORD; ``outside``: its rows that climb out of
    the root. ``entry``: whether a cache entry was found, and its ``hash()`` (None for a
    malformed one, which differs from any entry written). ``decided``: per row, settled
    while parsing (None where no entry vouched for any). ``linked``: each path a directory
    link on the way takes elsewhere, and where, where it was asked. ``proved``: the files the
    cache vouched for, proved while parsing; ``files`` and ``size``: the work, in all.
    """

    dist: int
    identity: Identity | None
    paths: list[str]
    rows: list[RecordRow]
    decided: list[bool] | None
    cuts: list[Cut]
    problems: tuple[Finding, ...]
    outside: tuple[Finding, ...]
    entry: tuple[bool, int | None]
    linked: dict[str, str] | None
    proved: Proved
    files: int
    size: int


Task = Audit | Look | Parse | Prove | Stop
Result = Audited | Looked | Parsed | Proved
_KINDS: tuple[type[Any], ...] = (Audit, Look, Parse, Prove, Stop, Audited, Looked, Parsed, Proved)
_TAG = {kind: tag for tag, kind in enumerate(_KINDS)}


def encode(message: Task | Result) -> tuple[Any, ...]:
    """``message`` as marshal takes it."""
    if isinstance(message, Looked):
        settled = [(*s[:5], [tuple(k) for k in s.kept]) for s in message.settled]
        return (_TAG[Looked], settled, [tuple(w) for w in message.weighed])
    if isinstance(message, Proved):
        proofs, records = [tuple(p) for p in message.proofs], [tuple(r) for r in message.records]
        return (_TAG[Proved], *message[:2], proofs, records, message.size)
    if isinstance(message, Prove):
        return (_TAG[Prove], *message[:3], [tuple(r) for r in message.rows], message.decided)
    if isinstance(message, Parsed):
        found = (message.problems, message.outside)
        problems = _pickled(found) if any(found) else None
        rows, cuts, proved = [tuple(r) for r in message.rows], [tuple(c) for c in message.cuts], message.proved
        head, tail = message[:3], message[8:10]
        return (_TAG[Parsed], *head, rows, message.decided, cuts, problems, *tail, encode(proved), *message[11:])
    return (_TAG[type(message)], *message)


def decode(frame: tuple[Any, ...] | list[Any]) -> Task | Result:
    """The message :func:`encode` gave ``frame`` for."""
    kind = _KINDS[frame[0]]
    make = fast_tuple
    if kind is Looked:
        settled = [Settled._make((*s[:5], [make(KeptFile, k) for k in s[5]])) for s in frame[1]]
        return Looked(settled, [make(Weighed, w) for w in frame[2]])
    if kind is Proved:
        return Proved(
            frame[1], frame[2], [make(Proof, p) for p in frame[3]], [make(FileRecord, r) for r in frame[4]], frame[5]
        )
    if kind is Prove:
        return Prove._make((*frame[1:4], [make(RecordRow, r) for r in frame[4]], frame[5]))
    if kind is Parsed:
        dist, identity, paths, rows, decided, cuts, problems, entry, linked, proved, files, size = frame[1:]
        found = _unpickled(problems) if problems is not None else ((), ())
        proof = decode(proved)
        assert isinstance(proof, Proved)
        rows = [make(RecordRow, r) for r in rows]
        cuts = [make(Cut, c) for c in cuts]
        return Parsed(dist, identity, paths, rows, decided, cuts, *found, tuple(entry), linked, proof, files, size)
    message: Task | Result = kind._make(frame[1:])
    return message


def _pickled(findings: tuple[tuple[Finding, ...], tuple[Finding, ...]]) -> bytes:
    import pickle  # only for the rare findings of a RECORD: pickle is not on a healthy check's path

    return pickle.dumps(findings)


def _unpickled(data: bytes) -> tuple[tuple[Finding, ...], tuple[Finding, ...]]:
    import pickle  # our own forked worker's bytes, never anything read from the environment

    found: tuple[tuple[Finding, ...], tuple[Finding, ...]] = pickle.loads(data)
    return found


def send(fd: int, message: Task | Result) -> None:
    """Write ``message`` as one frame, however many writes the pipe takes."""
    payload = marshal.dumps(encode(message))
    view = memoryview(len(payload).to_bytes(_HEADER, "big") + payload)
    while view:
        view = view[os.write(fd, view) :]


def frames(buffer: bytearray) -> Iterator[Task | Result]:
    """Take every whole frame off the front of ``buffer``; a partial one stays for the next read."""
    while len(buffer) >= _HEADER:
        size = int.from_bytes(buffer[:_HEADER], "big")
        if len(buffer) < _HEADER + size:
            return
        frame = marshal.loads(bytes(buffer[_HEADER : _HEADER + size]))
        del buffer[: _HEADER + size]
        yield decode(frame)


def receive(fd: int) -> Task | Result | None:
    """The next message from ``fd`` (a worker reading its tasks), or None once the writer has closed it."""
    header = _read_exactly(fd, _HEADER)
    if header is None:
        return None
    payload = _read_exactly(fd, int.from_bytes(header, "big"))
    return None if payload is None else decode(marshal.loads(payload))


def _read_exactly(fd: int, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            return None
        data += chunk
    return data

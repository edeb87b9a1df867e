"""Big files proved before their RECORD is parsed, matched to their rows once it is (for :mod:`.spread`).

A file of 16 MiB or more is found at the look, from its own RECORD line, and proved then:
by a worker, as a piece of its own, or already by the child that started with the command
(:mod:`wheeldoctor.engine.ahead`). Its proof counts for the parsed row of that very path,
algorithm, digest and size, and for no other: a row that differs, is listed twice or is
not one piece of its own is proved as any other row is. The child proved its files before
the verification began: its proof counts only for a file that had settled when it was read
and still has the fingerprint it had then (one ``lstat``, the cache's own rule); any other
is proved again by a worker.
"""

from __future__ import annotations

from typing import Any, cast

from wheeldoctor.engine.ahead import Key, Result
from wheeldoctor.engine.proof_workers import unchanged
from wheeldoctor.engine.spread_worker import Early, FileRecord, Proof, Row

Proved = tuple[list[Proof], list[FileRecord], int]
"""What proving one file gave, as a piece reports it: (proofs, cache records, bytes)."""


class EarlyFiles:
    """The early files of one verification, by number, and what became of each."""

    def __init__(
        self, ahead: dict[Key, Result] | None = None, in_flight: set[Key] | None = None, cache: bool = False
    ) -> None:
        #: Whether the child's proofs are to be kept in the cache, as a worker's are.
        self._cache = cache
        self.files: list[Early] = []
        self._unmatched: dict[tuple[int, str], int] = {}  # (dist, path) -> number, until its row is parsed
        self._matched: dict[int, int] = {}  # number -> its row, until its proof comes
        self._proved: dict[int, Proved] = {}  # number -> its proof, until its row is parsed
        self._ahead = dict(ahead or {})
        #: Rows the child is still hashing, and the early files waiting for each.
        self._in_flight = set(in_flight or ())
        self._waiting: dict[Key, list[int]] = {}

    def found(self, early: Early) -> int | None:
        """Take one file found at the look; its number, if a worker is to prove it (None: the child has or will)."""
        index, path, row, _ = early
        number = len(self.files)
        self.files.append(early)
        self._unmatched[index, path] = number
        key = cast("Key", (path, *row[1:4]))  # an early row is plain: none of its fields is None
        result = self._ahead.get(key)
        if result is not None:
            proved = _proved(key, result, self._cache)
            if proved is None:
                return number
            self._proved[number] = proved
            return None
        if key in self._in_flight:
            self._waiting.setdefault(key, []).append(number)
            return None
        return number

    @property
    def pending(self) -> bool:
        """Whether a parsed row may still be an early file's."""
        return bool(self._unmatched)

    @property
    def waiting(self) -> bool:
        """Whether early files wait for the child: a worker may yet be needed for them."""
        return bool(self._waiting)

    def match(self, index: int, k: int, path: str, row: Row) -> tuple[bool, Any]:
        """Whether row ``k`` of ``index`` is an early file's, and the "proved" frame for it if its proof is in."""
        number = self._unmatched.pop((index, path), None)  # popped: a repeated row is proved as usual
        if number is None or self.files[number][2][1:4] != row[1:4]:  # algorithm, digest, size
            return False, None
        proved = self._proved.pop(number, None)
        if proved is None:
            self._matched[number] = k
            return True, None
        return True, _frame(index, k, proved)

    def proved(self, number: int, proved: Proved) -> Any:
        """A worker's (or the child's) proof of an early file; the "proved" frame for its row, once it is parsed."""
        k = self._matched.pop(number, None)
        if k is None:  # its row not parsed yet (or never matched: then it is proved as usual)
            self._proved[number] = proved
            return None
        return _frame(self.files[number][0], k, proved)

    def proved_ahead(self, key: Key, result: Result) -> tuple[list[Any], list[int]]:
        """The child's proof of a row it was still hashing: the "proved" frames it completes, and the
        early files that waited for it but are to be proved by a worker after all."""
        self._in_flight.discard(key)
        self._ahead[key] = result
        waiting = self._waiting.pop(key, [])
        proved = _proved(key, result, self._cache)
        if proved is None:
            return [], waiting
        frames = [self.proved(number, proved) for number in waiting]
        return [frame for frame in frames if frame is not None], []

    def still_hashed(self, looked: bool) -> int:
        """How many rows the child is still hashing that the verification waits for (a core each);
        before every distribution is ``looked`` at, every row it is still hashing."""
        if looked:
            return sum(1 for key in self._in_flight if key in self._waiting)
        return len(self._in_flight)

    def ahead_gone(self) -> list[int]:
        """The child is gone: the early files that waited for it, for workers to prove."""
        self._in_flight.clear()
        numbers = [number for numbers in self._waiting.values() for number in numbers]
        self._waiting.clear()
        return numbers


def _proved(key: Key, result: Result, cache: bool) -> Proved | None:
    """A proof of the child's as a piece of one row reports it; None unless it still holds.

    It holds for a file read after it had settled and that has kept its fingerprint since
    (what the child saw before reading it): the cache's rule for a digest seen before.
    """
    proof, settled = result
    if proof is None:
        return [], [], 0
    path, algorithm, digest, size = key
    mtime, ctime, inode, device, _ = proof
    now = unchanged(path, (size, mtime, ctime, inode, device))
    if not settled or now is None:
        return None
    records: list[FileRecord] = [(path, (size, mtime, ctime, inode, device), ((algorithm, digest),))]
    return [(0, *now, False)], records if cache else [], size


def _frame(index: int, k: int, proved: Proved) -> tuple[Any, ...]:
    """The frame a piece of row ``k`` alone would have sent."""
    proofs, files, done = proved
    return ("proved", index, k, [(k, *proof[1:]) for proof in proofs], files, done)

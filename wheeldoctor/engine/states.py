"""File states by path, as a verification found them: made on first use, from proofs and the cache."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from wheeldoctor.engine import cache
from wheeldoctor.engine.wire import KeptFile, Proof
from wheeldoctor.model.files import FileState, FileStatus, Fingerprint
from wheeldoctor.model.record import RecordRow, fast_tuple


class FileStates(Mapping[str, FileState]):
    """File states by path: those ``given`` (judged on the exact path), over those proved or the cache settled.

    A proven file's state is exactly what :func:`wheeldoctor.engine.digests.examine` would
    have made of it; a settled distribution's are the cache's. Made on first use: most
    callers look at a few paths (the shared ones, which are ``given``), and tens of
    thousands of named tuples would cost more than the proofs did.
    """

    def __init__(self, given: dict[str, FileState], cache_dir: str | None = None) -> None:
        self._given = given
        self._proven: list[tuple[list[str], list[RecordRow], list[Proof]]] = []
        self._index: dict[str, tuple[int, int]] | None = None
        self._cache_dir = cache_dir
        self._settled: list[tuple[str, cache.Identity]] = []
        self._recalled: dict[str, FileState] | None = None

    def add(self, paths: list[str], rows: list[RecordRow], proofs: list[Proof]) -> None:
        """The proofs of one distribution, whose paths and rows are ``paths`` and ``rows``."""
        self._proven.append((paths, rows, proofs))
        self._index = None

    def settle(self, dist_path: str, record: cache.Identity) -> None:
        """A distribution whose cache verdict held: its states are the cache's, read on first use."""
        self._settled.append((dist_path, record))
        self._recalled = None

    def _located(self) -> dict[str, tuple[int, int]]:
        if self._index is None:
            self._index = {
                paths[proof.row]: (source, position)
                for source, (paths, _, proofs) in enumerate(self._proven)
                for position, proof in enumerate(proofs)
            }
        return self._index

    def _from_cache(self) -> dict[str, FileState]:
        if self._recalled is None:
            entries = []
            if self._cache_dir is not None:
                for dist_path, record in self._settled:
                    entry = cache.load(self._cache_dir, dist_path, record)
                    if entry is not None:
                        entries.append(entry)
            self._recalled = cached_states(entries)
        return self._recalled

    def __getitem__(self, path: str) -> FileState:
        state = self._given.get(path)
        if state is not None:
            return state
        located = self._located().get(path)
        if located is None:
            return self._from_cache()[path]
        source, position = located
        _, rows, proofs = self._proven[source]
        proof = proofs[position]
        row = rows[proof.row]
        assert row.size is not None
        fingerprint = Fingerprint(row.size, proof.mtime_ns, proof.ctime_ns, proof.inode, proof.device)
        digests = ((row.algorithm or "", row.digest or b""),)
        return FileState(FileStatus.HASHED, row.size, digests, "", proof.links, fingerprint, proof.vouched)

    def __iter__(self) -> Iterator[str]:
        yield from self._given
        located = self._located()
        yield from (path for path in located if path not in self._given)
        yield from (path for path in self._from_cache() if path not in self._given and path not in located)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, path: object) -> bool:
        return path in self._given or path in self._located() or path in self._from_cache()


def cached_states(entries: Iterable[cache.Entry], only: Mapping[str, object] | None = None) -> dict[str, FileState]:
    """What the cache knows, as file states; used only while each fingerprint still holds.

    ``only``: the paths wanted, where they are a few of the entries' files.
    """
    states: dict[str, FileState] = {}
    hashed = FileStatus.HASHED
    make = fast_tuple
    for entry in entries:
        if not all(map(cache.is_file_record, entry.files)):
            continue  # a malformed entry: none of it is used
        for path, identity, digests in entry.files:
            if path not in states and (only is None or path in only):
                states[path] = make(
                    FileState, (hashed, identity[0], digests, "", 1, make(Fingerprint, identity), True, ())
                )
    return states


def kept_state(kept: KeptFile) -> FileState:
    """The state a verdict with findings kept of a file that did not match (its fingerprints held)."""
    fingerprint = Fingerprint(*kept.fingerprint)
    return FileState(
        FileStatus(kept.status), fingerprint.size, kept.digests, "", kept.links, fingerprint, True, kept.prefixes
    )

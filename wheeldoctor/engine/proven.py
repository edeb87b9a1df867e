"""File states by path, from what the verification's workers proved: made only where asked for."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from wheeldoctor.engine import cache
from wheeldoctor.engine.cached import cached_states
from wheeldoctor.engine.messages import Proof, Row
from wheeldoctor.model.files import FileState, FileStatus, Fingerprint


class ProvenStates(Mapping[str, FileState]):
    """File states by path: those the workers proved, made on first use, over those ``given``.

    A proven file's state is exactly what :func:`wheeldoctor.engine.digests.hash_file` would
    have made of it. Made lazily because most callers look at a few paths (the shared
    ones, which are ``given``): tens of thousands of named tuples would cost the parent
    more than the proofs did.
    """

    def __init__(self, given: dict[str, FileState], cache_dir: str | None = None) -> None:
        self._given = given
        self._proven: list[tuple[list[str], list[Row], list[Proof]]] = []
        self._index: dict[str, tuple[int, int]] | None = None
        self._cache_dir = cache_dir
        self._settled: list[tuple[str, cache.Identity]] = []
        self._recalled: dict[str, FileState] | None = None

    def add(self, paths: list[str], rows: list[Row], proofs: list[Proof]) -> None:
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
                paths[proof[0]]: (source, position)
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
        k, mtime, ctime, inode, device, links, vouched = proofs[position]
        _, algorithm, digest, size, _ = rows[k]
        assert size is not None
        fingerprint = Fingerprint(size, mtime, ctime, inode, device)
        return FileState(FileStatus.HASHED, size, ((algorithm or "", digest or b""),), "", links, fingerprint, vouched)

    def __iter__(self) -> Iterator[str]:
        yield from self._given
        located = self._located()
        yield from (path for path in located if path not in self._given)
        yield from (path for path in self._from_cache() if path not in self._given and path not in located)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, path: object) -> bool:
        return path in self._given or path in self._located() or path in self._from_cache()

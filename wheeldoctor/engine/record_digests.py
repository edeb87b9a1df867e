"""Each RECORD's canonical digest (a snapshot's ``record``), kept by the RECORD's fingerprint.

A warm ``check --all`` settles most distributions on the cache's verdict without parsing
their RECORD at all; a snapshot needs a digest over every RECORD's rows. Parsing them all
again would cost a warm snapshot more than the check it is built on, so the digest is kept
here, one memo per site directory, beside the fingerprint RECORD had before it was read:
the rule of the verification cache and of :mod:`wheeldoctor.engine.metadata_memo` (a write
moves the ctime; a RECORD changed too recently is not kept; a damaged memo is not used).
"""

from __future__ import annotations

import os
import time

from wheeldoctor.engine import cache, sealed
from wheeldoctor.model.fingerprint import Identity, settled

#: The digest depends on how this code reads RECORD: another version's memo is a miss.
_HEADER = b"wheeldoctor-record-digests 1 %s %s\n" % (sealed.CODE, cache.TAG)


class RecordDigests:
    """The memo of one site directory: :meth:`get` a RECORD's digest, :meth:`keep` it, :meth:`save`."""

    def __init__(self, cache_dir: str | None, location: str) -> None:
        self._cache_dir = cache_dir if cache_dir is not None and cache.usable(cache_dir) else None
        self._path = None if cache_dir is None else cache.entry_path(cache_dir, location, ".records")
        self._location = location
        self._started = time.time_ns()
        self._kept = self._load()
        self._now: dict[str, tuple[Identity, str]] = {}
        self._changed = False

    def get(self, dist_path: str, identity: Identity | None) -> str | None:
        """The digest kept for the RECORD of ``dist_path`` while it has fingerprint ``identity``."""
        if identity is None:
            return None
        name = os.path.basename(dist_path)
        kept = self._kept.get(name)
        if type(kept) is not tuple or len(kept) != 2 or kept[0] != identity or type(kept[1]) is not str:
            return None
        self._now[name] = kept
        return kept[1]

    def keep(self, dist_path: str, identity: Identity | None, digest: str) -> None:
        """Keep ``digest``, made from the RECORD read after it had fingerprint ``identity``."""
        if identity is not None and settled(identity, self._started):
            self._now[os.path.basename(dist_path)] = (identity, digest)
            self._changed = True

    def save(self) -> None:
        """Write the memo if it changed: what this run used, and nothing it did not see."""
        if self._cache_dir is None or self._path is None or not (self._changed or len(self._now) != len(self._kept)):
            return
        cache.write(self._cache_dir, self._path, sealed.seal(_HEADER, (self._location, self._now)))

    def _load(self) -> dict[str, object]:
        if self._cache_dir is None or self._path is None:
            return {}
        value = sealed.unseal(_HEADER, cache.read(self._path))
        if type(value) is not tuple or len(value) != 2:
            return {}
        location, kept = value
        return kept if location == self._location and type(kept) is dict else {}

"""What was read of each dist-info, kept in the cache directory by the fingerprints of its files.

Reading an environment reads three small files per distribution (METADATA, INSTALLER and
WHEEL) and parses METADATA's header: on a big environment, the longest step a warm
``check --all`` takes alone. What was read is kept here,
one memo per site directory, beside the fingerprint each file had before it was read.
The next read stats the three files instead and, where all three fingerprints are the
same, takes what was read then.

The rule is the verification cache's (:mod:`wheeldoctor.engine.cache`): a file whose
fingerprint holds has the same bytes, since any write moves its ctime; a file changed too
recently to be told apart from a later write is not kept; a memo that is corrupt, foreign
or unreadable is not used. Only a read without a finding is kept: a problem is read, and
reported, again every time. Stdlib only, like the cache.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from functools import partial
from stat import S_ISREG

from wheeldoctor.engine import cache, sealed

#: The files read of a dist-info, in the order of their fingerprints.
FILES = ("METADATA", "INSTALLER", "WHEEL")
#: What was read depends on how this version reads (headers, INSTALLER, name normalisation):
#: another version's memo is a miss.
_HEADER = b"wheeldoctor-metadata 1 %s %s\n" % (sealed.CODE, cache.TAG)

Fingerprints = tuple["cache.Identity | None", ...]
"""Each of :data:`FILES`: its fingerprint, or None where there is no such file."""
Parts = tuple[str, str, str, tuple[str, ...], "str | None", tuple[str, ...], "str | None", tuple[str, ...]]
"""(canonical name, METADATA's Name, Version, Requires-Dist, Requires-Python, Provides-Extra,
INSTALLER's line, WHEEL's tags): what reading the three files gave."""


class MetadataMemo:
    """The memo of one site directory: :meth:`get` what a dist-info gave, :meth:`keep` it, :meth:`save`."""

    def __init__(self, cache_dir: str | None, location: str) -> None:
        self._cache_dir = cache_dir
        self._path = None if cache_dir is None else cache.entry_path(cache_dir, location, ".metadata")
        self._location = location
        self._started = time.time_ns()
        self._kept = self._load() if cache_dir is not None and cache.usable(cache_dir) else {}
        self._now: dict[str, tuple[Fingerprints, Parts]] = {}
        self._changed = False

    @staticmethod
    def fingerprints(dist_path: str) -> Fingerprints | None:
        """The fingerprints of a dist-info's files now; None unless each is a regular file or missing."""
        found: list[cache.Identity | None] = []
        for name in FILES:
            try:
                st = os.stat(os.path.join(dist_path, name))
            except FileNotFoundError:
                found.append(None)
                continue
            except (OSError, ValueError):  # unreadable, or the dist-info is no directory
                return None
            if not S_ISREG(st.st_mode):  # a FIFO or a device is read (and refused) every time
                return None
            found.append(cache.identity(st))
        return tuple(found)

    def get(self, name: str, fingerprints: Fingerprints) -> Parts | None:
        """What dist-info ``name`` gave when its files had these fingerprints, or None."""
        kept = self._kept.get(name)
        if type(kept) is not tuple or len(kept) != 2 or kept[0] != fingerprints or not _is_parts(kept[1]):
            return None
        self._now[name] = kept
        return kept[1]

    def keep(self, dist_path: str, fingerprints: Fingerprints, parts: Parts) -> None:
        """Remember what dist-info ``dist_path`` gave, read after its files had ``fingerprints``.

        Kept only if its files still have them: one that appeared, went or changed while it
        was read (a missing file has no ctime to settle by) is read again next time.
        """
        if (
            self._path is not None
            and all(f is None or cache.settled(f, self._started) for f in fingerprints)
            and self.fingerprints(dist_path) == fingerprints
        ):
            self._now[os.path.basename(dist_path)] = (fingerprints, parts)
            self._changed = True

    def save(self) -> None:
        """Write the memo if it changed: what this read got, and nothing it did not see."""
        if self._cache_dir is None or self._path is None or not (self._changed or len(self._now) != len(self._kept)):
            return
        cache.write(self._cache_dir, self._path, sealed.seal(_HEADER, (self._location, self._now)))

    def _load(self) -> dict[str, tuple[Fingerprints, Parts]]:
        value = None if self._path is None else sealed.unseal(_HEADER, cache.read(self._path))
        if type(value) is not tuple or len(value) != 2:
            return {}
        location, kept = value
        # The checksum vouches for the bytes and the header for the writer; each entry's shape
        # is checked where it is used.
        return kept if location == self._location and type(kept) is dict else {}


def _is_parts(value: object) -> bool:
    if type(value) is not tuple or len(value) != 8:
        return False
    name, raw_name, version, requires, python, extras, installer, tags = value
    return (
        type(name) is type(raw_name) is type(version) is str
        and type(requires) is type(extras) is type(tags) is tuple
        and all(type(v) is str for v in (*requires, *extras, *tags))
        and (python is None or type(python) is str)
        and (installer is None or type(installer) is str)
    )


def memos(cache_dir: str | None) -> Callable[[str], MetadataMemo] | None:
    """The memo of each site directory, kept in ``cache_dir``; None without a cache."""
    return None if cache_dir is None else partial(MetadataMemo, cache_dir)

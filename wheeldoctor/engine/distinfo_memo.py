"""What was read of each dist-info's files, kept in the cache directory by those files' fingerprints.

One memo per site directory and kind, holding for each dist-info the fingerprint each of
its files had before it was read, and what reading them gave. Two kinds: the metadata
(METADATA's header, INSTALLER and WHEEL: reading them is the longest step a warm
``check`` or ``deps`` takes alone) and a RECORD's canonical digest (a snapshot's
``record``: a warm check settles most distributions without parsing their RECORD).

The one rule: what was read holds while each of the files keeps its fingerprint (any
write moves its ctime); a file changed too recently to be told apart from a later write,
or that appeared, went or changed while it was read, is not kept; a memo that is corrupt,
foreign or of another code is not used, and what a run did not see is dropped from it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from stat import S_ISREG
from typing import Generic, TypeGuard, TypeVar

from wheeldoctor.engine import store
from wheeldoctor.model.fingerprint import Identity, identity, settled

Value = TypeVar("Value")

#: The metadata memo's files, in the order of their fingerprints.
METADATA_FILES = ("METADATA", "INSTALLER", "WHEEL")
Fingerprints = tuple["Identity | None", ...]
"""Each file's fingerprint, or None where there is no such file."""
Parts = tuple[str, str, str, tuple[str, ...], "str | None", tuple[str, ...], "str | None", tuple[str, ...]]
"""(canonical name, METADATA's Name, Version, Requires-Dist, Requires-Python, Provides-Extra,
INSTALLER's line, WHEEL's tags): what reading the metadata files gave."""


class DistInfoMemo(Generic[Value]):
    """The memo of one site directory: :meth:`get` what a dist-info gave, :meth:`keep` it, :meth:`save`."""

    def __init__(
        self,
        cache_dir: str | None,
        location: str,
        kind: str,
        files: tuple[str, ...],
        shape: Callable[[object], TypeGuard[Value]],
    ) -> None:
        """``files``: the dist-info's files read; ``shape``: whether a kept value is of the shape written."""
        self._cache_dir = cache_dir
        self._path = None if cache_dir is None else store.entry_path(cache_dir, location, f".{kind}")
        self._head = store.header(kind, 1)
        self._location = location
        self._files = files
        self._shape = shape
        self._started = time.time_ns()
        self._kept = self._load()
        self._now: dict[str, tuple[Fingerprints, Value]] = {}
        self._changed = False

    def fingerprints(self, dist_path: str) -> Fingerprints | None:
        """The fingerprints of a dist-info's files now; None unless each is a regular file or missing."""
        found: list[Identity | None] = []
        for name in self._files:
            try:
                st = os.stat(os.path.join(dist_path, name))
            except FileNotFoundError:
                found.append(None)
                continue
            except (OSError, ValueError):  # unreadable, or the dist-info is no directory
                return None
            if not S_ISREG(st.st_mode):  # a FIFO or a device is read (and refused) every time
                return None
            found.append(identity(st))
        return tuple(found)

    def get(self, name: str, fingerprints: Fingerprints | None) -> Value | None:
        """What dist-info ``name`` gave when its files had these fingerprints, or None."""
        kept = self._kept.get(name) if fingerprints is not None else None
        if fingerprints is None or type(kept) is not tuple or len(kept) != 2 or kept[0] != fingerprints:
            return None
        value = kept[1]
        if not self._shape(value):
            return None
        self._now[name] = (fingerprints, value)
        return value

    def keep(self, dist_path: str, fingerprints: Fingerprints | None, value: Value) -> None:
        """Remember what dist-info ``dist_path`` gave, read after its files had ``fingerprints``.

        Kept only if its files still have them: one that appeared, went or changed while it
        was read (a missing file has no ctime to settle by) is read again next time.
        """
        if (
            self._path is not None
            and fingerprints is not None
            and all(f is None or settled(f, self._started) for f in fingerprints)
            and self.fingerprints(dist_path) == fingerprints
        ):
            self._now[os.path.basename(dist_path)] = (fingerprints, value)
            self._changed = True

    def save(self) -> None:
        """Write the memo if it changed: what this run read or used, and nothing it did not see."""
        if self._cache_dir is None or self._path is None or not (self._changed or len(self._now) != len(self._kept)):
            return
        store.write(self._cache_dir, self._path, store.seal(self._head, (self._location, self._now)))

    def _load(self) -> dict[str, object]:
        if self._cache_dir is None or self._path is None or not store.usable(self._cache_dir):
            return {}
        value = store.unseal(self._head, store.read(self._path))
        if type(value) is not tuple or len(value) != 2:
            return {}
        location, kept = value
        # The checksum vouches for the bytes and the header for the writer; each entry's shape
        # is checked where it is used.
        return kept if location == self._location and type(kept) is dict else {}


def is_parts(value: object) -> TypeGuard[Parts]:
    """Whether ``value`` has the shape of :data:`Parts`."""
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


def metadata_memo(cache_dir: str, location: str) -> DistInfoMemo[Parts]:
    """The memo of what each dist-info's METADATA, INSTALLER and WHEEL gave, in ``location``."""
    return DistInfoMemo(cache_dir, location, "metadata", METADATA_FILES, is_parts)


def _is_digest(value: object) -> TypeGuard[str]:
    return type(value) is str


def record_digests(cache_dir: str | None, location: str) -> DistInfoMemo[str]:
    """The memo of each RECORD's canonical digest (``sha256:…``), in ``location``."""
    return DistInfoMemo(cache_dir, location, "records", ("RECORD",), _is_digest)


def memos(cache_dir: str | None) -> Callable[[str], DistInfoMemo[Parts]] | None:
    """The metadata memo of each site directory, kept in ``cache_dir``; None without a cache."""
    if cache_dir is None:
        return None
    return lambda location: metadata_memo(cache_dir, location)

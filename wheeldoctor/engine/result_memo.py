"""A result kept in the cache directory with the fingerprints of every path it was computed from.

The walk for unowned files lists every directory of the site directories and reads every
RECORD: on a 16-core GPU host's environment (197 distributions, 49k files) it was the
last thing a warm ``check --all`` waited for. What it found is a function of what it was
given and of what it read, so it is kept with both: the inputs (compared by value) and
the fingerprint each path it read had before it was read. A later run stats those paths
instead and, where every fingerprint is the same, takes the result.

The rule is the verification cache's (:mod:`wheeldoctor.engine.cache`), applied to
directories too: any write to a file moves its ctime, and creating, removing or renaming
an entry moves its directory's mtime and ctime (POSIX requires both), so an unchanged
directory lists the same names, of the same kinds. A path that changed too recently to be
told apart from a later change is never kept; a path that did not exist is kept as None
and must still not exist. A memo that is corrupt, foreign or unreadable is a miss.
"""

from __future__ import annotations

import time

from wheeldoctor.engine import cache, sealed
from wheeldoctor.where.fingerprint import Read as Read  # noqa: PLC0414  (re-exported)
from wheeldoctor.where.fingerprint import fingerprint

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from wheeldoctor.where.fingerprint import Keeper


class ResultMemo:
    """One kept result: :meth:`get` it if it still holds, :meth:`keep` a new one.

    Made before anything the result depends on is read: a path changed after that may
    have been read changed, so only paths settled by then are kept.
    """

    def __init__(self, cache_dir: str, key: str, suffix: str, version: int, inputs: object) -> None:
        self._cache_dir = cache_dir
        self._path = cache.entry_path(cache_dir, key, suffix)
        # ``version``: the caller's, bumped when what the result means changes within one release.
        kind = suffix.lstrip(".").encode()
        self._header = b"wheeldoctor-%s %d %s %s\n" % (kind, version, sealed.CODE, cache.TAG)
        self._key = key
        self._inputs = inputs
        self._started = time.time_ns()

    def get(self) -> object:
        """The result kept for these inputs while every path it read is unchanged, else None."""
        if not cache.usable(self._cache_dir):
            return None
        value = sealed.unseal(self._header, cache.read(self._path))
        if type(value) is not tuple or len(value) != 5:
            return None
        key, inputs, paths, fingerprints, result = value
        if key != self._key or inputs != self._inputs or type(paths) is not tuple or type(fingerprints) is not tuple:
            return None
        return result if _unchanged(paths, fingerprints) else None

    def keep(self, read: Read, result: object) -> bool:
        """Write ``result``, computed from what ``read`` noted.

        Not kept (False) if a path could not be stat'ed or changed too recently, or if it
        cannot be written.
        """
        fingerprints = read.fingerprints
        if not read.complete or not all(f is None or cache.settled(f, self._started) for f in fingerprints.values()):
            return False
        paths = tuple(sorted(fingerprints))  # siblings together: the next stats walk the tree in order
        data = (self._key, self._inputs, paths, tuple(fingerprints[p] for p in paths), result)
        return cache.write(self._cache_dir, self._path, sealed.seal(self._header, data))


#: What :func:`keeper` keeps, by kind: the version, bumped when what the result means changes.
_KINDS = {"dpkg-lists": 1, "native": 1}


def keeper(cache_dir: str | None) -> Keeper | None:
    """A :data:`~wheeldoctor.where.fingerprint.Keeper` keeping its results in ``cache_dir``; None without one."""
    if cache_dir is None:
        return None

    def keep(kind: str, inputs: tuple[str, ...], compute: Callable[[Read], object]) -> object:
        memo = ResultMemo(cache_dir, "\0".join([kind, *inputs]), f".{kind}", _KINDS[kind], inputs)
        kept = memo.get()
        if kept is not None:
            return kept
        read = Read()
        found = compute(read)
        memo.keep(read, found)
        return found

    return keep


def _unchanged(paths: tuple[object, ...], fingerprints: tuple[object, ...]) -> bool:
    """Whether every path still has its fingerprint (the cache's own check), and every absent one is still absent."""
    if len(paths) != len(fingerprints) or not all(type(path) is str for path in paths):
        return False  # never written by us: an int would stat a descriptor
    present = [(path, kept) for path, kept in zip(paths, fingerprints, strict=True) if kept is not None]
    for path, kept in zip(paths, fingerprints, strict=True):
        if kept is None:
            try:
                if fingerprint(path) is not None:  # type: ignore[arg-type]  # a str, checked above
                    return False
            except (OSError, ValueError):
                return False
    # By path: a memo's paths are mostly directories, one to a parent.
    paths_kept, kept = [p for p, _ in present], [f for _, f in present]
    return cache.all_unchanged(paths_kept, kept, follow=True, by_name=False)  # type: ignore[arg-type]

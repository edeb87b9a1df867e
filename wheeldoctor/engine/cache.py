"""The verification cache: what each installed file hashed to, kept per distribution.

One entry file per dist-info, shared by every process that checks it. An entry holds
the identity of the RECORD it was made from and, for each recorded file whose bytes
matched RECORD, the file's fingerprint (size, mtime_ns, ctime_ns, inode, device) and
its digests. A later check stats each file: an equal fingerprint reuses the digests,
anything else re-hashes. When the whole distribution verified intact, the entry also
holds the verdict (the environment root it was judged under). A verdict is given only
to a distribution with no finding at all (RECORD read without a word, every row's file
matched), so its files are exactly RECORD's rows. A warm path needs no digest: the
verdict, the paths and their fingerprints come first in the file, so it decodes only
those (:func:`load_verdict`), and proves the verdict with one stat per file.

A distribution whose only findings are files that did not match their rows (a CA bundle
with a certificate appended, a patched module) keeps a verdict too: the root it was judged
under, and each such file's row and state as judged (:data:`JudgedFile`). While every file,
those included, keeps its fingerprint, a warm path judges those rows again from their
stored states, without reading RECORD. Only the intact verdict answers the gate.

What is trusted: that any change to a file's bytes moves its ctime (the kernel sets it
on every write, truncate, rename onto it, and ``os.utime`` cannot set it back), and that
the cache directory is written only by us. Files changed too recently to be told apart
from a later write in the same timestamp tick are never cached (git's "racy clean").

Stdlib only and cheap to import (os, sys, time, marshal, zlib; no dataclasses): the
gate's warm path loads it in processes that must start fast. Every failure to read or
write is silent: a corrupt, truncated, foreign or unwritable cache is a miss.
"""

from __future__ import annotations

import marshal
import os
import zlib
from stat import S_ISREG  # os imports stat: free

from wheeldoctor.engine.store import TAG as TAG  # noqa: PLC0414  (the cache's vocabulary, re-exported)
from wheeldoctor.engine.store import code as code  # noqa: PLC0414  (the cache's vocabulary, re-exported)
from wheeldoctor.engine.store import entry_path as entry_path  # noqa: PLC0414  (the cache's vocabulary, re-exported)
from wheeldoctor.engine.store import header
from wheeldoctor.engine.store import read as read  # noqa: PLC0414  (remote.py's)
from wheeldoctor.engine.store import usable as usable  # noqa: PLC0414  (the cache's vocabulary, re-exported)
from wheeldoctor.engine.store import write as write  # noqa: PLC0414  (the cache's vocabulary, re-exported)
from wheeldoctor.model.fingerprint import SETTLE_NS as SETTLE_NS  # noqa: PLC0414  (the cache's vocabulary, re-exported)
from wheeldoctor.model.fingerprint import Identity as Identity  # noqa: PLC0414  (the cache's vocabulary, re-exported)
from wheeldoctor.model.fingerprint import identity as identity  # noqa: PLC0414  (the cache's vocabulary, re-exported)
from wheeldoctor.model.fingerprint import record_identity
from wheeldoctor.model.fingerprint import settled as settled  # noqa: PLC0414  (the cache's vocabulary, re-exported)
from wheeldoctor.model.fingerprint import settled_record_identity as settled_record_identity  # noqa: PLC0414  (the cache's vocabulary, re-exported)

TYPE_CHECKING = False  # typing costs the gate's warm path to import
if TYPE_CHECKING:
    from collections.abc import Sequence

#: Bump when the layout of an entry changes; old entries are then misses and rewritten.
FORMAT = 3

_CHECKSUM_BYTES = 4
_LENGTH_BYTES = 4
#: O_PATH where there is one: a directory that may be searched but not listed still opens.
_OPEN_DIRECTORY = getattr(os, "O_PATH", os.O_RDONLY) | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_STAT_DIR_FD = os.stat in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")

Digests = tuple[tuple[str, bytes], ...]
FileRecord = tuple[str, Identity, Digests]
"""One cached file: its absolute path, its fingerprint when hashed, its digests."""
Row = tuple[str, "str | None", "bytes | None", "int | None", int]
"""A RECORD row as a plain tuple: (path as written, algorithm, raw digest, size, line)."""
JudgedFile = tuple[str, Row, Identity, str, Digests, int, tuple[tuple[int, Digests], ...], int]
"""A file that did not match its row, as judged: (absolute path, the row, its fingerprint,
its state's status (``hashed`` or ``size-only``), digests, links, prefixes, and the row's
place among all the distribution's rows)."""
Judged = tuple[str, tuple[JudgedFile, ...]]
"""A verdict with findings: the root it was judged under, and the files that did not match."""
#: The statuses a judged file may keep: a regular file seen at a fingerprint.
_JUDGED_STATUSES = ("hashed", "size-only")


class Entry:
    """What the cache knows about one dist-info; treat as immutable.

    A plain slotted class rather than a dataclass: importing dataclasses costs more than
    the whole warm gate is allowed to take.
    """

    __slots__ = ("dist_path", "files", "judged", "record", "verdict_root")

    def __init__(
        self,
        dist_path: str,
        record: Identity,
        verdict_root: str | None,
        files: tuple[FileRecord, ...],
        judged: Judged | None = None,
    ) -> None:
        self.dist_path = dist_path
        self.record = record
        #: The environment root the distribution verified intact under; None if it did not.
        self.verdict_root = verdict_root
        self.files = files
        #: Where it did not, but every finding was a file that did not match: see :data:`Judged`.
        self.judged = judged

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Entry) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        judged = None if self.judged is None else len(self.judged[1])
        return f"Entry({self.dist_path!r}, {len(self.files)} files, verdict_root={self.verdict_root!r}, {judged=})"

    def _fields(self) -> tuple[object, ...]:
        return (self.dist_path, self.record, self.verdict_root, self.files, self.judged)


def load(cache_dir: str, dist_path: str, record: Identity) -> Entry | None:
    """The entry for ``dist_path`` made from this very RECORD, or None (a miss)."""
    data = read(entry_path(cache_dir, dist_path))
    if data is None:
        return None
    entry = decode(data)
    if entry is None or entry.dist_path != dist_path or entry.record != record:
        return None
    return entry


Verdict = tuple[tuple[str, ...], tuple[Identity, ...], tuple[JudgedFile, ...]]
"""What a warm path reads of an entry with a verdict: (paths, their fingerprints, the files judged not to match)."""


def load_verdict(
    cache_dir: str, dist_path: str, record: Identity, root: str, *, judged: bool = False
) -> Verdict | None:
    """The intact verdict under ``root`` of the entry made from this very RECORD, digests left unread.

    None when there is none. ``judged``: a verdict with findings (see :data:`Judged`) is
    taken too, its judged files checked for the shape we write. The fingerprints are as
    stored: a malformed one (never written by us) simply never equals a file's, so it
    proves nothing.
    """
    data = read(entry_path(cache_dir, dist_path))
    parts = None if data is None else _parts(data)
    if parts is None:
        return None
    head = _head(parts[0])
    if head is None:
        return None
    found_path, found_record, verdict_root, paths, identities, found_judged = head
    if found_path != dist_path or found_record != record or len(paths) != len(identities):
        return None
    if verdict_root == root:
        return paths, identities, ()
    if not judged or found_judged is None or found_judged[0] != root or not found_judged[1]:
        return None
    files = found_judged[1]
    if not all(map(is_judged_file, files)):
        return None
    places = [judged_file[7] for judged_file in files]
    # In row order, each a place among all the rows: what we write, never out of range.
    in_order = all(places[i] < places[i + 1] for i in range(len(places) - 1))
    if not in_order or places[0] < 0 or places[-1] >= len(paths) + len(files):
        return None
    return paths, identities, files


def verdict_holds(cache_dir: str, dist_path: str, root: str) -> bool:
    """True only if the cache holds an intact verdict for this RECORD and no file has changed."""
    if not usable(cache_dir):
        return False
    record = record_identity(dist_path)
    if record is None:
        return False
    verdict = load_verdict(cache_dir, dist_path, record, root)
    # One thread: stats spread over threads queue for the GIL (each takes it back after its system call).
    return verdict is not None and all_unchanged(verdict[0], verdict[1], follow=True)


def all_unchanged(paths: Sequence[str], fingerprints: Sequence[Identity], *, follow: bool) -> bool:
    """Whether every file still has its fingerprint (False for a malformed one).

    ``follow``: what ``os.stat(path)`` sees (the gate's rule); else what ``os.lstat`` sees,
    and only a regular file matches, as the check proves a file (a symlink is left to its
    exact path). Each file is stat'ed by its name in its directory, opened once per run of
    files in one directory (RECORD lists a directory's files together): the kernel then
    walks one name, not the whole path (see docs/performance.md).
    """
    stat = os.stat
    regular = S_ISREG
    if not _STAT_DIR_FD:  # Windows: whole paths
        try:
            for path, fingerprint in zip(paths, fingerprints, strict=True):
                st = stat(path, follow_symlinks=follow)
                if not (follow or regular(st.st_mode)) or identity(st) != fingerprint:
                    return False
        except (OSError, ValueError, TypeError):
            return False
        return True
    folder, fd = None, -1
    try:
        for path, fingerprint in zip(paths, fingerprints, strict=True):
            head, _, name = path.rpartition("/")
            if head != folder:
                if fd >= 0:
                    os.close(fd)
                    fd = -1
                folder = head
                fd = os.open(head or "/", _OPEN_DIRECTORY)
            st = stat(name, dir_fd=fd, follow_symlinks=follow)
            if (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev) != fingerprint or not (
                follow or regular(st.st_mode)
            ):
                return False
    except (OSError, ValueError, TypeError, AttributeError):  # gone, unreadable, or a malformed entry
        return False
    finally:
        if fd >= 0:
            os.close(fd)
    return True


def store(cache_dir: str, entry: Entry) -> bool:
    """Write ``entry`` atomically (a temporary file, then a rename); False if it could not be."""
    return write(cache_dir, entry_path(cache_dir, entry.dist_path), encode(entry))


def encode(entry: Entry) -> bytes:
    """The bytes of an entry file: header, checksum, then two marshal payloads.

    The first (with its length before it) holds all a warm path reads: the RECORD, the
    verdict, the paths and their fingerprints, the files judged not to match. The second
    holds the digests.
    """
    files = entry.files
    head = marshal.dumps(
        (
            entry.dist_path,
            entry.record,
            entry.verdict_root,
            tuple([record[0] for record in files]),
            tuple([record[1] for record in files]),
            entry.judged,
        )
    )
    payload = len(head).to_bytes(_LENGTH_BYTES, "big") + head + marshal.dumps(tuple([record[2] for record in files]))
    return header("cache", FORMAT) + zlib.crc32(payload).to_bytes(_CHECKSUM_BYTES, "big") + payload


def decode(data: bytes) -> Entry | None:
    """The entry in ``data``, or None if it is not one this Python wrote and fully intact."""
    parts = _parts(data)
    if parts is None:
        return None
    head = _head(parts[0])
    if head is None:
        return None
    try:
        digests = marshal.loads(parts[1])
    except (EOFError, ValueError, TypeError, MemoryError):  # a crafted length asks for gigabytes
        return None
    dist_path, record, verdict_root, paths, identities, judged = head
    if not isinstance(digests, tuple) or not len(paths) == len(identities) == len(digests):
        return None
    # The checksum vouches for the bytes and the header for the writer, so only the outer
    # shape is checked here (per-file checks would cost the warm gate more than its stats);
    # readers of ``files`` (and of the judged files) treat a malformed record as a miss.
    return Entry(dist_path, record, verdict_root, tuple(zip(paths, identities, digests, strict=True)), judged)


Head = tuple[str, Identity, "str | None", tuple[str, ...], tuple[Identity, ...], "Judged | None"]


def _parts(data: bytes) -> tuple[memoryview, memoryview] | None:
    """The two payloads of an entry file, once its header and checksum are ours."""
    head = header("cache", FORMAT)
    start = len(head) + _CHECKSUM_BYTES
    if not data.startswith(head) or len(data) < start + _LENGTH_BYTES:
        return None
    payload = memoryview(data)[start:]
    if zlib.crc32(payload) != int.from_bytes(data[len(head) : start], "big"):
        return None
    length = int.from_bytes(payload[:_LENGTH_BYTES], "big")
    if length > len(payload) - _LENGTH_BYTES:
        return None
    return payload[_LENGTH_BYTES : _LENGTH_BYTES + length], payload[_LENGTH_BYTES + length :]


def _head(data: memoryview) -> Head | None:
    """The first payload, if it has the outer shape we write."""
    try:
        value = marshal.loads(data)
        dist_path, record, verdict_root, paths, identities, judged = value
    except (EOFError, ValueError, TypeError, MemoryError):  # a crafted length asks for gigabytes
        return None
    if not (
        isinstance(dist_path, str)
        and _is_identity(record)
        and (verdict_root is None or isinstance(verdict_root, str))
        and type(paths) is tuple
        and type(identities) is tuple
        and (judged is None or (verdict_root is None and _is_judged(judged)))  # an intact verdict judged nothing
    ):
        return None
    return dist_path, record, verdict_root, paths, identities, judged


def _is_identity(value: object) -> bool:
    if type(value) is not tuple or len(value) != 5:
        return False
    size, mtime, ctime, inode, device = value
    return type(size) is type(mtime) is type(ctime) is type(inode) is type(device) is int


def is_file_record(value: object) -> bool:
    """Whether ``value`` has the shape of a :data:`FileRecord` (exact types: marshal makes no others)."""
    if type(value) is not tuple or len(value) != 3:
        return False
    path, fingerprint, digests = value
    return type(path) is str and _is_identity(fingerprint) and _are_digests(digests)


def _is_judged(value: object) -> bool:
    """The outer shape of :data:`Judged`; its files are checked where they are used (:func:`load_verdict`)."""
    return type(value) is tuple and len(value) == 2 and type(value[0]) is str and type(value[1]) is tuple


def is_judged_file(value: object) -> bool:
    """Whether ``value`` has the shape of a :data:`JudgedFile` (exact types: marshal makes no others)."""
    if type(value) is not tuple or len(value) != 8:
        return False
    path, row, fingerprint, status, digests, links, prefixes, place = value
    if not (
        type(path) is str
        and _is_row(row)
        and _is_identity(fingerprint)
        and status in _JUDGED_STATUSES
        and _are_digests(digests)
        and type(links) is int
        and type(prefixes) is tuple
        and type(place) is int
    ):
        return False
    for prefix in prefixes:
        if type(prefix) is not tuple or len(prefix) != 2 or type(prefix[0]) is not int or not _are_digests(prefix[1]):
            return False
    return True


def _is_row(value: object) -> bool:
    if type(value) is not tuple or len(value) != 5:
        return False
    written, algorithm, digest, size, line = value
    # A row RECORD's parser gives: always a hash (rows without one are not verifiable rows).
    return (
        type(written) is str
        and type(algorithm) is str
        and type(digest) is bytes
        and (size is None or type(size) is int)
        and type(line) is int
    )


def _are_digests(value: object) -> bool:
    if type(value) is not tuple:
        return False
    for pair in value:
        if type(pair) is not tuple or len(pair) != 2 or type(pair[0]) is not str or type(pair[1]) is not bytes:
            return False
    return True

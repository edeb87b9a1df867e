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
import stat
import sys
import zlib
from stat import S_ISREG  # os imports stat: free

from wheeldoctor.model.fingerprint import SETTLE_COARSE_NS as SETTLE_COARSE_NS  # noqa: PLC0414  (the cache's vocabulary, re-exported)
from wheeldoctor.model.fingerprint import SETTLE_NS as SETTLE_NS  # noqa: PLC0414  (the cache's vocabulary, re-exported)
from wheeldoctor.model.fingerprint import Identity as Identity  # noqa: PLC0414  (the cache's vocabulary, re-exported)
from wheeldoctor.model.fingerprint import identity as identity  # noqa: PLC0414  (the cache's vocabulary, re-exported)
from wheeldoctor.model.fingerprint import record_identity as record_identity  # noqa: PLC0414  (the cache's vocabulary, re-exported)
from wheeldoctor.model.fingerprint import settled as settled  # noqa: PLC0414  (the cache's vocabulary, re-exported)
from wheeldoctor.model.fingerprint import settled_record_identity as settled_record_identity  # noqa: PLC0414  (the cache's vocabulary, re-exported)

TYPE_CHECKING = False  # typing costs the gate's warm path to import
if TYPE_CHECKING:
    from collections.abc import Sequence

#: Bump when the layout of an entry changes; old entries are then misses and rewritten.
FORMAT = 3
#: Entries are marshal data, whose format is only promised within one Python version.
TAG = (sys.implementation.cache_tag or f"{sys.implementation.name}-{sys.version_info[:2]}").encode()
#: The stages whose code decides what an entry or a memo holds: reading, parsing, obtaining and judging.
_STAGES = ("model", "formats", "where", "engine", "judge")
#: This run's code (``code``), its entries' header (``header``), and the digest of the sources
#: still to keep beside their stats with the first file this run writes (``unkept``).
_run: dict[str, bytes | tuple[str, bytes]] = {}


def code() -> bytes:
    """What the code of :data:`_STAGES` is: a digest of each source file's name and bytes.

    An entry's verdict ("intact", and the files it vouches for) holds under the rules of
    the code that judged it: a rule added later (a link out of the environment, say) must
    see every distribution again, and the version string is not bumped with every change.
    Two installs of the same code (the command line's own venv, and a project's whose gate
    reads the same cache) are one code. The digest is kept in the cache directory under the
    sources' stats (each file's name, size and mtime, and where the package is), so a run
    reads one small file, not every source; other stats (an upgrade, an edit, another
    install) read the sources again. Code run from an archive gives a constant.
    """
    found = _run.get("code")
    if not isinstance(found, bytes):
        found = _run["code"] = _compute_code()
    return found


def _compute_code() -> bytes:
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sources: list[tuple[str, str, int, int]] = []
    for stage in _STAGES:
        try:
            with os.scandir(os.path.join(package, stage)) as found:
                for entry in found:
                    if entry.name.endswith(".py"):
                        st = entry.stat()
                        sources.append((f"{stage}/{entry.name}", entry.path, st.st_size, st.st_mtime_ns))
        except OSError:
            continue
    sources.sort()
    listing = "\n".join([os.path.realpath(package), *(f"{name} {size} {mtime}" for name, _, size, mtime in sources)])
    cache_dir = directory()
    memo = _checksum(listing.encode("utf-8", "surrogateescape")).decode() + ".code"
    kept = None if cache_dir is None else os.path.join(cache_dir, memo)
    if kept is not None:
        digest = read(kept)
        if digest is not None and len(digest) == 16 and not digest.strip(b"0123456789abcdef"):
            return digest
    crc, adler = 0, 1  # running: the checksums of every source's name, length and bytes, one after another
    for name, path, size, _ in sources:
        body = _source(path, size)
        head = b"%s %d\n" % (name.encode("utf-8", "surrogateescape"), len(body))
        crc, adler = zlib.crc32(body, zlib.crc32(head, crc)), zlib.adler32(body, zlib.adler32(head, adler))
    digest = b"%08x%08x" % (crc, adler)
    if kept is not None:
        _run["unkept"] = (kept, digest)
    return digest


def _source(path: str, size: int) -> bytes:
    """A source file's bytes, read to its end (empty where it cannot be read)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return b""
    try:
        chunks = [os.read(fd, size + 1)]  # one read, unless it grew since its stat
        while len(chunks[-1]) > size and (chunk := os.read(fd, 1 << 16)):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _checksum(data: bytes) -> bytes:
    return b"%08x%08x" % (zlib.crc32(data), zlib.adler32(data))


def _header() -> bytes:
    found = _run.get("header")
    if not isinstance(found, bytes):
        found = _run["header"] = b"wheeldoctor-cache %d %s %s\n" % (FORMAT, TAG, code())
    return found


_CHECKSUM_BYTES = 4
_LENGTH_BYTES = 4
_READ_LIMIT = 256 << 20
_OPEN_READ = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
#: O_PATH where there is one: a directory that may be searched but not listed still opens.
_OPEN_DIRECTORY = getattr(os, "O_PATH", os.O_RDONLY) | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_STAT_DIR_FD = os.stat in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")
_OPEN_WRITE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)

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


def directory() -> str | None:
    """The cache directory for this process, or None when caching is turned off.

    ``WHEELDOCTOR_NO_CACHE`` (any value but empty or ``0``) turns it off; otherwise
    ``WHEELDOCTOR_CACHE_DIR``, else ``$XDG_CACHE_HOME/wheeldoctor``, else
    ``~/.cache/wheeldoctor``. Nothing is created here.
    """
    environ = os.environ
    if environ.get("WHEELDOCTOR_NO_CACHE", "") not in ("", "0"):
        return None
    explicit = environ.get("WHEELDOCTOR_CACHE_DIR")
    if explicit:
        return os.path.abspath(explicit)
    xdg = environ.get("XDG_CACHE_HOME", "")
    # The XDG spec says a relative path there is invalid and must be ignored.
    base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):  # no HOME and no passwd entry: nowhere safe to write
        return None
    return os.path.join(base, "wheeldoctor")


def entry_path(cache_dir: str, dist_path: str, suffix: str = ".entry") -> str:
    """Where the entry of ``dist_path`` lives; the path itself is kept inside and checked."""
    raw = os.fsencode(dist_path)
    return os.path.join(cache_dir, f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}{suffix}")


def usable(cache_dir: str) -> bool:
    """Whether ``cache_dir`` exists and is yours alone (:func:`distrust` finds nothing wrong)."""
    try:
        os.stat(cache_dir)
    except (OSError, ValueError):
        return False
    return distrust(cache_dir) is None


def distrust(cache_dir: str) -> str | None:
    """Why nothing in ``cache_dir`` may be believed, or None when it is yours alone (or not made yet).

    An entry claims digests for files: whoever can write one can make an altered file pass.
    So the directory must be owned by the current user and writable by nobody else, its
    group included (ssh's StrictModes rule); each entry is judged as it is read (:func:`read`).
    """
    try:
        st = os.stat(cache_dir)
    except (FileNotFoundError, NotADirectoryError):
        return None  # made 0700 on the first write (or never: then nothing is read either)
    except (OSError, ValueError) as e:
        return f"it cannot be examined ({getattr(e, 'strerror', None) or e})"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    geteuid = getattr(os, "geteuid", None)
    if geteuid is None:  # Windows: no owners to compare
        return None
    if st.st_uid != geteuid():
        return f"it is owned by uid {st.st_uid}, not by you"
    if st.st_mode & 0o022:
        return f"its group or others can write it (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def _yours(st: os.stat_result) -> bool:
    """An entry written by this user and writable by no one else (:func:`write` makes them 0600)."""
    geteuid = getattr(os, "geteuid", None)
    return geteuid is None or (st.st_uid == geteuid() and not st.st_mode & 0o022)


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
    # One thread: spread over threads, the stats of torch's 11,847 files took 2x as long on
    # 16 cores (each stat takes the GIL back after its system call, and the threads queue).
    return verdict is not None and all_unchanged(verdict[0], verdict[1], follow=True)


def all_unchanged(
    paths: Sequence[str], fingerprints: Sequence[Identity], *, follow: bool, by_name: bool = True
) -> bool:
    """Whether every file still has its fingerprint (False for a malformed one).

    ``follow``: what ``os.stat(path)`` sees (the gate's rule); else what ``os.lstat`` sees,
    and only a regular file matches, as the check proves a file (a symlink is left to its
    exact path). Each file is stat'ed by its name in its directory, opened once per run of
    files in one directory (RECORD lists a directory's files together): the kernel then
    walks one name, not the whole path, which took a fifth off each stat on a 16-core
    host's overlay filesystem. ``by_name=False`` stats each by its path: for paths that are
    mostly one to a directory (a memo's directories), where an open and a close of each
    directory cost more than they save.
    """
    stat = os.stat
    regular = S_ISREG
    if not (_STAT_DIR_FD and by_name):  # Windows, or asked: whole paths
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


def write(cache_dir: str, final: str, data: bytes) -> bool:
    """Write ``data`` as ``final``, a file of ``cache_dir``, atomically; False if it could not be.

    The first write of a run also keeps the digest of the code's sources (see :func:`code`).
    """
    unkept = _run.get("unkept")
    if isinstance(unkept, tuple) and os.path.dirname(unkept[0]) == cache_dir:
        del _run["unkept"]
        _write(cache_dir, *unkept)
    return _write(cache_dir, final, data)


def _write(cache_dir: str, final: str, data: bytes) -> bool:
    try:
        os.makedirs(cache_dir, mode=0o700, exist_ok=True)
        if not usable(cache_dir):
            return False
        temporary = f"{final}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        fd = os.open(temporary, _OPEN_WRITE, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        try:
            os.replace(temporary, final)
        except BaseException:
            os.unlink(temporary)  # our own temporary file, never anything else
            raise
    except (OSError, ValueError):
        return False
    return True


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
    return _header() + zlib.crc32(payload).to_bytes(_CHECKSUM_BYTES, "big") + payload


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
    header = _header()
    start = len(header) + _CHECKSUM_BYTES
    if not data.startswith(header) or len(data) < start + _LENGTH_BYTES:
        return None
    payload = memoryview(data)[start:]
    if zlib.crc32(payload) != int.from_bytes(data[len(header) : start], "big"):
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


def read(path: str) -> bytes | None:
    """The bytes of a regular file of the cache (no symlink followed) that is yours alone, or None."""
    try:
        fd = os.open(path, _OPEN_READ)
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        size = st.st_size
        if st.st_mode & 0o170000 != 0o100000 or size > _READ_LIMIT or not _yours(st):  # regular, ours only
            return None
        chunks: list[bytes] = []
        while True:
            chunk = os.read(fd, size + 1)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)

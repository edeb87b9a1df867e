"""The cache directory: where it is, whether it is trusted, its files written atomically, and the keyed memo.

Everything wheeldoctor keeps lives here: the verification cache's entries
(:mod:`.cache`), the dist-info memo (:mod:`.distinfo_memo`) and the results kept by
:class:`Memo`. Each file starts with a header naming its kind, the code that wrote it
(:func:`code`) and the Python whose marshal format it uses, then a checksum: a file of
another writer, or damaged, is a miss. Every failure to read or write is silent.

Stdlib only and cheap to import (os, sys, time, marshal, zlib): the gate's warm path loads it.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys
import time
import zlib

from wheeldoctor.model.fingerprint import Identity, identity, settled
from wheeldoctor.where.fingerprint import Read

TYPE_CHECKING = False  # typing costs the gate's warm path to import
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from wheeldoctor.where.fingerprint import Keeper

#: Entries are marshal data, whose format is only promised within one Python version.
TAG = (sys.implementation.cache_tag or f"{sys.implementation.name}-{sys.version_info[:2]}").encode()
#: The stages whose code decides what an entry or a memo holds: reading, parsing, obtaining and judging
#: (the gate's own quick path among them: it writes intact verdicts too).
_STAGES = ("model", "formats", "where", "engine", "judge", "gate")
#: This run's code digest (``code``), and the memo still to write with the run's first write (``unkept``).
_run: dict[str, object] = {}

_CHECKSUM_BYTES = 4
_READ_LIMIT = 256 << 20
_OPEN_READ = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_OPEN_WRITE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)


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


def entry_path(cache_dir: str, key: str, suffix: str = ".entry") -> str:
    """Where the file kept for ``key`` (a dist-info's path, say) lives; the key itself is kept inside and checked."""
    raw = os.fsencode(key)
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
    group included (ssh's StrictModes rule); each file is judged as it is read (:func:`read`).
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
    """A file written by this user and writable by no one else (:func:`write` makes them 0600)."""
    geteuid = getattr(os, "geteuid", None)
    return geteuid is None or (st.st_uid == geteuid() and not st.st_mode & 0o022)


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


def write(cache_dir: str, final: str, data: bytes) -> bool:
    """Write ``data`` as ``final``, a file of ``cache_dir``, atomically; False if it could not be.

    The first write of a run also keeps the code's digest (see :func:`code`).
    """
    unkept = _run.pop("unkept", None)
    if isinstance(unkept, tuple):
        memo, digest = unkept
        if memo.cache_dir == cache_dir:
            memo.keep(None, digest)
        else:
            _run["unkept"] = unkept
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


def header(kind: str, version: int) -> bytes:
    """The first line of a file of ``kind`` (in its ``version``), as this code and this Python write it."""
    return b"wheeldoctor-%s %d %s %s\n" % (kind.encode(), version, TAG, code())


def seal(head: bytes, value: Any) -> bytes:
    """``value`` as the bytes of a file written under ``head``: the header, a checksum, marshal data."""
    payload = marshal.dumps(value)
    return head + zlib.crc32(payload).to_bytes(_CHECKSUM_BYTES, "big") + payload


def unseal(head: bytes, data: bytes | None) -> object:
    """The value :func:`seal` wrote under ``head``; None for no data, another writer or damage."""
    start = len(head) + _CHECKSUM_BYTES
    if data is None or not data.startswith(head):
        return None
    payload = memoryview(data)[start:]
    if zlib.crc32(payload) != int.from_bytes(data[len(head) : start], "big"):
        return None
    try:
        return marshal.loads(payload)
    except (EOFError, ValueError, TypeError, MemoryError):  # a crafted length asks for gigabytes
        return None


class Memo:
    """One result kept in the cache directory: :meth:`get` it while it holds, :meth:`keep` a new one.

    The one rule: a result holds while the inputs it was computed from compare equal (by
    value) and every path it read keeps the fingerprint it had before it was read (any
    write to a file moves its ctime; creating, removing or renaming an entry moves its
    directory's mtime and ctime). A path changed too recently to be told apart from a later
    change is never kept; one that did not exist is kept as None and must still not exist.
    Made before anything the result depends on is read.
    """

    def __init__(self, cache_dir: str, key: str, kind: str, version: int, inputs: object, head: bytes = b"") -> None:
        """``version``: the caller's, bumped when what the result means changes; ``head`` replaces the header."""
        self.cache_dir = cache_dir
        self._path = entry_path(cache_dir, key, f".{kind}")
        self._head = head or header(kind, version)
        self._key = key
        self._inputs = inputs
        self._started = time.time_ns()

    def get(self) -> object:
        """The result kept for these inputs while every path it read is unchanged, else None."""
        if not usable(self.cache_dir):
            return None
        value = unseal(self._head, read(self._path))
        if type(value) is not tuple or len(value) != 5:
            return None
        key, inputs, paths, fingerprints, result = value
        if key != self._key or inputs != self._inputs or type(paths) is not tuple or type(fingerprints) is not tuple:
            return None
        return result if _unchanged(paths, fingerprints) else None

    def keep(self, read: Read | None, result: object) -> bool:
        """Write ``result``, computed from what ``read`` noted (None: from its inputs alone).

        Not kept (False) where a read may not have seen what is there, a path changed too
        recently, or it cannot be written.
        """
        fingerprints = {} if read is None else read.fingerprints
        if read is not None and not read.complete:
            return False
        if not all(f is None or settled(f, self._started) for f in fingerprints.values()):
            return False
        paths = tuple(sorted(fingerprints))  # siblings together: the next stats walk the tree in order
        data = (self._key, self._inputs, paths, tuple(fingerprints[p] for p in paths), result)
        return write(self.cache_dir, self._path, seal(self._head, data))


def _unchanged(paths: tuple[object, ...], fingerprints: tuple[object, ...]) -> bool:
    """Whether every path still has its fingerprint, and every absent one is still absent."""
    if len(paths) != len(fingerprints) or not all(type(path) is str for path in paths):
        return False  # never written by us: an int would stat a descriptor
    try:
        for path, kept in zip(paths, fingerprints, strict=True):
            try:
                now: Identity | None = identity(os.stat(path))  # type: ignore[arg-type]  # a str, checked above
            except (FileNotFoundError, NotADirectoryError):
                now = None
            if now != kept:
                return False
    except (OSError, ValueError, TypeError):
        return False
    return True


def code() -> bytes:
    """What the code of :data:`_STAGES` is: a digest of each source file's name and bytes.

    An entry's verdict ("intact", and the files it vouches for) holds under the rules of
    the code that judged it: a rule added later (a link out of the environment, say) must
    see every distribution again, and the version string is not bumped with every change.
    Two installs of the same code (the command line's own venv, and a project's whose gate
    reads the same cache) are one code. The digest is a :class:`Memo` whose inputs are the
    sources' stats (each file's name, size and mtime, and where the package is), so a run
    reads one small file, not every source; it is written with the run's first write, never
    by a run that writes nothing. Code run from an archive gives a constant.
    """
    found = _run.get("code")
    if not isinstance(found, bytes):
        found = _run["code"] = _compute_code()
    return found


def _compute_code() -> bytes:
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sources = sorted(_sources(package))
    listing = "\n".join([os.path.realpath(package), *(f"{name} {size} {mtime}" for name, _, size, mtime in sources)])
    cache_dir = directory()
    memo = None
    if cache_dir is not None:
        memo = Memo(cache_dir, listing, "code", 1, None, head=b"wheeldoctor-code 1 %s\n" % TAG)
        kept = memo.get()
        if type(kept) is bytes and len(kept) == 16 and not kept.strip(b"0123456789abcdef"):
            return kept
    crc, adler = 0, 1  # running: the checksums of every source's name, length and bytes, one after another
    for name, path, size, _ in sources:
        body = _source(path, size)
        head = b"%s %d\n" % (name.encode("utf-8", "surrogateescape"), len(body))
        crc, adler = zlib.crc32(body, zlib.crc32(head, crc)), zlib.adler32(body, zlib.adler32(head, adler))
    digest = b"%08x%08x" % (crc, adler)
    if memo is not None:
        _run["unkept"] = (memo, digest)
    return digest


def _sources(package: str) -> Iterable[tuple[str, str, int, int]]:
    for stage in _STAGES:
        try:
            with os.scandir(os.path.join(package, stage)) as found:
                for entry in found:
                    if entry.name.endswith(".py"):
                        st = entry.stat()
                        yield f"{stage}/{entry.name}", entry.path, st.st_size, st.st_mtime_ns
        except OSError:
            continue


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


def keeper(cache_dir: str | None) -> Keeper | None:
    """A :data:`~wheeldoctor.where.fingerprint.Keeper` keeping its results as :class:`Memo` s; None without a cache."""
    if cache_dir is None:
        return None

    def keep(kind: str, inputs: tuple[str, ...], compute: Callable[[Read], object]) -> object:
        memo = Memo(cache_dir, "\0".join([kind, *inputs]), kind, 1, inputs)
        kept = memo.get()
        if kept is not None:
            return kept
        read = Read()
        found = compute(read)
        memo.keep(read, found)
        return found

    return keep

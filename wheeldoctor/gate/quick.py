"""The gate's cold path: one distribution with a plain RECORD, verified with the standard library alone.

Nearly every RECORD is plain: one ``path,algorithm=digest,size`` row per file, nothing
quoted, nothing malformed, every path inside the environment. Verifying such a RECORD
takes little code: hash each file, compare it with its row. Doing that here rather than
through the verifier keeps the verifier's imports (dataclasses, enum, csv, re, typing:
about 35 ms, every one of them holding the GIL that the hashing threads need) out of the
caller's process. Anything else in RECORD (a quoted field, an odd or repeated row, a path
that leaves the environment) makes this module step aside with None, and the verifier
decides, with its findings. Where both answer they agree: the tests hold them equal on
every kind of damage.

The cache is read and written exactly as the verifier does (the same entries by the same
rules), so the gate and ``wheeldoctor check`` reuse each other's work.

Files are hashed by threads, biggest first. The biggest bounds the whole check (one file
cannot be split), so it gets a reader thread of its own: copying it out of the page cache
then happens on another core while it is hashed.
"""

from __future__ import annotations

import _thread
import os
import stat
import time

from wheeldoctor.disk import cache
from wheeldoctor.formats.record_fields import (
    ACCEPTED_ALGORITHMS,
    MAX_SIZE_DIGITS,
    decode_digest,
    parse_size,
    unhashed_allowed,
)
from wheeldoctor.gate.reading import hash_regular, spawn
from wheeldoctor.where.sitedirs import is_plain, is_within, plain_prefix

Recorded = tuple[str, str, bytes, int]
"""One hashed RECORD row, resolved: (absolute path, algorithm, raw digest, size)."""
Found = tuple[cache.Identity, cache.Digests, bool]
"""A regular file of its recorded size: its fingerprint, its digests there, whether the cache gave them."""

#: RECORD above this size is left to the verifier, which refuses it with a finding.
_RECORD_LIMIT = 64 << 20
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
#: The biggest file gets a reader thread of its own from this size; below it the copy is cheap.
_READ_AHEAD_SIZE = 16 << 20
#: Files below this size are mostly system calls and Python (GIL-bound), not hashing.
_SMALL_FILE = 1 << 20
#: At most this many threads take small files at once: more only queue for the GIL, and delay
#: the big files' threads, which need it between chunks (torch, 16 cores: 1 or 2 best, 16 2x).
_SMALL_THREADS = 1


def check(dist_path: str, location: str, root: str, cache_dir: str | None) -> bool | None:
    """Whether every file that RECORD lists holds the recorded bytes; None if RECORD is not plain.

    None also when RECORD cannot be read: the verifier then says why.
    """
    if dist_path.lower().endswith(".egg-info"):
        return None
    started = time.time_ns()
    record = cache.settled_record_identity(dist_path)
    text = _read_record(os.path.join(dist_path, "RECORD"))
    if text is None:
        return None
    before: cache.Entry | None = None
    known: dict[str, tuple[cache.Identity, cache.Digests]] = {}
    if cache_dir is not None and record is not None and cache.usable(cache_dir):
        before = cache.load(cache_dir, dist_path, record)
        if before is not None and all(map(cache.is_file_record, before.files)):
            known = {path: (identity, digests) for path, identity, digests in before.files}
    head = _head_start(text, location, root, known)
    try:
        rows = plain_rows(text, location, root)
        if rows is None:
            return None
        found_all = _examine_all(rows, known, head)
    finally:
        if head is not None:
            with head[1]:  # never leave its thread behind
                pass
    # Each row's file where it holds the recorded bytes, else None.
    good = [
        found if found is not None and _matches(row, found) else None
        for row, found in zip(rows, found_all, strict=True)
    ]
    intact = all(found is not None for found in good)
    if cache_dir is not None and record is not None:
        # As the verifier's: the files that matched, unless changed too recently; the verdict if all.
        files: list[cache.FileRecord] = []
        for (path, *_), found in zip(rows, good, strict=True):
            if found is not None:
                identity, digests, cached = found
                if cached or cache.settled(identity, started):
                    files.append((path, identity, digests))
        verdict = root if intact and len(files) == len(rows) else None
        entry = cache.Entry(dist_path, record, verdict, tuple(files))
        if entry != before and (files or before is not None):
            cache.store(cache_dir, entry)
    return intact


def plain_rows(text: str, location: str, root: str) -> list[Recorded] | None:
    """RECORD's hashed rows with their paths resolved, or None unless every row is plain.

    Plain: no NUL, quote or lone carriage return (so that splitting at commas reads the
    fields exactly as the csv module would), three fields a row, no path listed twice, an
    accepted algorithm with a digest of its size, a size, and a relative path that stays
    inside ``root``. Rows the spec lets go unhashed (``.pyc``, RECORD itself) are skipped.
    """
    if "\x00" in text or '"' in text:
        return None
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if "\r" in text:
            return None
    plain = plain_prefix(location, root)
    prefix = location.rstrip(os.sep) + os.sep
    normpath = os.path.normpath
    listed: set[str] = set()
    rows: list[Recorded] = []
    for line in text.split("\n"):
        if not line:
            continue
        fields = line.split(",")
        if len(fields) != 3:
            return None
        path, hash_field, size_field = fields
        if not path or path in listed or os.path.isabs(path):
            return None
        listed.add(path)
        size = parse_size(size_field)
        if size_field and size is None:
            return None
        if not hash_field:
            if unhashed_allowed(path):
                continue
            return None
        algorithm, _, encoded = hash_field.partition("=")
        algorithm = algorithm.lower()
        digest = decode_digest(encoded) if encoded else None
        if size is None or digest is None or len(digest) != ACCEPTED_ALGORITHMS.get(algorithm, -1):
            return None
        if plain is not None and is_plain(path):
            absolute = plain + path
        else:
            absolute = normpath(prefix + path)
            if not is_within(absolute, root):
                return None
        rows.append((absolute, algorithm, digest, size))
    return rows


Head = tuple[Recorded, _thread.LockType, list[object]]
"""The biggest file, already being examined: its row, a lock released once done, the outcome."""


def _head_start(
    text: str, location: str, root: str, known: dict[str, tuple[cache.Identity, cache.Digests]]
) -> Head | None:
    """Start examining the biggest file (one of 16 MiB or more) before the rest of RECORD is parsed.

    The biggest file bounds the whole check, and parsing a RECORD of ten thousand rows
    takes tens of milliseconds: they overlap. Only its own line is read first (the full
    parse still decides whether RECORD is plain); a file the cache knows is left as is.
    """
    if _cpus() < 2 or "\r" in text:
        return None
    lines = text.split("\n")
    sizes = [line[line.rfind(",") + 1 :] for line in lines]
    widest = max(map(len, sizes), default=0)
    if not len(str(_READ_AHEAD_SIZE)) <= widest <= MAX_SIZE_DIGITS:  # too small to matter, or no size
        return None
    candidates = [i for i, size in enumerate(sizes) if len(size) == widest and size.isdigit() and size.isascii()]
    if not candidates:
        return None
    line = lines[max(candidates, key=lambda i: int(sizes[i]))]
    parsed = plain_rows(line, location, root)
    if not parsed or parsed[0][3] < _READ_AHEAD_SIZE or parsed[0][0] in known:
        return None
    row = parsed[0]
    outcome: list[object] = []

    def examine() -> None:
        try:
            outcome.append(_examine(row, known, [], True))
        except BaseException as e:  # re-raised by the caller, never lost in a thread
            outcome.append(e)

    try:
        return row, spawn(examine), outcome
    except RuntimeError:  # no thread to be had: the biggest file waits its turn
        return None


def _examine_all(
    rows: list[Recorded], known: dict[str, tuple[cache.Identity, cache.Digests]], head: Head | None = None
) -> list[Found | None]:
    """What each row's file is (see :data:`Found`), by threads, biggest first; None where it is not."""
    results: list[Found | None] = [None] * len(rows)
    order = sorted(range(len(rows)), key=lambda i: rows[i][3])  # pop() takes the biggest
    started = -1
    if head is not None and head[0] in rows:
        started = rows.index(head[0])
        order.remove(started)
    lock = _thread.allocate_lock()
    jobs = min(_cpus(), len(rows))
    # With more than one core, the biggest file's copies overlap its hashing on another.
    read_ahead = [jobs > 1 and bool(order) and rows[order[-1]][3] >= _READ_AHEAD_SIZE]
    failures: list[BaseException] = []

    small_threads = [0]

    def work() -> None:
        try:
            scratch: list[memoryview] = []  # this thread's read buffer, made on first need
            small = False
            while True:
                with lock:
                    if not order or failures:
                        return
                    if not small and rows[order[-1]][3] < _SMALL_FILE:  # only small files are left
                        if small_threads[0] >= _SMALL_THREADS:
                            return
                        small_threads[0] += 1
                        small = True
                    index = order.pop()
                    ahead, read_ahead[0] = read_ahead[0], False
                results[index] = _examine(rows[index], known, scratch, ahead)
        except BaseException as e:  # re-raised by the caller, never lost in a thread
            failures.append(e)

    finished: list[_thread.LockType] = []
    try:
        for _ in range(jobs - 1):
            try:
                finished.append(spawn(work))
            except RuntimeError:  # no more threads to be had: fewer do the work
                break
        work()  # returns once nothing is left for it (not every file is done: small ones may be)
    except BaseException:
        with lock:
            order.clear()  # stopped by an exception here: the others start nothing new
        raise
    finally:
        for done in finished:
            with done:
                pass
    if started >= 0:
        assert head is not None
        with head[1]:
            (outcome,) = head[2]
        if isinstance(outcome, BaseException):
            raise outcome
        results[started] = outcome  # type: ignore[call-overload]  # a Found or None, from _examine
    if failures:
        raise failures[0]
    return results


def _matches(row: Recorded, found: Found) -> bool:
    _, algorithm, digest, size = row
    identity, digests, _ = found
    return identity[0] == size and (algorithm, digest) in digests


def _examine(
    row: Recorded, known: dict[str, tuple[cache.Identity, cache.Digests]], scratch: list[memoryview], read_ahead: bool
) -> Found | None:
    """The row's file: its cached digests while its fingerprint holds, else hashed now.

    None if it is missing, not a regular file, not of the recorded size, unreadable, or
    changed while read: each a case where the verifier finds the distribution not intact.
    """
    path, algorithm, _, size = row
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    prior = known.get(path)
    if prior is not None and prior[0] == cache.identity(st) and any(name == algorithm for name, _ in prior[1]):
        return prior[0], prior[1], True
    if st.st_size != size:
        return None  # the wrong size: not worth reading
    hashed = hash_regular(path, st, algorithm, scratch, read_ahead)
    if hashed is None:
        return None
    identity, digest = hashed
    return identity, ((algorithm, digest),), False


def _read_record(path: str) -> str | None:
    """RECORD's text if it is a regular UTF-8 file within the limit; never blocks on a FIFO or opens a device."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        fd = os.open(path, _OPEN_FLAGS)
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _RECORD_LIMIT:
            return None
        data = os.read(fd, st.st_size + 1)
        if len(data) != st.st_size:
            return None  # changed while read: the verifier reads it again
        return data.decode("utf-8")
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)


def _cpus() -> int:
    # hashing.default_jobs, which the cold path cannot import (enum, typing).
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1

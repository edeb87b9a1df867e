"""The gate's cold path: one distribution with a plain RECORD, verified with the standard library alone.

Nearly every RECORD is plain: one ``path,algorithm=digest,size`` row per file, nothing
quoted, nothing malformed, every path inside the environment. Verifying such a RECORD
takes little code: hash each file, compare it with its row. Doing that here rather than
through the verifier keeps the verifier's imports (dataclasses, enum, csv, re, typing:
each of them holding the GIL that the hashing threads need) out of the
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

from wheeldoctor.engine import cache
from wheeldoctor.gate.plain_rows import EARLY, Recorded, biggest_rows, plain_rows
from wheeldoctor.gate.reading import hash_regular, spawn

#: RECORD above this size is left to the verifier, which refuses it with a finding.
_RECORD_LIMIT = 64 << 20
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
#: The biggest file gets a reader thread of its own from this size; below it the copy is cheap.
_READ_AHEAD_SIZE = 16 << 20
#: Files below this size are mostly system calls and Python (GIL-bound), not hashing.
_SMALL_FILE = 1 << 20
#: At most this many threads take small files at once: more only queue for the GIL, and delay
#: the big files' threads, which need it between chunks.
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
    heads = _heads_start(text, location, root, known, started)
    ahead: tuple[list[Outcome], bytes] | None = None
    try:
        rows = plain_rows(text, location, root)
        if rows is None:
            return None
        outcomes, pending = _examine_all(rows, known, started, heads)
        if cache_dir is not None and record is not None and any(head[1].locked() for _, head in pending):
            ahead = _encode_ahead(dist_path, record, root, rows, outcomes, pending, started)
        _collect(outcomes, pending)
    finally:
        for _, done, _ in heads:  # never leave a thread behind
            with done:
                pass
    if cache_dir is not None and record is not None:
        entry = _entry(dist_path, record, root, outcomes)
        if before is not None and before.judged is not None and not entry.verdict_root and entry.files == before.files:
            # The verifier's judged files (see cache.Judged) are proved by their fingerprints
            # where they are read: kept, or each would rewrite the other's entry.
            entry = before
        if entry != before and (entry.files or before is not None):
            if ahead is not None and all(outcomes[i] == ahead[0][i] for i, _ in pending):
                cache.write(cache_dir, cache.entry_path(cache_dir, dist_path), ahead[1])
            else:
                cache.store(cache_dir, entry)
    return all(outcomes)


def _entry(dist_path: str, record: cache.Identity, root: str, outcomes: list[Outcome]) -> cache.Entry:
    """As the verifier's: the files that matched, unless changed too recently; the verdict if all."""
    files = [outcome for outcome in outcomes if type(outcome) is tuple]
    verdict = root if len(files) == len(outcomes) else None
    return cache.Entry(dist_path, record, verdict, tuple(files))


def _encode_ahead(
    dist_path: str,
    record: cache.Identity,
    root: str,
    rows: list[Recorded],
    outcomes: list[Outcome],
    pending: list[tuple[int, Head]],
    started: int,
) -> tuple[list[Outcome], bytes] | None:
    """The entry's bytes as they will be if each big file still hashing holds its recorded bytes.

    Encoding a big distribution's records takes long once the last big file is done; this
    thread waits for that file anyway. Each pending file is assumed to keep the fingerprint
    it has now: the caller writes these bytes only if every assumption held, else encodes
    again. None where a pending file could not be assumed to match (then nothing is done ahead).
    """
    assumed = list(outcomes)
    for index, _ in pending:
        path, algorithm, digest, size = rows[index]
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return None
        identity = cache.identity(st)
        if not stat.S_ISREG(st.st_mode) or identity[0] != size or not cache.settled(identity, started):
            return None
        assumed[index] = (path, identity, ((algorithm, digest),))
    return assumed, cache.encode(_entry(dist_path, record, root, assumed))


Head = tuple[Recorded, _thread.LockType, list[object]]
"""A big file, already being examined: its row, a lock released once done, the outcome."""


def _heads_start(
    text: str, location: str, root: str, known: dict[str, tuple[cache.Identity, cache.Digests]], started: int
) -> list[Head]:
    """Start examining every big file (16 MiB or more) before the rest of RECORD is parsed, biggest first.

    The big files bound the whole check (a file cannot be split), and parsing a RECORD of
    ten thousand rows takes a while: they overlap. A distribution with two huge files whose
    second waited for the parse ended with it last. Only their own
    lines are read first (the full parse still decides whether RECORD is plain); a file
    the cache knows is left as is. One core is left for the parse; the biggest files get
    a reader thread each while cores allow.
    """
    cpus = _cpus()
    if cpus < 2:
        return []
    spare = cpus - 1  # threads that may run beside the parse
    heads: list[Head] = []
    for row in biggest_rows(text, location, root, EARLY):
        if spare < 1:
            break
        if row[0] in known:
            continue
        read_ahead = not heads or spare >= 2  # the biggest always: its copies overlap its hashing
        spare -= 2 if read_ahead else 1
        try:
            heads.append(_start(row, known, read_ahead, started))
        except RuntimeError:  # no thread to be had: the rest wait their turn
            break
    return heads


def _start(
    row: Recorded, known: dict[str, tuple[cache.Identity, cache.Digests]], read_ahead: bool, started: int
) -> Head:
    """Examine ``row``'s file in a thread of its own; raises RuntimeError when no thread can be had."""
    outcome: list[object] = []

    def examine() -> None:
        try:
            outcome.append(_examine(row, known, [], read_ahead, started))
        except BaseException as e:  # re-raised by the caller, never lost in a thread
            outcome.append(e)

    return row, spawn(examine), outcome


Outcome = cache.FileRecord | bool
"""What examining one row gave: its cache record where the file holds the recorded bytes and
may be cached, True where it holds them but changed too recently to cache, False where not."""


def _examine_all(
    rows: list[Recorded],
    known: dict[str, tuple[cache.Identity, cache.Digests]],
    started: int,
    heads: list[Head],
) -> tuple[list[Outcome], list[tuple[int, Head]]]:
    """What each row's file is (see :data:`Outcome`), by threads, biggest first, ``heads`` already under way.

    The rows of ``heads`` are left to :func:`_collect`, with the heads returned beside them.
    """
    results: list[Outcome] = [False] * len(rows)
    order = sorted(range(len(rows)), key=lambda i: rows[i][3])  # pop() takes the biggest
    under_way = {head[0][0]: head for head in heads}
    taken = [(i, under_way[row[0]]) for i, row in enumerate(rows) if row[0] in under_way]
    taken = [(i, head) for i, head in taken if head[0] == rows[i]]  # the same row, as the full parse read it
    if taken:
        skip = {i for i, _ in taken}
        order = [i for i in order if i not in skip]
    lock = _thread.allocate_lock()
    # The heads' threads (and their readers) hold cores already.
    jobs = max(1, min(_cpus() - 2 * len(heads), len(order)))
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
                results[index] = _examine(rows[index], known, scratch, ahead, started)
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
    if failures:
        raise failures[0]
    return results, taken


def _collect(results: list[Outcome], taken: list[tuple[int, Head]]) -> None:
    """Wait for each head in ``taken`` and put its outcome in ``results``; re-raise what it raised."""
    for index, (_, done, outcome) in taken:
        with done:
            (result,) = outcome
        if isinstance(result, BaseException):
            raise result
        results[index] = result  # type: ignore[call-overload]  # an Outcome, from _examine


def bytes_match(row_digest: bytes, row_size: int, size: int, digest: bytes | None) -> bool:
    """:func:`wheeldoctor.model.record.bytes_match` for the cold path's plain rows, which always
    have a digest and a size: the gate imports nothing but the standard library, so it keeps
    this copy, and a test holds the two equal over the same cases."""
    return row_size == size and digest == row_digest


def _examine(
    row: Recorded,
    known: dict[str, tuple[cache.Identity, cache.Digests]],
    scratch: list[memoryview],
    read_ahead: bool,
    started: int,
) -> Outcome:
    """The row's file (see :data:`Outcome`): its cached digests while its fingerprint holds, else hashed now.

    False if it is missing, not a regular file, not of the recorded size, unreadable,
    changed while read, or of other bytes: each a case where the verifier finds the
    distribution not intact.
    """
    path, algorithm, digest, size = row
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    prior = known.get(path)
    if prior is not None and prior[0] == cache.identity(st) and any(name == algorithm for name, _ in prior[1]):
        identity, digests = prior
        held = any(name == algorithm and bytes_match(digest, size, identity[0], seen) for name, seen in digests)
        return (path, identity, digests) if held else False
    if st.st_size != size:
        return False  # the wrong size: not worth reading
    hashed = hash_regular(path, st, algorithm, scratch, read_ahead)
    if hashed is None or not bytes_match(digest, size, hashed[0][0], hashed[1]):
        return False
    identity = hashed[0]
    # A file changed in the tick its hashing started could change again unseen: not cached.
    return (path, identity, ((algorithm, digest),)) if cache.settled(identity, started) else True


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

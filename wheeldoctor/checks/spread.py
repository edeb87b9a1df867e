"""Verification spread over forked workers, distribution by distribution (the command line only).

The parent forks the workers first, then only schedules. A worker reads and parses a
distribution's RECORD, resolves its rows, reads its cache entry and sends back what the
parent needs to know (the resolved paths, the rows as plain tuples, the fingerprints the
cache vouches for, and the work cut into pieces). The parent then hands out the pieces,
the heaviest first: every file of 1 MiB or more alone, the small files of a distribution
in runs of about 8 MiB of work. A piece goes to whichever worker is free, so the biggest
file starts as soon as RECORDs are read and nothing waits on a worker that drew a heavy
share. A worker proves a piece's files as :mod:`wheeldoctor.disk.proof_workers` does (one
``lstat`` for a file the cache vouches for, else one listing per directory and one open,
read and close per file) and returns, per proven file, a few integers and its cache
record. Whatever is not proven comes back as not proven, for the exact path to judge.

Frames are marshal data (plain tuples of ints, strings and bytes); the rare findings that
parsing gives travel pickled. A worker that dies only leaves its work undone: the parent
does it itself. No worker outlives the parent.
"""

from __future__ import annotations

import contextlib
import heapq
import marshal
import os
import pickle
import select
import signal
from collections.abc import Callable, Sequence
from typing import Any, cast

from wheeldoctor.checks.claims import resolve
from wheeldoctor.disk import cache
from wheeldoctor.disk.digests import BUFFER_SIZE
from wheeldoctor.disk.proof_workers import _prove, _regular_files, _unchanged
from wheeldoctor.disk.workers import send
from wheeldoctor.model.files import FileState, FileStatus, Fingerprint
from wheeldoctor.model.findings import Finding
from wheeldoctor.where.environment import InstalledDistribution, with_record

#: Files from this size are a piece of their own.
BIG = 1 << 20
#: Small files are cut into pieces of about this weight (bytes, plus ``_PER_FILE`` a file).
_PIECE = 8 << 20
#: Scheduling weight of one file in bytes: what its system calls cost, in hashing time.
_PER_FILE = 16 << 10
_HEADER = 4

Row = tuple[str, "str | None", "bytes | None", "int | None", int]
"""A RecordRow as a plain tuple: (path as written, algorithm, raw digest, size, line)."""
Proof = tuple[int, int, int, int, int, int, bool]
"""(row index, mtime_ns, ctime_ns, inode, device, links, whether the cache's fingerprint proved it)."""
FileRecord = tuple[str, cache.Identity, cache.Digests]


class Parsed:
    """What a worker learnt of one distribution, and what the pieces proved of it."""

    __slots__ = ("before", "files", "identity", "outside", "paths", "problems", "proofs", "rows", "vouched")

    def __init__(
        self,
        identity: cache.Identity | None,
        paths: list[str],
        rows: list[Row],
        vouched: list[Any] | None,
        problems: tuple[Finding, ...],
        outside: tuple[Finding, ...],
        before: int | None = None,
    ) -> None:
        self.identity = identity
        self.paths = paths
        self.rows = rows
        self.vouched = vouched
        #: Findings of reading RECORD: the one that ``with_record`` adds, then RECORD's own.
        self.problems = problems
        self.outside = outside
        self.proofs: list[Proof] = []
        #: Cache records of the proven files, by the index of their piece's first row.
        self.files: dict[int, list[FileRecord]] = {}
        #: ``hash()`` of the cache entry the worker found (forked workers hash as the parent does).
        self.before = before


def spread(
    dists: Sequence[InstalledDistribution],
    checked: Sequence[bool],
    jobs: int,
    cache_dir: str | None,
    started: int,
    states: dict[str, FileState],
    progress: Callable[[int, int], None] | None = None,
    begin: Callable[[int, int], None] | None = None,
) -> list[Parsed | None]:
    """What ``jobs`` forked workers learnt of each of ``dists`` (None where a worker died first).

    Only the distributions marked in ``checked`` have their files proved; the others are
    parsed and resolved, for attribution. Each proven file's state goes into ``states`` as
    it comes back (while the workers still hash), exactly as :func:`hash_file` would have
    made it. ``begin`` is told the work's size once every RECORD is read; ``progress`` then
    advances as pieces come back.
    """
    hashed = FileStatus.HASHED
    make = tuple.__new__  # skips the named tuples' Python-level __new__: this runs once per file
    usable = cache_dir is not None and cache.usable(cache_dir)
    results: list[Parsed | None] = [None] * len(dists)
    # Biggest RECORD first: the long parses start first, and the pieces they give come early.
    parse = sorted(range(len(dists)), key=lambda i: -_record_size(dists[i]))
    parse.reverse()  # pop() takes from the end
    pieces: list[tuple[int, int, int, int]] = []  # heap of (-weight, dist, first row, end row)
    parsing: set[int] = set()
    parked: list[int] = []
    workers: dict[int, tuple[int, int]] = {}  # result fd -> (pid, task fd)
    totals = [0, 0, 0]  # RECORDs still to read, files, bytes

    def worker_body(tasks: int, out: int) -> Callable[[], None]:
        return lambda: _serve(dists, checked, cache_dir, usable, started, tasks, out)

    def assign(fd: int) -> None:
        task_fd = workers[fd][1]
        if parse:
            index = parse.pop()
            parsing.add(fd)
            _write(task_fd, ("parse", index))
        elif pieces:
            _, index, first, end = heapq.heappop(pieces)
            parsed = results[index]
            assert parsed is not None
            vouched = parsed.vouched[first:end] if parsed.vouched is not None else [None] * (end - first)
            _write(task_fd, ("prove", index, first, parsed.paths[first:end], parsed.rows[first:end], vouched))
        elif parsing:
            parked.append(fd)  # a RECORD still being read may give more pieces
        else:
            _write(task_fd, ("stop",))

    def handle(fd: int, frame: Any) -> None:
        kind = frame[0]
        if kind == "parsed":
            parsing.discard(fd)
            _, index, identity, paths, rows, vouched, cuts, extras, before = frame
            problems, outside = pickle.loads(extras) if extras is not None else ((), ())
            results[index] = Parsed(identity, paths, rows, vouched, problems, outside, before)
            for first, end, weight in cuts:
                heapq.heappush(pieces, (-weight, index, first, end))
                totals[1] += end - first
                totals[2] += weight - _PER_FILE * (end - first)
            if not parse and not parsing and begin is not None:
                begin(totals[1], totals[2])
        else:  # "proved": its states are made later, once every waiting worker has its next task
            backlog.append(frame)

    def absorb(frame: Any) -> None:
        """Record what one piece proved, as file states."""
        _, index, first, proofs, files, done_bytes = frame
        parsed = results[index]
        assert parsed is not None
        parsed.proofs.extend(proofs)
        parsed.files[first] = files
        paths, rows = parsed.paths, parsed.rows
        for k, mtime, ctime, inode, device, links, vouched in proofs:
            _, algorithm, digest, size, _ = rows[k]
            fingerprint = make(Fingerprint, (size, mtime, ctime, inode, device))
            states[paths[k]] = make(FileState, (hashed, size, ((algorithm, digest),), "", links, fingerprint, vouched))
        if progress is not None:
            progress(len(proofs), done_bytes)

    finished = False
    try:
        for _ in range(max(1, min(jobs, len(dists)))):
            tasks_read, tasks_write = os.pipe()
            results_read, results_write = os.pipe()
            pid = os.fork()
            if pid == 0:  # the worker: never returns
                for fd, (_, task_fd) in workers.items():  # the other workers' ends: theirs alone
                    os.close(fd)
                    os.close(task_fd)
                os.close(tasks_write)
                os.close(results_read)
                _run(worker_body(tasks_read, results_write))
            os.close(tasks_read)
            os.close(results_write)
            workers[results_read] = (pid, tasks_write)
        for fd in workers:
            assign(fd)
        buffers = {fd: bytearray() for fd in workers}
        backlog: list[Any] = []
        while buffers:
            # The parent's own work waits while any worker waits for it: a worker is never idle
            # while the parent makes states, and they are made while the workers hash.
            ready, _, _ = select.select(list(buffers), [], [], 0 if backlog else None)
            if not ready and backlog:
                absorb(backlog.pop())
                continue
            for fd in ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:  # the worker is gone: what it held is undone
                    del buffers[fd]
                    parsing.discard(fd)
                    if fd in parked:
                        parked.remove(fd)
                    continue
                buffer = buffers[fd]
                buffer += chunk
                while len(buffer) >= _HEADER:
                    size = int.from_bytes(buffer[:_HEADER], "big")
                    if len(buffer) < _HEADER + size:
                        break
                    frame = marshal.loads(bytes(buffer[_HEADER : _HEADER + size]))
                    del buffer[: _HEADER + size]
                    handle(fd, frame)
                    assign(fd)
            while parked and (pieces or not parsing):
                assign(parked.pop())
        for frame in backlog:
            absorb(frame)
        finished = True
    finally:
        for fd, (pid, task_fd) in workers.items():
            for end in (fd, task_fd):
                with contextlib.suppress(OSError):
                    os.close(end)
            if not finished:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
            os.waitpid(pid, 0)
    return results


def _record_size(dist: InstalledDistribution) -> int:
    if dist.record is not None:
        return len(dist.record.rows) * 100
    try:
        return os.stat(os.path.join(dist.path, "RECORD")).st_size
    except (OSError, ValueError):
        return 0


def _write(fd: int, task: tuple[Any, ...]) -> None:
    # A worker that died cannot take it: its work is then left undone, for the parent.
    with contextlib.suppress(OSError):
        send(fd, task)  # type: ignore[arg-type]


def _run(body: Callable[[], None]) -> None:
    code = 0
    try:
        # Default handlers: a ^C aimed at the command must not print a traceback per worker.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        body()
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _read_task(fd: int) -> Any:
    """The next frame from the parent, or None once it has closed the pipe."""
    header = _read_exactly(fd, _HEADER)
    if header is None:
        return None
    payload = _read_exactly(fd, int.from_bytes(header, "big"))
    return None if payload is None else marshal.loads(payload)


def _read_exactly(fd: int, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _serve(
    dists: Sequence[InstalledDistribution],
    checked: Sequence[bool],
    cache_dir: str | None,
    usable: bool,
    started: int,
    tasks: int,
    out: int,
) -> None:
    """The body of a worker: do what the parent asks until it says stop."""
    view = memoryview(bytearray(BUFFER_SIZE))
    # Every listing is kept: a RECORD may come back to a directory after listing another.
    listings: dict[str, dict[str, int]] = {}
    while True:
        task = _read_task(tasks)
        if task is None or task[0] == "stop":
            return
        if task[0] == "parse":
            index = task[1]
            send(out, _parse(index, dists[index], checked[index], cache_dir if usable else None))  # type: ignore[arg-type]
        else:
            _, index, first, paths, rows, vouched = task
            send(out, _prove_piece(index, first, paths, rows, vouched, cache_dir, started, view, listings))  # type: ignore[arg-type]


def _parse(index: int, dist: InstalledDistribution, checked: bool, cache_dir: str | None) -> tuple[Any, ...]:
    """Read, parse and resolve one RECORD; read its cache entry; cut its files into pieces."""
    read = with_record(dist)
    claims, outside = resolve(read)
    problems = (*read.problems[len(dist.problems) :], *(read.record.problems if read.record else ()))
    extras = pickle.dumps((problems, tuple(outside))) if problems or outside else None
    paths = [claim.path for claim in claims]
    rows = cast("list[Row]", [tuple(claim.row) for claim in claims])
    if not checked:
        return ("parsed", index, read.record_identity, paths, rows, None, [], extras, None)
    known: dict[str, tuple[cache.Identity, cache.Digests]] = {}
    before = None
    if cache_dir is not None and read.record_identity is not None:
        entry = cache.load(cache_dir, read.path, read.record_identity)
        if entry is not None:
            try:
                before = hash(entry)
            except TypeError:  # a malformed entry (lists inside): one that differs from any we write
                before = -1  # hash() never gives -1
            if all(map(cache.is_file_record, entry.files)):
                known = {path: (identity, digests) for path, identity, digests in entry.files}
    vouched: list[Any] = []
    cuts: list[tuple[int, int, int]] = []
    first, weight = 0, 0
    for k, (path, (_, algorithm, digest, size, _)) in enumerate(zip(paths, rows, strict=True)):
        prior = known.get(path) if known else None
        fingerprint: Any = None
        if prior is not None:
            # The cache's digest is RECORD's: one lstat proves it. Another: the exact path
            # decides from the cache's digest, as it would without workers (False: not here).
            fingerprint = prior[0] if prior[0][0] == size and (algorithm, digest) in prior[1] else False
        vouched.append(fingerprint)
        cost = _PER_FILE if fingerprint else (size or 0) + _PER_FILE
        if cost - _PER_FILE >= BIG:
            if k > first:
                cuts.append((first, k, weight))
            cuts.append((k, k + 1, cost))
            first, weight = k + 1, 0
            continue
        weight += cost
        if weight >= _PIECE:
            cuts.append((first, k + 1, weight))
            first, weight = k + 1, 0
    if len(rows) > first:
        cuts.append((first, len(rows), weight))
    return ("parsed", index, read.record_identity, paths, rows, vouched if known else None, cuts, extras, before)


def _prove_piece(
    index: int,
    first: int,
    paths: list[str],
    rows: list[Row],
    vouched: list[Any],
    cache_dir: str | None,
    started: int,
    view: memoryview,
    listings: dict[str, dict[str, int]],
) -> tuple[Any, ...]:
    """Prove the files of one piece; ("proved", dist, first row, proofs, cache records, bytes)."""
    proofs: list[Proof] = []
    files: list[FileRecord] = []
    done = 0
    settled = cache.settled
    for k, (path, (_, algorithm, digest, size, _), fingerprint) in enumerate(zip(paths, rows, vouched, strict=True)):
        if digest is None or size is None or not algorithm or fingerprint is False:
            continue
        proof = None if fingerprint is None else _unchanged(path, fingerprint)
        cached = proof is not None
        if proof is None:
            directory, _, name = path.rpartition(os.sep)
            regular = listings.get(directory)
            if regular is None:
                regular = listings[directory] = _regular_files(directory)
            inode = regular.get(name)
            if inode is None:
                continue
            proof = _prove(path, inode, size, algorithm, digest, view)
            if proof is None:
                continue
        mtime, ctime, inode, device, links = proof
        proofs.append((first + k, mtime, ctime, inode, device, links, cached))
        done += size
        if cache_dir is not None:
            identity = (size, mtime, ctime, inode, device)
            # A file changed in the tick its hashing started could change again unseen.
            if cached or settled(identity, started):
                files.append((path, identity, ((algorithm, digest),)))
    return ("proved", index, first, proofs, files, done)

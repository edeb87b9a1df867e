"""The biggest files proved while ``check --all`` starts, before the app is imported or the environment read.

A check spends its first few hundred milliseconds on one core: the interpreter, the
imports, the command line, every dist-info's METADATA (230-370 ms from the spawn on a
16-core GPU host, every other core idle). :func:`start`, called by the command line before
anything heavy is imported, forks a child that finds the environment's site directories
(asking ``--python``'s interpreter, started with ``-I -S``, as the probe does: nothing of
the environment runs), reads in each RECORD the lines of files of 16 MiB or more
(:func:`wheeldoctor.where.plain_rows.biggest_rows`) where the cache has no entry for the
distribution, and proves those files biggest first, in threads (hashing and reading
release the GIL), as a worker would (:func:`wheeldoctor.engine.proof_workers.prove_file`).

When the verification starts, :meth:`Ahead.stop` says so: no file is started after that,
and the child answers with the files it is still hashing; their results follow as they end.
The verification (:mod:`wheeldoctor.engine.spread`) takes a result only for the row of that
very path, algorithm, digest and size, as it takes an early piece's, and forks one worker
fewer for each file still being hashed, one more as each ends. Whatever is not proved here
(a file that changed, could not be read, never started, or a child that died) is proved as
before. Nothing is written; the child never outlives the command.
"""

from __future__ import annotations

import contextlib
import os

TYPE_CHECKING = False  # typing costs milliseconds before the probe starts
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

Key = tuple[str, str, bytes, int]
"""A row proved ahead: (absolute path, algorithm, raw digest, size)."""
Result = tuple[tuple[int, int, int, int, int] | None, bool]
"""What proving one row gave: (mtime_ns, ctime_ns, inode, device, links) or None, and whether
the file had settled (changed long enough before it was read to be cached)."""

#: Threads the child needs, at the least, to be worth starting (see :func:`start`).
_LEAST_THREADS = 3
#: The command's child, between :func:`start` and :func:`take` (one at most).
_running: list[Ahead] = []


class Ahead:
    """The child proving the biggest files, seen from the command."""

    __slots__ = ("control", "pid", "results")

    def __init__(self, pid: int, control: int, results: int) -> None:
        self.pid = pid
        self.control = control
        #: The child's frames: ("proved ahead", *Key, *Result), one ("stopped", in flight), then EOF.
        self.results = results

    def stop(self) -> tuple[dict[Key, Result], set[Key], bytearray]:
        """Tell the child to start no other file: (rows proved so far, rows still being hashed, bytes read past).

        Whatever the child says after that comes on :attr:`results`, after those bytes. A
        child that is gone has proved what it said, and hashes nothing more.
        """
        from wheeldoctor.engine.workers import complete_frames

        done: dict[Key, Result] = {}
        buffer = bytearray()
        try:
            os.write(self.control, b"s")
            while True:
                chunk = os.read(self.results, 1 << 16)
                if not chunk:
                    return done, set(), buffer
                buffer += chunk
                for frame in complete_frames(buffer):
                    if frame[0] == "stopped":
                        return done, {tuple(key) for key in frame[1]}, buffer
                    key, result = proved_ahead(frame)
                    done[key] = result
        except OSError:
            return done, set(), buffer

    def close(self) -> None:
        """End the child and its probe (whatever it still hashes is not wanted), and reap it."""
        import signal

        for fd in (self.control, self.results):
            with contextlib.suppress(OSError):
                os.close(fd)
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:  # no group of its own (yet): the child alone
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


def proved_ahead(frame: Sequence[Any]) -> tuple[Key, Result]:
    """The row and the result in one of the child's ("proved ahead", *Key, *Result) frames."""
    return (frame[1], frame[2], frame[3], frame[4]), (frame[5], frame[6])


def start(python: str | None, jobs: int | None, no_cache: bool) -> None:
    """Fork the child for a ``check --all`` of ``python``'s environment (None: this one's).

    The child's threads take the CPUs the workers will take, one fewer (for the command
    itself). Nothing is started for fewer than 4 (``--jobs``, else the CPUs this process may
    use): on 2 cores the child's probe and imports left its one thread 27 ms of hashing
    before the workers started, while they took the second core from the command's own.
    """
    threads = (jobs if jobs is not None else _cpus()) - 1
    if threads < _LEAST_THREADS or _running or not hasattr(os, "fork"):
        return
    control_read, control_write = os.pipe()
    results_read, results_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 0
        try:
            # A group of its own, with the probe it starts: ended together (see Ahead.close).
            os.setpgid(0, 0)
            os.close(control_write)
            os.close(results_read)
            _child(python, threads, no_cache, control_read, results_write)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    with contextlib.suppress(OSError):  # as the child does: whichever comes first
        os.setpgid(pid, pid)
    os.close(control_read)
    os.close(results_write)
    _running.append(Ahead(pid, control_write, results_read))
    import atexit

    atexit.register(_end)


def take() -> Ahead | None:
    """The running child, for the verification to use (once), or None."""
    return _running.pop() if _running else None


def _end() -> None:
    running = take()
    if running is not None:
        running.close()


def _cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _child(python: str | None, threads: int, no_cache: bool, control: int, out: int) -> None:
    """Plan and prove in threads until told to stop; then finish what was started."""
    import signal
    import threading

    # Default handlers: no traceback from here (in a group of its own, the command ends it on ^C).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    state = _State(out)
    planner = threading.Thread(target=_plan_and_prove, args=(state, python, threads, no_cache), daemon=True)
    planner.start()
    with contextlib.suppress(OSError):
        os.read(control, 1)  # "s", or nothing once the command is gone
    with state.lock:
        state.stopped = True
        state.send(("stopped", sorted(state.started - state.done)))
    planner.join()


class _State:
    """What the child's threads share, under one lock: the rows to prove, those started and done."""

    def __init__(self, out: int) -> None:
        import threading

        self.lock = threading.Lock()
        self.out = out
        self.rows: list[Key] = []
        self.started: set[Key] = set()
        self.done: set[Key] = set()
        self.stopped = False

    def send(self, frame: tuple[Any, ...]) -> None:
        """One frame to the command (the caller holds the lock); lost if the command is gone."""
        from wheeldoctor.engine.workers import send

        try:
            send(self.out, frame)  # type: ignore[arg-type]
        except OSError:
            self.stopped = True

    def next_row(self) -> Key | None:
        with self.lock:
            if self.stopped or not self.rows:
                return None
            row = self.rows.pop()
            self.started.add(row)
            return row


def _plan_and_prove(state: _State, python: str | None, threads: int, no_cache: bool) -> None:
    import threading

    rows = _biggest(python, no_cache, lambda: state.stopped)
    rows.sort(key=lambda row: row[3])  # biggest last: taken first
    with state.lock:
        state.rows = rows
    hashers = [threading.Thread(target=_prove_rows, args=(state,), daemon=True) for _ in range(min(threads, len(rows)))]
    for hasher in hashers:
        hasher.start()
    for hasher in hashers:
        hasher.join()


def _prove_rows(state: _State) -> None:
    import time

    from wheeldoctor.engine.cache import settled
    from wheeldoctor.engine.digests import BUFFER_SIZE
    from wheeldoctor.engine.proof_workers import prove_file

    view = memoryview(bytearray(BUFFER_SIZE))
    listings: dict[str, dict[str, int]] = {}
    while (row := state.next_row()) is not None:
        path, algorithm, digest, size = row
        began = time.time_ns()
        proved = prove_file(path, size, algorithm, digest, None, view, listings)
        proof = None if proved is None else proved[0]
        ready = proof is not None and settled((size, *proof[:4]), began)
        with state.lock:
            state.done.add(row)
            state.send(("proved ahead", *row, proof, ready))


def _biggest(python: str | None, no_cache: bool, stopped: Callable[[], bool] = lambda: False) -> list[Key]:
    """Every plain row of a file of 16 MiB or more, in the dist-infos of the environment's site directories.

    Only where the cache (unless turned off) has no entry for the distribution: an entry may
    vouch for its files, which one ``lstat`` each then proves. A row listed by two
    distributions is proved once. Once ``stopped``, nothing more is read.
    """
    answer = _site_dirs(python)  # the probe runs while the rest is imported
    import re

    from wheeldoctor.engine import cache
    from wheeldoctor.model.sitedirs import prefix_forms, root_for
    from wheeldoctor.where.filesystem import ReadError, read_regular
    from wheeldoctor.where.plain_rows import EARLY, biggest_rows

    found = answer()
    if found is None:
        return []
    locations, prefixes = found
    cache_dir = None if no_cache else cache.directory()
    if cache_dir is not None and not cache.usable(cache_dir):
        cache_dir = None
    forms = prefix_forms(prefixes)
    # A size column of as many digits as EARLY's, or more: most RECORDs have none, and are not split.
    big = re.compile(rb",\d{%d,}\r?$" % len(str(EARLY)), re.MULTILINE)
    rows: dict[Key, None] = {}
    for location in locations:
        root = root_for(location, forms)
        try:
            with os.scandir(location) as entries:
                names = [entry.name for entry in entries if entry.name.lower().endswith(".dist-info")]
        except OSError:
            continue
        for name in names:
            if stopped():
                return []
            dist_path = os.path.join(location, name)
            if cache_dir is not None and os.path.lexists(cache.entry_path(cache_dir, dist_path)):
                continue
            data = read_regular(os.path.join(dist_path, "RECORD"), _RECORD_LIMIT)
            if isinstance(data, ReadError) or not big.search(data):
                continue
            try:
                text = data.decode()
            except UnicodeDecodeError:
                continue
            rows.update(dict.fromkeys(biggest_rows(text, location, root, EARLY)))
    return list(rows)


#: RECORD above this size is not read here (the verification refuses it with a finding).
_RECORD_LIMIT = 64 << 20


def _site_dirs(python: str | None) -> Callable[[], tuple[list[str], list[str]] | None]:
    """What gives (site directories, prefixes) of ``python``'s environment, or of this interpreter's
    (None if unknown); ``python``'s probe is started at once."""
    import sys

    from wheeldoctor.model.sitedirs import current_prefixes, locations

    if python is None:
        paths = sys.path if getattr(sys.flags, "safe_path", False) else sys.path[1:]
        found = (locations(paths), current_prefixes())
        return lambda: found
    from wheeldoctor.where import probe

    python = probe.resolved(python)
    if not probe.runnable(python):
        return lambda: None
    try:
        process = probe.spawn(python, False)
    except OSError:
        return lambda: None

    def answer() -> tuple[list[str], list[str]] | None:
        import json

        try:
            stdout, _ = process.communicate(timeout=30)
            said = json.loads(stdout.strip().splitlines()[-1])
            return locations(str(d) for d, _ in said["site_dirs"]), [str(p) for p in said["prefixes"]]
        except Exception:  # whatever it is, the command's own probe says it
            process.kill()
            return None

    return answer

"""How tasks are run: threads in this process, or forked workers; both give a schedule the same results.

An :class:`Executor` runs a schedule (:mod:`.schedule`) to its end: each of its workers
asks the schedule for a task, runs the task's body (the same function in either
executor, :mod:`.tasks`) and hands the result back. :class:`Threads` runs them in this
process, for a library caller and wherever forking is not safe; hashlib releases the GIL
on large updates, so big files hash on every core. :class:`Workers` forks them (Linux, the
command line only: :mod:`.fork`), where tens of thousands of small files and RECORDs to
parse would queue threads for the GIL; results come back as frames on pipes (:mod:`.wire`).
A worker that dies, or cannot be forked, only leaves its task undone: the schedule keeps
it as an orphan, for this process. No worker outlives this process.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
from collections.abc import Callable, Sequence
from functools import partial
from typing import Generic, Protocol, TypeVar

from wheeldoctor.engine.digests import examine
from wheeldoctor.engine.fork import fork, reap
from wheeldoctor.engine.tasks import Scratch
from wheeldoctor.engine.wire import Result, Stop, Task, frames, receive, send
from wheeldoctor.model.files import FileState, FileStatus, HashRequest, Known, Progress

T = TypeVar("T")
R = TypeVar("R")
T_co = TypeVar("T_co", covariant=True)
R_contra = TypeVar("R_contra", contravariant=True)


def default_jobs() -> int:
    """CPUs this process may run on (affinity and cgroup cpusets count, not the host's total)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class Schedule(Protocol[T_co, R_contra]):
    """Hands out tasks and takes results (:class:`wheeldoctor.engine.schedule.Schedule` is one)."""

    def next_task(self, worker: object) -> T_co | Stop | None:
        """The next task for ``worker``; None to wait for another worker's result; a ``Stop`` to end."""

    def handle(self, worker: object, result: R_contra) -> None:
        """What ``worker``'s task gave."""

    def lost(self, worker: object) -> None:
        """``worker`` died with its task undone."""


class Executor(Protocol):
    """Runs a schedule's tasks with ``work`` until the schedule says stop (or, forked, until no worker is left)."""

    def run(self, schedule: Schedule[Task, Result], work: Callable[[Task, Scratch], Result]) -> None:
        """Run ``schedule``'s tasks."""


class Threads(Generic[T, R]):
    """``jobs`` threads of this process (one: this thread alone); an exception in a task is raised here."""

    def __init__(self, jobs: int) -> None:
        self._jobs = max(1, jobs)

    def run(self, schedule: Schedule[T, R], work: Callable[[T, Scratch], R]) -> None:
        """Run every task of ``schedule``; re-raise the first exception a task raised."""
        ready = threading.Condition()
        failures: list[BaseException] = []

        def loop(me: int) -> None:
            scratch = Scratch()
            while True:
                with ready:
                    while (task := schedule.next_task(me)) is None and not failures:
                        ready.wait()
                if failures or isinstance(task, Stop):
                    return
                try:
                    result = work(task, scratch)  # type: ignore[arg-type]  # not None, checked above
                except BaseException as e:  # re-raised in the caller, never lost in a thread
                    with ready:
                        failures.append(e)
                        ready.notify_all()
                    return
                with ready:
                    schedule.handle(me, result)
                    ready.notify_all()

        if self._jobs == 1:
            loop(0)
        else:
            threads = [
                threading.Thread(target=loop, args=(i,), name="wheeldoctor", daemon=True) for i in range(self._jobs)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        if failures:
            raise failures[0]


class Workers:
    """``jobs`` forked workers; this process only schedules. Forked only where that is safe now."""

    def __init__(self, jobs: int) -> None:
        self._jobs = max(1, jobs)

    def run(self, schedule: Schedule[Task, Result], work: Callable[[Task, Scratch], Result]) -> None:
        """Run ``schedule``'s tasks until it says stop or no worker is left (what is left is the caller's)."""
        workers: dict[int, tuple[int, int]] = {}  # result fd -> (pid, task fd)
        finished = False
        try:
            for _ in range(self._jobs):  # every worker now, while no other thread runs (a progress bar's starts later)
                tasks_read, tasks_write = os.pipe()
                results_read, results_write = os.pipe()
                pid = fork(partial(_serve, work, tasks_read, results_write), keep=(tasks_read, results_write))
                os.close(tasks_read)
                os.close(results_write)
                if pid is None:  # not safe to fork now, or it failed: what no worker does, the caller does
                    os.close(tasks_write)
                    os.close(results_read)
                    continue
                workers[results_read] = (pid, tasks_write)
            _Dispatch(schedule, {fd: task_fd for fd, (_, task_fd) in workers.items()}).run()
            finished = True
        finally:
            for fd, (pid, task_fd) in workers.items():
                for end in (fd, task_fd):
                    with contextlib.suppress(OSError):
                        os.close(end)
                reap(pid, stop=not finished)


class _Dispatch:
    """The parent's side of :class:`Workers`: tasks out, results in, as each worker comes free."""

    def __init__(self, schedule: Schedule[Task, Result], tasks: dict[int, int]) -> None:
        self._schedule = schedule
        self._tasks = tasks  # result fd -> task fd
        self._buffers = {fd: bytearray() for fd in tasks}  # what each live worker sent, not yet read
        self._parked: list[int] = []

    def run(self) -> None:
        for fd in list(self._tasks):
            self._assign(fd)
        while self._buffers:
            ready, _, _ = select.select(list(self._buffers), [], [])
            for fd in ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:  # the worker is gone: what it held is an orphan
                    del self._buffers[fd]
                    if fd in self._parked:
                        self._parked.remove(fd)
                    self._schedule.lost(fd)
                    continue
                buffer = self._buffers[fd]
                buffer += chunk
                for result in frames(buffer):
                    self._schedule.handle(fd, result)  # type: ignore[arg-type]  # workers send results
                    self._assign(fd)
            parked, self._parked = self._parked, []
            for fd in parked:
                self._assign(fd)

    def _assign(self, fd: int) -> None:
        task = self._schedule.next_task(fd)
        if task is None:
            self._parked.append(fd)  # a RECORD still being read may give more
            return
        # A worker that died cannot take it: its end of the pipe says so, and the task is an orphan.
        with contextlib.suppress(OSError):
            send(self._tasks[fd], task)


def _serve(work: Callable[[Task, Scratch], Result], tasks: int, out: int) -> None:
    """The body of a worker: do what the parent asks until it says stop."""
    scratch = Scratch()
    while True:
        task = receive(tasks)
        if task is None or isinstance(task, Stop):
            return
        send(out, work(task, scratch))  # type: ignore[arg-type]  # the parent sends tasks


def examine_all(
    requests: Sequence[HashRequest],
    jobs: int | None = None,
    progress: Progress | None = None,
    known: Known | None = None,
) -> list[FileState]:
    """Every request's exact state (:func:`wheeldoctor.engine.digests.examine`), in request order, by threads.

    The biggest file first, so the longest hash starts at once and small files fill the gaps.
    ``known`` offers earlier digests per path, used while the file keeps their fingerprint.
    """
    states: list[FileState | None] = [None] * len(requests)
    order = sorted(range(len(requests)), key=lambda i: requests[i].size_hint, reverse=True)

    def work(index: int, scratch: Scratch) -> tuple[int, FileState]:
        return index, examine(requests[index], scratch.view, known)

    Threads[int, tuple[int, FileState]](min(jobs or default_jobs(), len(requests)) or 1).run(
        _Exact(order, states, progress), work
    )
    return [state for state in states if state is not None]


class _Exact:
    """The exact path's schedule: request indices, biggest first; each state stored at its index."""

    def __init__(self, order: list[int], states: list[FileState | None], progress: Progress | None) -> None:
        self._pending = order[::-1]  # pop() takes the biggest
        self._states = states
        self._progress = progress

    def next_task(self, worker: object) -> int | Stop:
        return self._pending.pop() if self._pending else Stop()

    def handle(self, worker: object, result: tuple[int, FileState]) -> None:
        index, state = result
        self._states[index] = state
        if self._progress is not None:
            self._progress(1, (state.size or 0) if state.status is FileStatus.HASHED else 0)

    def lost(self, worker: object) -> None:
        """Threads are never lost."""

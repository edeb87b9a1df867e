"""Forked workers that stream results back as length-prefixed marshal frames over pipes.

marshal, not pickle: the payloads are plain tuples of ints, strings and bytes, and the
reader is our own parent process. One mechanism for every worker pool (hashing,
proving), so that forking, streaming and cleaning up are written once.
"""

from __future__ import annotations

import contextlib
import gc
import marshal
import os
import select
import signal
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

Share = TypeVar("Share")

_HEADER = 4


def send(fd: int, batch: list[Any]) -> None:
    """Write one frame holding ``batch``, however many writes the pipe takes."""
    payload = marshal.dumps(batch)
    view = memoryview(len(payload).to_bytes(_HEADER, "big") + payload)
    while view:
        view = view[os.write(fd, view) :]


def receive(fds: list[int]) -> Iterator[list[Any]]:
    """Yield each frame from any of ``fds`` as it completes, until every writer has closed."""
    buffers = {fd: bytearray() for fd in fds}
    while buffers:
        ready, _, _ = select.select(list(buffers), [], [])
        for fd in ready:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                del buffers[fd]
                continue
            buffer = buffers[fd]
            buffer += chunk
            yield from complete_frames(buffer)


def complete_frames(buffer: bytearray) -> Iterator[list[Any]]:
    """Take every whole frame off the front of ``buffer``; a partial one stays for the next read."""
    while len(buffer) >= _HEADER:
        size = int.from_bytes(buffer[:_HEADER], "big")
        if len(buffer) < _HEADER + size:
            return
        frame: list[Any] = marshal.loads(bytes(buffer[_HEADER : _HEADER + size]))
        del buffer[: _HEADER + size]
        yield frame


def fork_child() -> int:
    """``os.fork()``, the parent's objects frozen for the child's garbage collector.

    A child that collects walks every object it shares with the parent, and so copies the
    parent's heap page by page: a worker parsed a large RECORD 1.5x slower than its parent
    did. Frozen (``gc.freeze``), those objects are left out of the child's collections;
    the parent takes its own back at once. A caller that froze objects itself keeps them so.
    """
    ours = gc.get_freeze_count() == 0
    if ours:
        gc.freeze()
    pid = -1
    try:
        pid = os.fork()
    finally:
        if pid != 0 and ours:  # the parent, or a fork that failed
            gc.unfreeze()
    return pid


def deal(weighed: Sequence[tuple[int, Share]], shares: int) -> list[list[Share]]:
    """Deal ``(weight, item)`` pairs into at most ``shares`` lists of about equal weight.

    The heaviest first, each to the lightest share so far: one heavy item never shares a
    worker with the next heaviest.
    """
    dealt: list[tuple[int, list[Share]]] = [(0, []) for _ in range(min(shares, len(weighed)))]
    for weight, item in sorted(weighed, key=lambda pair: pair[0], reverse=True):
        lightest = min(range(len(dealt)), key=lambda i: dealt[i][0])
        total, share = dealt[lightest]
        share.append(item)
        dealt[lightest] = (total + weight, share)
    return [share for _, share in dealt]


def run_workers(
    shares: Sequence[Share], work: Callable[[Share, Callable[[list[Any]], None]], None]
) -> Iterator[list[Any]]:
    """Fork one worker per share, each running ``work(share, send)``; yield their frames as they come.

    A worker exits without running any cleanup of ours (``os._exit``); one that fails
    only leaves its share undelivered, for the caller to do itself. However the parent
    stops reading (done, an exception, ^C), no worker outlives it.
    """
    children: dict[int, int] = {}  # read end -> pid
    finished = False
    try:
        for share in shares:
            read_end, write_end = os.pipe()
            pid = fork_child()
            if pid == 0:  # the worker: never returns
                os.close(read_end)
                _work(share, work, write_end)
            os.close(write_end)
            children[read_end] = pid
        yield from receive(list(children))
        finished = True
    finally:
        for read_end, pid in children.items():
            with contextlib.suppress(OSError):
                os.close(read_end)
            if not finished:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
            os.waitpid(pid, 0)


def _work(share: Share, work: Callable[[Share, Callable[[list[Any]], None]], None], out: int) -> None:
    code = 0
    try:
        # Default handlers: a ^C aimed at the command must not print a traceback per worker.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        work(share, lambda batch: send(out, batch))
    except BaseException:
        code = 1
    finally:
        os._exit(code)

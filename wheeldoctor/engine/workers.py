"""Forked workers that stream results back as length-prefixed marshal frames over pipes.

marshal, not pickle: the payloads are plain tuples of ints, strings and bytes, and the
reader is our own parent process. One mechanism for every worker pool (hashing,
proving), so that forking, streaming and cleaning up are written once.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import select
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any, TypeVar

from wheeldoctor.engine.fork import fork, reap

Share = TypeVar("Share")

_HEADER = 4


def send(fd: int, batch: list[Any] | tuple[Any, ...]) -> None:
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

    A worker is forked by :func:`wheeldoctor.engine.fork.fork`; one that fails, or that could
    not be forked safely, only leaves its share undelivered, for the caller to do itself. However the parent
    stops reading (done, an exception, ^C), no worker outlives it.
    """
    children: dict[int, int] = {}  # read end -> pid
    finished = False
    try:
        for share in shares:
            read_end, write_end = os.pipe()
            pid = fork(partial(work, share, partial(send, write_end)), keep=(write_end,))
            os.close(write_end)
            if pid is None:  # not safe to fork now: the share is left undelivered, for the caller
                os.close(read_end)
                continue
            children[read_end] = pid
        yield from receive(list(children))
        finished = True
    finally:
        for read_end, pid in children.items():
            with contextlib.suppress(OSError):
                os.close(read_end)
            reap(pid, stop=not finished)

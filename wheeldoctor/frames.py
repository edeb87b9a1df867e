"""Length-prefixed marshal frames over pipes: how forked workers hand results back.

marshal, not pickle: the payloads are plain tuples of ints, strings and bytes, and the
reader is our own parent process.
"""

from __future__ import annotations

import marshal
import os
import select
from collections.abc import Iterator
from typing import Any

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
            while len(buffer) >= _HEADER:
                size = int.from_bytes(buffer[:_HEADER], "big")
                if len(buffer) < _HEADER + size:
                    break
                frame: list[Any] = marshal.loads(bytes(buffer[_HEADER : _HEADER + size]))
                del buffer[: _HEADER + size]
                yield frame

"""One piece of work in a forked child, running beside whatever the parent does next.

For the command line only, where the parent goes on to hash in its own forked workers:
work that needs no result from the hashing (the walk for unowned files) then costs no
wall time on a machine with cores to spare. Forked only where forking is safe (Linux, one
thread: see :func:`wheeldoctor.engine.fork.can_fork`); elsewhere, or if the child fails,
the work runs in the parent when its result is asked for.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Any

from wheeldoctor.engine.fork import fork as forked
from wheeldoctor.engine.fork import reap
from wheeldoctor.engine.workers import receive, send


class Beside:
    """``work`` (returning plain marshal-able data) under way in a child, or not yet run at all."""

    def __init__(self, work: Callable[[], list[Any]], *, fork: bool = True) -> None:
        self._work = work
        self._child: tuple[int, int] | None = None  # (pid, read end)
        if not fork:
            return
        read_end, write_end = os.pipe()
        pid = forked(lambda: send(write_end, work()), keep=(write_end,))
        os.close(write_end)
        if pid is None:  # not safe to fork now: the work runs when its result is asked for
            os.close(read_end)
            return
        self._child = (pid, read_end)

    def result(self) -> list[Any]:
        """Wait for the child's answer; the work runs here if there was no child or it did not deliver."""
        if self._child is None:
            return self._work()
        pid, read_end = self._child
        self._child = None
        try:
            frames = list(receive([read_end]))
        finally:
            with contextlib.suppress(OSError):
                os.close(read_end)
            reap(pid)
        return frames[0] if frames else self._work()

    def cancel(self) -> None:
        """Stop the child, if one runs: no child outlives a command that failed."""
        if self._child is None:
            return
        pid, read_end = self._child
        self._child = None
        with contextlib.suppress(OSError):
            os.close(read_end)
        reap(pid, stop=True)

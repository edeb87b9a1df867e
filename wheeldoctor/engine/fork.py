"""Forked children, started and ended in one place: the only module that calls ``os.fork``.

A child is forked only where that is safe at the very moment of the fork (Linux, no other
thread alive: a lock another thread holds would stay held forever in the child), so a
thread started after a caller's own check (a progress bar's refresh) cannot slip in
between. The child keeps only the descriptors it is given (and the standard streams),
takes ^C the default way (no traceback per child), and ends with ``os._exit``: no cleanup
of the parent's runs twice. A child that fails says why on stderr under
``WHEELDOCTOR_DEBUG=1``; the parent reads every child's exit status when it reaps it, and
a failure is kept in :data:`failures` for the command line to note (its work is then done
in the parent, as if no child had been started).
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable

#: One line per child that failed (a non-zero exit or a signal the parent did not send).
failures: list[str] = []


def can_fork() -> bool:
    """Whether forking is safe now: Linux, and no other thread running."""
    # Other systems' libraries are not fork-safe (macOS), so only Linux, and only single-threaded.
    return sys.platform.startswith("linux") and threading.active_count() == 1


def fork(body: Callable[[], object], keep: Iterable[int] = ()) -> int | None:
    """Run ``body`` in a forked child that keeps only the descriptors ``keep``; its pid, or None
    when forking is not safe now, or fails (no process left under a container's pid limit, no
    memory): nothing was started then, and the caller does the work itself (a failure is noted).

    The parent's objects are frozen for the child's garbage collector: a child that collects
    walks every object it shares with the parent and so copies the parent's heap page by page.
    The parent takes its own back at once; a caller that froze objects itself keeps them so.
    """
    if not can_fork():
        return None
    ours = gc.get_freeze_count() == 0
    if ours:
        gc.freeze()
    pid = -1
    try:
        pid = os.fork()
        if pid == 0:
            _child(body, sorted(set(keep)))  # never returns
    except OSError as e:
        why = e.strerror or str(e)
        failures.append(f"a worker process could not be started ({why}); its work was done in the main process")
        return None
    finally:
        if pid != 0 and ours:  # the parent, or a fork that failed
            gc.unfreeze()
    return pid


def _child(body: Callable[[], object], keep: list[int]) -> None:
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        _close_inherited(keep)
        body()
    except BaseException:
        code = 1
        if os.environ.get("WHEELDOCTOR_DEBUG") == "1":
            with contextlib.suppress(BaseException):
                import traceback

                traceback.print_exc()
                sys.stderr.flush()
    finally:
        os._exit(code)


_MAX_FD = os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 1 << 16


def _close_inherited(keep: list[int]) -> None:
    """Close every inherited descriptor but the standard streams and ``keep``.

    The open ones are listed where the system can (``/proc/self/fd``): a kernel without
    ``close_range`` makes ``os.closerange`` call ``close`` once per possible descriptor, and a
    container's limit may allow a billion.
    """
    try:
        open_now = [int(name) for name in os.listdir("/proc/self/fd")]
    except (OSError, ValueError):  # no /proc: every possible descriptor
        low = 3
        for fd in keep:
            if fd >= low:
                os.closerange(low, fd)
                low = fd + 1
        os.closerange(low, _MAX_FD)
        return
    for fd in open_now:
        if fd > 2 and fd not in keep:
            with contextlib.suppress(OSError):  # the listing's own descriptor, closed already
                os.close(fd)


def reap(pid: int, *, stop: bool = False) -> None:
    """Wait for child ``pid`` (sending it SIGTERM first where ``stop``), and note a failure.

    A child stopped here has not failed; one that exited non-zero, or was killed by a signal
    not sent here (the OOM killer's), has.
    """
    if stop:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0 and not (stop and code == -signal.SIGTERM):
        why = f"exit status {code}" if code > 0 else f"signal {-code}"
        failures.append(f"a worker process failed ({why}); its work was done in the main process")

"""Reading one file into a hash for the gate's cold path, with the standard library alone.

What is opened must be the file that was stat'ed (the same inode), its fingerprint is
taken once it is open, and a file that changes while it is read is not trusted. The
biggest file of a distribution can get a reader thread of its own, so that copying it
out of the page cache overlaps its hashing on another core.
"""

from __future__ import annotations

import _thread
import hashlib
import os
import stat

from wheeldoctor.engine import cache

TYPE_CHECKING = False  # typing and collections.abc stay off the gate's path to its first hashed byte
if TYPE_CHECKING:
    from collections.abc import Callable

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
#: Files below this size are read with one call.
_SMALL = 1 << 16
#: Buffers small enough to stay in a core's cache between the copy and the hash.
_CHUNK = 1 << 20
#: Its reader's buffers: few, large hand-overs (each takes the GIL twice) queue for it less.
_READ_AHEAD_CHUNK = 4 << 20


def spawn(target: Callable[[], None]) -> _thread.LockType:
    """Start ``target`` in a thread; the lock returned is released when it has finished."""
    done = _thread.allocate_lock()
    done.acquire()

    def run() -> None:
        try:
            target()
        finally:
            done.release()

    _thread.start_new_thread(run, ())
    return done


def hash_regular(
    path: str, st: os.stat_result, algorithm: str, scratch: list[memoryview], read_ahead: bool
) -> tuple[cache.Identity, bytes] | None:
    """The fingerprint and digest of the regular file ``st`` describes; None if it changed while read.

    As :func:`wheeldoctor.where.filesystem.open_regular`: what is opened must be the file that was
    stat'ed (same inode), and its fingerprint is taken once it is open.
    """
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except (OSError, ValueError):
        return None
    try:
        opened = os.fstat(fd)
        if (opened.st_ino, opened.st_dev) != (st.st_ino, st.st_dev) or not stat.S_ISREG(opened.st_mode):
            return None
        identity = cache.identity(opened)
        size = identity[0]
        hasher = hashlib.new(algorithm)
        if size < _SMALL:
            # One byte more than expected both fetches the file and proves where it ends.
            data = os.read(fd, size + 1)
            total = len(data)
            hasher.update(data)
        elif read_ahead:
            total = _feed_read_ahead(fd, size, hasher.update)
        else:
            if not scratch:
                scratch.append(memoryview(bytearray(_CHUNK)))
            total = _feed(fd, size, hasher.update, scratch[0])
        after = cache.identity(os.fstat(fd))
    except OSError:
        return None
    finally:
        os.close(fd)
    if total != size or after != identity:
        return None
    return identity, hasher.digest()


def _feed(fd: int, size: int, update: Callable[[memoryview], object], buffer: memoryview) -> int:
    """Read ``fd`` through ``buffer`` into ``update``; stop past ``size`` (a growing file is never read forever)."""
    total = 0
    while total <= size:
        n = os.readv(fd, [buffer])
        if not n:
            break
        update(buffer[:n])
        total += n
    return total


def _feed_read_ahead(fd: int, size: int, update: Callable[[memoryview], object]) -> int:
    """:func:`_feed`, with a reader thread filling one buffer while this thread hashes the other.

    Raises what a read raises. The reader reads a duplicate of ``fd`` that it closes
    itself, so that even a reader left behind (this thread interrupted while waiting for
    it) never reads a descriptor the caller has closed and the process reused.
    """
    buffers = (memoryview(bytearray(_READ_AHEAD_CHUNK)), memoryview(bytearray(_READ_AHEAD_CHUNK)))
    # Per buffer, two locks used as semaphores: "free" (the reader may fill it), "full" (hash it).
    free = [_thread.allocate_lock(), _thread.allocate_lock()]
    full = [_thread.allocate_lock(), _thread.allocate_lock()]
    for lock in full:
        lock.acquire()
    lengths = [0, 0]
    failure: list[BaseException] = []
    stop = [False]
    own = os.dup(fd)

    def read() -> None:
        index, total = 0, 0
        try:
            while True:
                free[index].acquire()
                n = 0
                if not stop[0] and total <= size:  # past the size it has changed: stop reading
                    n = os.readv(own, [buffers[index]])
                lengths[index] = n
                full[index].release()
                if not n:
                    return
                total += n
                index ^= 1
        except BaseException as e:  # raised in the hashing thread, which must not wait forever
            failure.append(e)
            lengths[index] = 0
            if full[index].locked():
                full[index].release()
        finally:
            os.close(own)

    reader = None
    try:
        try:
            reader = spawn(read)
        except RuntimeError:  # no thread to be had: this one reads too
            os.close(own)
            return _feed(fd, size, update, buffers[0])
        total, index = 0, 0
        while True:
            full[index].acquire()
            n = lengths[index]
            if not n:
                break
            update(buffers[index][:n])
            total += n
            free[index].release()
            index ^= 1
    finally:
        stop[0] = True
        for lock in free:  # wake the reader wherever it waits; it then sees ``stop``
            if lock.locked():
                lock.release()
        if reader is not None:
            with reader:
                pass
    if failure:
        raise failure[0]
    return total

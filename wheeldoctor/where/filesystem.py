"""Reading files that may be hostile: FIFOs, devices, loops, huge or changing files.

Everything that opens a file found in an environment goes through here, so that no
caller can block on a FIFO, read a device, or follow a path it was not meant to.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadError:
    """Why a file could not be read; ``missing`` separates absence from other failures."""

    message: str
    missing: bool = False
    #: The path exists but is a FIFO, device, directory or socket.
    not_regular: bool = False
    #: A regular file, larger than the limit it was read under.
    too_large: bool = False


def describe_mode(mode: int) -> str:
    """Name the file type of a non-regular ``st_mode`` ("a FIFO", "a directory", …)."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def describe_os_error(e: OSError) -> ReadError:
    """Turn an OSError from stat or open into a one-line reason."""
    if e.errno in (errno.ENOENT, errno.ENOTDIR):
        return ReadError(message="does not exist", missing=True)
    if e.errno == errno.ELOOP:
        return ReadError(message="is a symlink loop")
    if e.errno in (errno.EACCES, errno.EPERM):
        return ReadError(message="permission denied")
    return ReadError(message=e.strerror or str(e))


def open_regular(path: str) -> tuple[int, os.stat_result] | ReadError:
    """Open ``path`` for reading only if it is a regular file; return the fd and its stat.

    stat comes first so that a device is never opened (opening some has effects);
    O_NONBLOCK guards the window in which the path could be swapped for a FIFO, and the
    fstat after open confirms that what was opened is what was checked.
    """
    try:
        st = os.stat(path)
    except OSError as e:
        return describe_os_error(e)
    if not stat.S_ISREG(st.st_mode):
        return ReadError(message=f"is {describe_mode(st.st_mode)}", not_regular=True)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as e:
        return describe_os_error(e)
    try:
        opened = os.fstat(fd)
    except OSError as e:
        os.close(fd)
        return describe_os_error(e)
    if (opened.st_ino, opened.st_dev) != (st.st_ino, st.st_dev) or not stat.S_ISREG(opened.st_mode):
        os.close(fd)
        return ReadError(message="changed while it was being opened")
    return fd, opened


def read_regular(path: str, limit: int) -> bytes | ReadError:
    """Read a whole small file (RECORD, METADATA), refusing anything over ``limit`` bytes."""
    chunks: list[bytes] = []
    done = stream_regular(path, limit, chunks.append)
    return done if isinstance(done, ReadError) else b"".join(chunks)


#: How much :func:`stream_regular` reads at a time.
CHUNK = 1 << 20


def stream_regular(path: str, limit: int, sink: Callable[[bytes], None]) -> int | ReadError:
    """Pass a regular file to ``sink`` in chunks of at most :data:`CHUNK` bytes; its size, or why not.

    For files too large to hold whole (a padded ``.pth``): memory stays one chunk, and
    nothing over ``limit`` bytes is read at all.
    """
    opened = open_regular(path)
    if isinstance(opened, ReadError):
        return opened
    fd, st = opened
    try:
        if st.st_size > limit:
            return ReadError(message=f"is {st.st_size} bytes, over the {limit}-byte limit", too_large=True)
        total = 0
        while chunk := os.read(fd, CHUNK):
            total += len(chunk)
            if total > limit:
                return ReadError(message=f"grew past the {limit}-byte limit while being read", too_large=True)
            sink(chunk)
        return total
    except OSError as e:
        return describe_os_error(e)
    finally:
        os.close(fd)

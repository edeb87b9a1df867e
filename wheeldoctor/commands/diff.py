"""``diff``: read snapshots of several nodes and say what differs (:mod:`wheeldoctor.judge.drift`)."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence

from wheeldoctor.formats.snapshot import MAX_BYTES, SnapshotError, decode
from wheeldoctor.judge.drift import Drift, compare
from wheeldoctor.model.snapshot import Snapshot


def read_snapshot(path: str) -> Snapshot:
    """The snapshot in file ``path``; :class:`SnapshotError` (one line naming the file) if it is none.

    At most :data:`~wheeldoctor.formats.snapshot.MAX_BYTES` (and one more) are read, from a
    regular file or a pipe (``diff ref.json <(wheeldoctor snapshot)``): a device given by
    mistake is refused, not read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise SnapshotError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISFIFO(mode):
            os.set_blocking(fd, True)  # opened without waiting for a writer; now wait for its bytes
        elif not stat.S_ISREG(mode):
            raise SnapshotError(f"{path}: not a regular file or a pipe")
        chunks = []
        left = MAX_BYTES + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as e:
        raise SnapshotError(f"{path}: cannot read: {e.strerror or e}") from None
    finally:
        os.close(fd)
    try:
        return decode(b"".join(chunks))
    except SnapshotError as e:
        raise SnapshotError(f"{path}: {e}") from None


def run_diff(paths: Sequence[str]) -> tuple[Drift | None, list[str]]:
    """Compare the snapshots in ``paths``: the drift, or None with one error line per unreadable file."""
    snapshots: list[Snapshot] = []
    errors: list[str] = []
    for path in paths:
        try:
            snapshots.append(read_snapshot(path))
        except SnapshotError as e:
            errors.append(str(e))
    if errors:
        return None, errors
    return compare(paths, snapshots), []

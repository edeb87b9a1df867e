"""``diff``: read snapshots of several nodes and say what differs (:mod:`wheeldoctor.judge.drift`)."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass

from wheeldoctor.formats.snapshot import MAX_BYTES, SnapshotError, decode
from wheeldoctor.judge.drift import Drift, IgnoreRule, compare
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


@dataclass(frozen=True, slots=True, kw_only=True)
class Compared:
    """What ``diff`` did with its inputs: the drift (None where an input could not be read), and why."""

    drift: Drift | None
    errors: tuple[str, ...] = ()
    """One line per input that could not be read."""
    repeated: tuple[str, ...] = ()
    """Inputs that name a file given before them: counted once."""


def run_diff(paths: Sequence[str], *, reference: str | None = None, ignore: Sequence[IgnoreRule] = ()) -> Compared:
    """Compare the snapshots in ``paths`` (and ``reference``, the one every other is compared with).

    A file given twice (by the same or another name: the same device and inode) is read and
    counted once, so it cannot vote twice; it is named in ``repeated``.
    """
    given = [reference, *paths] if reference is not None else list(paths)
    seen: set[tuple[int, int]] = set()
    kept: list[str] = []
    repeated: list[str] = []
    for path in given:
        identity = _identity(path)
        if identity is not None and identity in seen:
            repeated.append(path)
            continue
        if identity is not None:
            seen.add(identity)
        kept.append(path)
    snapshots: list[Snapshot] = []
    errors: list[str] = []
    for path in kept:
        try:
            snapshots.append(read_snapshot(path))
        except SnapshotError as e:
            errors.append(str(e))
    if errors or not kept:
        return Compared(drift=None, errors=tuple(errors), repeated=tuple(repeated))
    drift = compare(kept, snapshots, reference=0 if reference is not None else None, ignore=ignore)
    return Compared(drift=drift, repeated=tuple(repeated))


def _identity(path: str) -> tuple[int, int] | None:
    """A regular file's device and inode; None for anything else (a pipe is read once by nature)."""
    try:
        found = os.stat(path)
    except OSError:
        return None  # reading it says why
    return (found.st_dev, found.st_ino) if stat.S_ISREG(found.st_mode) else None

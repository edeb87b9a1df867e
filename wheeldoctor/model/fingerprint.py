"""Files' fingerprints (size, mtime_ns, ctime_ns, inode, device): taken from a stat, and when one may be trusted.

Stdlib only and cheap to import (no dataclasses, no typing): the gate's warm path loads it.
What is trusted: any change to a file's bytes moves its ctime (see :mod:`wheeldoctor.engine.cache`).
"""

from __future__ import annotations

import os
import time

#: A file whose ctime is not older than this when hashing starts is hashed but not cached:
#: a write in the same timestamp tick (a few ms on Linux) could leave its fingerprint unchanged.
SETTLE_NS = 50_000_000
#: The same for filesystems that keep whole seconds (FAT keeps two).
SETTLE_COARSE_NS = 2_000_000_000

Identity = tuple[int, int, int, int, int]
"""(size, mtime_ns, ctime_ns, inode, device): a file's fingerprint, as a plain tuple."""


def identity(st: os.stat_result) -> Identity:
    """The fingerprint of a stat result."""
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def record_identity(dist_path: str) -> Identity | None:
    """The fingerprint of a dist-info's RECORD, or None when it cannot be stat'ed."""
    try:
        return identity(os.stat(os.path.join(dist_path, "RECORD")))
    except (OSError, ValueError):
        return None


def settled_record_identity(dist_path: str) -> Identity | None:
    """RECORD's fingerprint to key an entry on, taken before RECORD is read (a later change
    moves it); None if RECORD cannot be stat'ed or changed too recently to be told apart."""
    started = time.time_ns()
    found = record_identity(dist_path)
    return found if found is not None and settled(found, started) else None


def settled(fingerprint: Identity, started_ns: int) -> bool:
    """Whether a file last changed long enough before ``started_ns`` to be cached safely."""
    ctime = fingerprint[2]
    window = SETTLE_COARSE_NS if ctime % 1_000_000_000 == 0 else SETTLE_NS
    return ctime < started_ns - window

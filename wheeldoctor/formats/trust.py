"""Whether a policy file (a config, a baseline) is yours, as ssh's StrictModes and git's safe.directory decide.

A file that accepts findings decides what wheeldoctor stays silent about: whoever can
write it, or replace it by writing a directory above it, can silence any finding. So
the file and every directory above it, to the filesystem root, must be owned by the
current user or root and writable by no one else (group included). A directory that
is world-writable with the sticky bit and owned by root (``/tmp``) passes: there, no
one can rename or replace another user's files, and the file itself is still judged.
Both the path as given and the path its symlinks resolve to are judged.
"""

from __future__ import annotations

import os
import stat


def untrusted(path: str) -> str | None:
    """Why ``path`` cannot be trusted as policy input, in words; None when it is yours.

    A path that cannot be stat'ed is left to the reader, which says why it cannot be read.
    """
    me = os.geteuid()
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    why = _why(st, me, directory=False)
    if why is not None:
        return f"it {why}"
    seen: set[str] = set()
    for start in (os.path.dirname(os.path.abspath(path)), os.path.dirname(os.path.realpath(path))):
        for folder in _upwards(start):
            if folder in seen:
                continue
            seen.add(folder)
            try:
                st = os.stat(folder)
            except (OSError, ValueError):
                continue
            why = _why(st, me, directory=True)
            if why is not None:
                return f"the directory {folder} above it {why}"
    return None


def _upwards(folder: str) -> list[str]:
    out = [folder]
    while True:
        parent = os.path.dirname(folder)
        if parent == folder:
            return out
        out.append(parent)
        folder = parent


def _why(st: os.stat_result, me: int, *, directory: bool) -> str | None:
    if st.st_uid not in (me, 0):
        return f"is owned by uid {st.st_uid}, neither you (uid {me}) nor root"
    if st.st_mode & 0o022:
        if directory and st.st_mode & stat.S_ISVTX and st.st_uid == 0:
            return None  # /tmp: others may add files, never rename or replace ours
        who = "group and others" if st.st_mode & 0o022 == 0o022 else "group" if st.st_mode & 0o020 else "others"
        return f"is writable by its {who} (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def refusal(path: str, why: str) -> str:
    """The one line that says a policy file is refused, and why."""
    return (
        f"{path}: refused: {why}; a config or baseline is read only when it is yours "
        "(owned by you or root, writable by no one else)"
    )

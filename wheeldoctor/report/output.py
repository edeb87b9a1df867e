"""Where a finished report goes: a file replaced atomically, or a file appended to (a job summary)."""

from __future__ import annotations

import os
from contextlib import suppress


class OutputError(OSError):
    """A report could not be written; the message names the file and why."""


def write_atomic(path: str, content: str) -> None:
    """Replace ``path`` with ``content`` in one step: a reader never sees half a report.

    The text is UTF-8; characters it cannot hold (undecodable file names) are written as
    backslash escapes. A path that exists and is not a regular file (``/dev/null``,
    ``/dev/stdout``, a named pipe) is written to, never replaced: run as root, a rename would
    put a regular file where the device was. Raises :class:`OutputError`.
    """
    if _special(path):
        try:
            with open(path, "w", encoding="utf-8", errors="backslashreplace") as stream:
                stream.write(content)
        except OSError as e:
            raise OutputError(f"cannot write {path}: {e.strerror or e}") from None
        return
    directory = os.path.dirname(os.path.abspath(path))
    try:
        import tempfile  # it imports random, which seeds itself: only when a file is written

        fd, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", dir=directory)
    except OSError as e:
        raise OutputError(f"cannot write {path}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as stream:
            stream.write(content)
            stream.flush()
            os.fsync(stream.fileno())
        umask = os.umask(0o022)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # mkstemp's 0600 would surprise whoever reads the report
        os.replace(temporary, path)
    except OSError as e:
        with suppress(OSError):
            os.unlink(temporary)
        raise OutputError(f"cannot write {path}: {e.strerror or e}") from None


def _special(path: str) -> bool:
    """Whether ``path`` (followed through links) exists and is not a regular file."""
    import stat

    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:  # absent (or unreadable): the atomic path says what is wrong
        return False


def append(path: str, content: str) -> None:
    """Append ``content`` to ``path`` (a file someone else owns, like ``$GITHUB_STEP_SUMMARY``)."""
    try:
        with open(path, "a", encoding="utf-8", errors="backslashreplace") as stream:
            stream.write(content)
    except OSError as e:
        raise OutputError(f"cannot append to {path}: {e.strerror or e}") from None

"""What a computation read, each path with its fingerprint from before it was read (for the memos)."""

from __future__ import annotations

import os

from wheeldoctor.model.fingerprint import Identity, identity

TYPE_CHECKING = False  # typing costs to import
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from wheeldoctor.where.filesystem import ReadError

    #: ``keeper(kind, inputs, compute)``: what was kept for ``kind`` and ``inputs`` while every
    #: path noted in the :class:`Read` handed to ``compute`` is unchanged, else ``compute``'s
    #: answer, kept. What comes back was read from a file: the caller checks its shape.
    Keeper = Callable[[str, tuple[str, ...], Callable[["Read"], object]], object]


def fingerprint(path: str) -> Identity | None:
    """The fingerprint of ``path`` now; None where there is none. Raises OSError (or ValueError) otherwise."""
    try:
        return identity(os.stat(path))
    except (FileNotFoundError, NotADirectoryError):
        return None


class Read:
    """The paths a computation read, each with its fingerprint from before it was read."""

    def __init__(self) -> None:
        self.fingerprints: dict[str, Identity | None] = {}
        self.complete = True
        """False once something read may not be what is there: the result is then not kept."""

    def note(self, path: str) -> None:
        """Take ``path``'s fingerprint, before it is read; a second look keeps the first (taken before any read)."""
        if path in self.fingerprints:
            return
        try:
            self.fingerprints[path] = fingerprint(path)
        except (OSError, ValueError):
            self.complete = False

    def doubt(self) -> None:
        """Say that what was read may not be what is there: keep nothing."""
        self.complete = False

    def failed(self, error: OSError | ReadError) -> None:
        """A read failed: doubt, unless the path is gone or not a regular file (its fingerprint says so).

        Any other failure may pass (an I/O error, no descriptor left), so what was read
        instead (nothing) is not what is there.
        """
        if isinstance(error, OSError):
            lasting = isinstance(error, (FileNotFoundError, NotADirectoryError))
        else:  # a ReadError (not imported here: the gate's warm path loads this module)
            lasting = error.missing or error.not_regular
        if not lasting:
            self.complete = False

    def add(self, fingerprints: Iterable[tuple[str, Identity | None]], complete: bool) -> None:
        """Take what another process noted."""
        for path, found in fingerprints:
            self.fingerprints.setdefault(path, found)
        self.complete = self.complete and complete

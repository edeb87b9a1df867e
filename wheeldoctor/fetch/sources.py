"""A wheel's bytes read by span: from a file (a local wheel, a download), or by HTTP range requests.

:mod:`wheeldoctor.formats.zip_members` reads the end record, the central directory and two
members through ``read(start, end)``; nothing else of the wheel is read or fetched.
"""

from __future__ import annotations

import os
from collections.abc import Callable

#: A smaller read than this past what is held fetches this much: the members read next lie close by.
MIN_FETCH = 64 << 10


class SourceError(OSError):
    """The bytes cannot be had (a short read, the server stopped honouring Range, a budget spent); one line."""


class FileSource:
    """A file opened by the caller, read with ``pread``: its size fixed when it was looked at."""

    def __init__(self, fd: int, size: int) -> None:
        self.fd = fd
        self.size = size

    def read(self, start: int, end: int) -> bytes:
        """Exactly the bytes ``start`` to ``end``; a file that shrank is a :class:`SourceError`."""
        parts = []
        at = start
        while at < end:
            chunk = os.pread(self.fd, min(end - at, 1 << 24), at)
            if not chunk:
                raise SourceError(f"the file ends at byte {at}, before {end}")
            parts.append(chunk)
            at += len(chunk)
        return b"".join(parts)


class RangedSource:
    """A remote file of ``size`` bytes that fetches only the spans read, at most ``budget`` bytes in all.

    ``fetch(start, end)`` makes one range request. Spans fetched are kept and served again.
    """

    def __init__(self, size: int, fetch: Callable[[int, int], bytes], held: tuple[int, bytes], *, budget: int) -> None:
        self.size = size
        self._fetch = fetch
        self._held: list[tuple[int, bytes]] = [held]
        self.fetched = 0
        self._budget = budget

    def read(self, start: int, end: int) -> bytes:
        """Exactly the bytes ``start`` to ``end``, fetched (with some slack after) unless held."""
        for offset, data in self._held:
            if offset <= start and end <= offset + len(data):
                return data[start - offset : end - offset]
        fetch_end = min(self.size, max(end, start + MIN_FETCH))
        # Stop short of bytes already held, so a read just before the tail is not fetched twice.
        for offset, _ in self._held:
            if end <= offset < fetch_end:
                fetch_end = offset
        if self.fetched + fetch_end - start > self._budget:
            raise SourceError(f"more than {self._budget >> 20} MiB of ranges to read its RECORD")
        data = self._fetch(start, fetch_end)
        self.fetched += len(data)
        self._held.append((start, data))
        return data[: end - start]

"""A remote file read by HTTP range requests, as a seekable file ``zipfile`` can open."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable, Sequence

#: A smaller read than this past what is held fetches this much (zipfile reads in small pieces).
_MIN_FETCH = 64 << 10


class RangeError(OSError):
    """A range came back short or the server stopped honouring Range; one line."""


class RangedFile(io.RawIOBase):
    """A read-only, seekable view of a remote file that fetches only the byte ranges read.

    ``zipfile`` reads the end of central directory and the central directory through it,
    then the members asked for; nothing else is fetched.
    """

    def __init__(self, size: int, fetch: Callable[[int, int], bytes], first: tuple[int, bytes]) -> None:
        super().__init__()
        self._size = size
        self._fetch = fetch
        self._held: list[tuple[int, bytes]] = [first]
        self._position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._size}[whence]
        self._position = max(0, base + offset)
        return self._position

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        view = memoryview(buffer).cast("B")
        end = min(self._size, self._position + len(view))
        if end <= self._position:
            return 0
        data = self._span(self._position, end)
        view[: len(data)] = data
        self._position += len(data)
        return len(data)

    def prefetch(self, infos: Sequence[zipfile.ZipInfo]) -> None:
        """Fetch the members' local headers and data in one request when they lie close together."""
        slack = 1024  # the local header's extra field, which the central directory does not give
        starts = [i.header_offset for i in infos]
        ends = [i.header_offset + 30 + len(i.orig_filename.encode()) + slack + i.compress_size for i in infos]
        if max(ends) - min(starts) <= 2 * sum(e - s for s, e in zip(starts, ends, strict=True)) + _MIN_FETCH:
            self._span(min(starts), min(max(ends), self._size))
        else:
            for start, end in zip(starts, ends, strict=True):
                self._span(start, min(end, self._size))

    def _span(self, start: int, end: int) -> bytes:
        for offset, data in self._held:
            if offset <= start and end <= offset + len(data):
                return data[start - offset : end - offset]
        fetch_end = min(self._size, max(end, start + _MIN_FETCH))
        # Stop short of bytes already held, so a read just before the tail is not fetched twice.
        for offset, _ in self._held:
            if end <= offset < fetch_end:
                fetch_end = offset
        data = self._fetch(start, fetch_end)
        if len(data) != fetch_end - start:
            raise RangeError(f"the server sent {len(data)} bytes for a range of {fetch_end - start}")
        self._held.append((start, data))
        return data[: end - start]

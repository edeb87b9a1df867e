"""One value in a file of the cache directory: a header naming its writer, a checksum, marshal data.

The memos beside the verification cache (:mod:`wheeldoctor.engine.metadata_memo`,
:mod:`wheeldoctor.engine.result_memo`) keep one value per file this way. The header names
the writing code (:data:`CODE`, the cache's) and Python (marshal is only promised within one), the
checksum vouches for the bytes; what the value holds is checked by whoever reads it.
"""

from __future__ import annotations

import marshal
import zlib
from typing import Any

from wheeldoctor.engine import cache

_CHECKSUM_BYTES = 4


def __getattr__(name: str) -> bytes:
    """``CODE``: what the code that writes and reads memos is, the verification cache's
    (:func:`.cache.code`), found when first asked for, not when this module is imported."""
    if name == "CODE":
        return cache.code()
    raise AttributeError(name)


def seal(header: bytes, value: Any) -> bytes:
    """``value`` as the bytes of a memo file written under ``header``."""
    payload = marshal.dumps(value)
    return header + zlib.crc32(payload).to_bytes(_CHECKSUM_BYTES, "big") + payload


def unseal(header: bytes, data: bytes | None) -> object:
    """The value :func:`seal` wrote under ``header``; None for no data, another writer or damage."""
    start = len(header) + _CHECKSUM_BYTES
    if data is None or not data.startswith(header):
        return None
    payload = memoryview(data)[start:]
    if zlib.crc32(payload) != int.from_bytes(data[len(header) : start], "big"):
        return None
    try:
        return marshal.loads(payload)
    except (EOFError, ValueError, TypeError, MemoryError):  # a crafted length asks for gigabytes
        return None

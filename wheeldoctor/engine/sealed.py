"""One value in a file of the cache directory: a header naming its writer, a checksum, marshal data.

The memos beside the verification cache (:mod:`wheeldoctor.engine.metadata_memo`,
:mod:`wheeldoctor.engine.result_memo`) keep one value per file this way. The header names
the writing code (:data:`CODE`) and Python (marshal is only promised within one), the
checksum vouches for the bytes; what the value holds is checked by whoever reads it.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import zlib
from typing import Any

_CHECKSUM_BYTES = 4
#: The stages whose code decides what a memo holds: reading, parsing, obtaining and judging.
_STAGES = ("model", "formats", "where", "engine", "judge")


def _code() -> bytes:
    """A digest of the source of the stages in :data:`_STAGES`: a memo written by other code is a miss.

    The version string is not bumped with every change; the code is what a memo depends on.
    """
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    digest = hashlib.sha256()
    for stage in _STAGES:
        folder = os.path.join(package, stage)
        try:
            names = sorted(name for name in os.listdir(folder) if name.endswith(".py"))
        except OSError:
            continue
        for name in names:
            try:
                with open(os.path.join(folder, name), "rb") as source:
                    data = source.read()
            except OSError:
                data = b""
            digest.update(b"%s/%s %d\n" % (stage.encode(), name.encode(), len(data)))
            digest.update(data)
    return digest.hexdigest()[:16].encode()


#: What the code that writes and reads memos is (see :func:`_code`), for their headers.
CODE = _code()


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

"""conda's record of one installed package: ``PREFIX/conda-meta/NAME-VERSION-BUILD.json``.

Pure: takes the file's bytes. The fields used are the ones conda writes when it links a
package: ``name``, ``version``, ``build`` and ``paths_data.paths``, whose entries give
each file's prefix-relative ``_path``, ``path_type``, ``sha256`` and ``size_in_bytes``,
and, since conda 4.12, ``sha256_in_prefix`` (the digest after a prefix placeholder was
replaced at install time).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, NamedTuple


class CondaFormatError(ValueError):
    """A conda-meta record that does not parse."""


class CondaPath(NamedTuple):
    """One linked file as conda recorded it; ``sha256`` None when nothing vouches for its installed bytes."""

    path: str
    sha256: bytes | None
    size: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class CondaPackage:
    """The parts of a conda-meta record that verification needs."""

    name: str
    version: str
    build: str
    files: tuple[str, ...]
    """Every prefix-relative path the package linked (``files``)."""
    paths: tuple[CondaPath, ...]
    """The regular files with their digests (``paths_data``); empty in records older than conda 4.3."""


def parse_conda_meta(data: bytes) -> CondaPackage:
    """Parse one conda-meta JSON record; raise :class:`CondaFormatError` when it is not one."""
    try:
        document = json.loads(data)
        name, version = str(document["name"]), str(document["version"])
    except (ValueError, KeyError, TypeError) as e:
        raise CondaFormatError(f"not a conda-meta record ({e})") from e
    files = tuple(str(f) for f in document.get("files") or () if isinstance(f, str))
    paths_data = document.get("paths_data") or {}
    entries = paths_data.get("paths") if isinstance(paths_data, dict) else None
    paths = tuple(p for p in (_path(e) for e in entries or () if isinstance(e, dict)) if p is not None)
    return CondaPackage(name=name, version=version, build=str(document.get("build", "")), files=files, paths=paths)


def _path(entry: dict[str, Any]) -> CondaPath | None:
    path = entry.get("_path")
    if not isinstance(path, str) or entry.get("path_type", "hardlink") not in ("hardlink", "copy"):
        return None  # softlinks, directories, generated .pyc and entry points carry no digest of theirs
    digest = _hex(entry.get("sha256_in_prefix"))
    size = None
    if digest is None and not entry.get("prefix_placeholder"):
        # Linked unchanged: the package's own digest and size are the installed file's.
        digest = _hex(entry.get("sha256"))
        raw = entry.get("size_in_bytes")
        size = raw if isinstance(raw, int) and raw >= 0 else None
    return CondaPath(path, digest, size)


def _hex(value: object) -> bytes | None:
    if not isinstance(value, str) or len(value) != 64:
        return None
    try:
        return bytes.fromhex(value)
    except ValueError:
        return None

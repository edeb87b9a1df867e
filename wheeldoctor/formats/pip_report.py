"""``pip install --dry-run --report FILE``'s JSON (report version 1) as a lock: what pip would install.

pip resolved it for one environment already, so nothing is selected here: every ``install``
item whose ``download_info`` names a wheel is taken, with its URL and hash.
"""

from __future__ import annotations

import posixpath
import urllib.parse
from collections.abc import Mapping
from typing import Any

from packaging.utils import NormalizedName, canonicalize_name

from wheeldoctor.formats.lock_model import LockedPackage, LockError, check_url, locked_wheel

#: The report ``version`` this reader knows.
REPORT_VERSION = "1"


def select_pip_report(
    document: Mapping[str, Any], base: str
) -> tuple[tuple[LockedPackage, ...], frozenset[NormalizedName]]:
    """The packages of a pip installation report, each with the wheel pip chose (None for an sdist or a directory)."""
    if document.get("version") != REPORT_VERSION:
        raise LockError(f"version: pip report version {document.get('version')!r} is not supported (only 1)")
    items = document.get("install")
    if not isinstance(items, list):
        raise LockError("install: missing or not an array")
    packages = []
    for index, item in enumerate(items):
        key = f"install[{index}]"
        if not isinstance(item, dict):
            raise LockError(f"{key}: not an object")
        metadata = item.get("metadata")
        info = item.get("download_info")
        if not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str):
            raise LockError(f"{key}.metadata.name: missing or not a string")
        if not isinstance(info, dict) or not isinstance(info.get("url"), str):
            raise LockError(f"{key}.download_info.url: missing or not a string")
        name = canonicalize_name(metadata["name"])
        version = metadata.get("version") if isinstance(metadata.get("version"), str) else None
        url: str = info["url"]
        check_url(url, f"{key}.download_info")  # before anything reads a file name out of it
        filename = urllib.parse.unquote(posixpath.basename(urllib.parse.urlsplit(url).path))
        archive = info.get("archive_info")
        if not isinstance(archive, dict) or not filename.endswith(".whl"):
            source = "directory" if "dir_info" in info else "vcs" if "vcs_info" in info else "sdist"
            packages.append(LockedPackage(name=name, version=version, wheels=(), selected=None, source=source))
            continue
        wheel = locked_wheel(
            f"{key}.download_info",
            filename=filename,
            url=url,
            path=None,
            sha256=_sha256(archive, f"{key}.download_info.archive_info"),
            size=None,
            base=base,
        )
        packages.append(LockedPackage(name=name, version=version, wheels=(wheel,), selected=wheel))
    return tuple(packages), frozenset(p.name for p in packages)


def _sha256(archive: Mapping[str, Any], key: str) -> str | None:
    hashes = archive.get("hashes")
    if isinstance(hashes, dict) and isinstance(hashes.get("sha256"), str):
        return str(hashes["sha256"])
    legacy = archive.get("hash")
    if isinstance(legacy, str) and legacy.startswith("sha256="):
        return legacy.removeprefix("sha256=")
    if hashes is not None and not isinstance(hashes, dict):
        raise LockError(f"{key}.hashes: not an object")
    return None

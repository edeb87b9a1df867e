"""Locks as data: the locked wheels and packages a lock selects, and the rules they share.

Pure. :mod:`wheeldoctor.formats.lock` reads a lock file into these; ``pylock`` and
``uv_lock`` select from each format; ``lock_target`` describes the interpreter selected for.
"""

from __future__ import annotations

import os
import posixpath
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from packaging.utils import NormalizedName

from wheeldoctor.model.errors import InputError

if TYPE_CHECKING:
    from packaging.tags import Tag

#: URL schemes a locked file may come from; any other is refused.
SCHEMES = ("https", "http", "file")


class LockError(InputError):
    """The lock cannot be read or used; the message is one line naming the key."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LockedWheel:
    """One wheel a lock lists: where it is, its hash and size as locked, its tags."""

    filename: str
    url: str | None = None
    path: str | None = None
    """A local path, absolute (resolved against the lock's directory)."""
    sha256: str | None = None
    """Lower-case hex, as locked; None when the lock gives no sha256."""
    size: int | None = None
    tags: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True, kw_only=True)
class LockedPackage:
    """One package a lock installs, its wheels, and the wheel chosen for the target."""

    name: NormalizedName
    version: str | None
    wheels: tuple[LockedWheel, ...]
    selected: LockedWheel | None
    """None when the target gets it from an sdist, a directory or VCS: no wheel to judge."""
    source: str = "wheel"
    """``wheel``, or what the lock installs instead (``sdist``, ``directory``, ``vcs``, ``archive``, ``virtual``)."""
    index: str | None = None
    """The index (``https://…/simple``) the lock names for it, where it names one; for an SBOM's purl."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LockTarget:
    """The interpreter a lock is selected for: its marker environment and supported tags, best first."""

    markers: Mapping[str, str]
    tags: tuple[Tag, ...]
    extras: tuple[str, ...] = ()
    groups: tuple[str, ...] | None = None
    """Dependency groups to select; None for the lock's defaults."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Lock:
    """A lock as selected for one target."""

    path: str
    kind: str
    """``pylock`` or ``uv.lock``."""
    packages: tuple[LockedPackage, ...]
    listed: frozenset[NormalizedName] = field(default_factory=frozenset)
    """Every name the lock holds, for any target: an installed package the target does not select
    but the lock holds is worded as locked only for other markers, extras or groups (WD083)."""


def locked_wheel(
    key: str,
    *,
    filename: str | None,
    url: str | None,
    path: str | None,
    sha256: str | None,
    size: int | None,
    base: str,
) -> LockedWheel:
    """A LockedWheel from a lock's fields, its URL and name checked; ``key`` names it in errors."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    if url is not None:
        check_url(url, key)
    if filename is None:
        where = url or path or ""
        filename = urllib.parse.unquote(posixpath.basename(urllib.parse.urlsplit(where).path))
    try:
        tags = parse_wheel_filename(filename)[3]
    except InvalidWheelFilename as e:
        raise LockError(f"{key}: not a wheel file name ({e})") from e
    if sha256 is not None:
        sha256 = sha256.lower()
        if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
            raise LockError(f"{key}.hashes.sha256: not a sha256 hex digest")
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
        raise LockError(f"{key}.size: not a size in bytes")
    if path is not None:
        path = os.path.normpath(os.path.join(base, path))
    return LockedWheel(
        filename=filename, url=url, path=path, sha256=sha256, size=size, tags=frozenset(str(t) for t in tags)
    )


def check_url(url: str, key: str) -> None:
    """Refuse a URL whose scheme is not http(s) or file, or that has no host where one is needed."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError as e:
        raise LockError(f"{key}.url: not a URL ({e})") from e
    if parts.scheme.lower() not in SCHEMES:
        raise LockError(f"{key}.url: scheme {parts.scheme!r} refused (http, https or file only)")
    if parts.scheme.lower() != "file" and not parts.hostname:
        raise LockError(f"{key}.url: no host")


def best_wheel(wheels: Sequence[LockedWheel], tags: Sequence[Tag]) -> LockedWheel | None:
    """The wheel whose best tag ranks highest among ``tags`` (best first); None when none fits.

    packaging's own selector, the one ``Pylock.select`` uses, so both formats pick alike.
    """
    from packaging.tags import create_compatible_tags_selector
    from packaging.utils import parse_wheel_filename

    select = create_compatible_tags_selector(tags)
    return next(select((w, parse_wheel_filename(w.filename)[3]) for w in wheels), None)


def index_url(value: object) -> str | None:
    """An index's URL as a lock names it: an http(s) URL, else None."""
    if not isinstance(value, str):
        return None
    return value if value.startswith(("https://", "http://")) and value.isprintable() else None

"""dpkg's database, parsed: file lists, md5sums, status stanzas, diversions, path filters.

Pure: every function takes bytes or text, never a path, so a recorded admin directory
reads the same as the live one. Paths are returned absolute (``/usr/lib/...``), relative
to dpkg's root, decoded with ``surrogateescape`` as the rest of wheeldoctor reads paths.
Layouts as dpkg writes them (``/var/lib/dpkg/info/PKG.list``, ``PKG.md5sums``,
``/var/lib/dpkg/status``, ``/var/lib/dpkg/diversions``) and as debsums reads them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import NamedTuple

_MD5_LINE = re.compile(rb"([0-9A-Fa-f]{32}) [ *]?(.+)")


class DpkgFormatError(ValueError):
    """A dpkg database file that does not parse."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PackageStatus:
    """The fields of one status stanza that verification needs."""

    name: str
    architecture: str | None
    version: str | None
    status: str
    """``install ok installed``; the last word is the state."""
    multi_arch: str | None
    conffiles: frozenset[str]
    """Conffiles are checked by ``dpkg --verify`` from this stanza, not from md5sums; debsums skips them."""

    @property
    def info_name(self) -> str:
        """The name dpkg gives its info files: ``PKG``, or ``PKG:ARCH`` for a ``Multi-Arch: same`` package."""
        if self.multi_arch == "same" and self.architecture:
            return f"{self.name}:{self.architecture}"
        return self.name

    @property
    def installed(self) -> bool:
        """Whether the package's files are on disk (installed, or unpacked but not yet configured)."""
        state = self.status.rsplit(" ", 1)[-1]
        return state in {"installed", "unpacked", "half-configured", "triggers-awaited", "triggers-pending"}


class Diversion(NamedTuple):
    """A file moved aside by ``dpkg-divert``: the packaged copy lives at ``to``."""

    original: str
    to: str
    by: str | None
    """The diverting package; None for a local diversion (``:``)."""


def _path(raw: bytes) -> str:
    text = raw.decode("utf-8", "surrogateescape")
    # md5sums spells paths relative to the root ("usr/bin/pip"), very old ones with "./".
    if text.startswith("./"):
        text = text[1:]
    return text if text.startswith("/") else "/" + text


def parse_list(data: bytes) -> list[str]:
    """The paths of one ``PKG.list`` (files, directories, symlinks), as dpkg installed them."""
    return [_path(line) for line in data.split(b"\n") if line and line != b"/."]


def parse_md5sums(data: bytes) -> dict[str, bytes]:
    """``PKG.md5sums``: absolute path -> raw MD5 digest.

    Each line is 32 hex digits, two spaces (or `` *``), the path relative to the root,
    as ``md5sum`` prints it. Raises :class:`DpkgFormatError` on the first line that is not.
    """
    sums: dict[str, bytes] = {}
    for number, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        match = _MD5_LINE.fullmatch(line.rstrip(b"\r"))
        if match is None:
            raise DpkgFormatError(f"line {number} is not 'MD5  PATH'")
        sums[_path(match.group(2))] = bytes.fromhex(match.group(1).decode("ascii"))
    return sums


def _stanzas(text: str) -> Iterator[dict[str, str]]:
    fields: dict[str, str] = {}
    last: str | None = None
    for line in text.splitlines():
        if not line.strip():
            if fields:
                yield fields
            fields, last = {}, None
        elif line[0] in " \t":
            if last is not None:
                fields[last] += "\n" + line.strip()
        else:
            name, _, value = line.partition(":")
            last = name.strip().lower()
            fields[last] = value.strip()
    if fields:
        yield fields


def parse_status(data: bytes, wanted: set[str] | None = None) -> dict[str, PackageStatus]:
    """The status file's stanzas by info name (``PKG`` or ``PKG:ARCH``); only ``wanted`` ones when given.

    ``wanted`` holds info names; a stanza of another package is skipped after its first
    line, so reading a few dozen packages' stanzas does not parse the thousands of others.
    """
    bare = None if wanted is None else {name.partition(":")[0] for name in wanted}
    packages: dict[str, PackageStatus] = {}
    for raw in data.split(b"\n\n"):
        chunk = raw.strip(b"\n")
        if bare is not None:
            first = chunk.partition(b"\n")[0]
            if not first.startswith(b"Package:") or first[8:].strip().decode("utf-8", "replace") not in bare:
                continue
        for fields in _stanzas(chunk.decode("utf-8", "surrogateescape")):
            package = _package(fields)
            if package is not None and (wanted is None or package.info_name in wanted):
                packages[package.info_name] = package
    return packages


def _package(fields: dict[str, str]) -> PackageStatus | None:
    name = fields.get("package")
    if not name:
        return None
    conffiles = frozenset(
        _path(line.split()[0].encode("utf-8", "surrogateescape"))
        for line in fields.get("conffiles", "").splitlines()
        if line.split()
    )
    return PackageStatus(
        name=name,
        architecture=fields.get("architecture"),
        version=fields.get("version"),
        status=fields.get("status", ""),
        multi_arch=fields.get("multi-arch"),
        conffiles=conffiles,
    )


def parse_diversions(data: bytes) -> dict[str, Diversion]:
    """``diversions``: three lines each (original path, diverted-to path, package or ``:``)."""
    lines = [line.decode("utf-8", "surrogateescape") for line in data.split(b"\n")]
    while lines and not lines[-1]:
        lines.pop()
    if len(lines) % 3:
        raise DpkgFormatError("the diversions file does not hold whole three-line entries")
    diversions = {}
    for i in range(0, len(lines), 3):
        original, to, by = lines[i : i + 3]
        diversions[original] = Diversion(original, to, None if by == ":" else by)
    return diversions


def parse_path_filters(text: str) -> list[tuple[bool, str]]:
    """``path-exclude``/``path-include`` options of a dpkg.cfg file, in order, as (included, pattern)."""
    filters = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, _, value = line.replace("=", " ", 1).partition(" ")
        if name in ("path-exclude", "path-include") and value.strip():
            filters.append((name == "path-include", value.strip()))
    return filters


def filtered_out(path: str, filters: Sequence[tuple[bool, str]]) -> bool:
    """Whether dpkg's path filters kept ``path`` from being unpacked: the last matching filter decides.

    Patterns are fnmatch(3) globs without FNM_PATHNAME (``*`` crosses ``/``), as dpkg
    applies them; ``fnmatchcase`` matches the same way.
    """
    excluded = False
    for included, pattern in filters:
        if fnmatchcase(path, pattern):
            excluded = not included
    return excluded

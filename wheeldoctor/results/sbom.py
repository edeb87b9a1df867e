"""What an SBOM needs beyond a snapshot, as data: a distribution's licenses, an unowned file's digest."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Licenses:
    """What METADATA says of a distribution's license: an SPDX expression, or names."""

    expression: str | None
    names: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class UnownedDigest:
    """A file nobody recorded, below its site directory, with its SHA-256 (hex; None when not read)."""

    path: str
    sha256: str | None

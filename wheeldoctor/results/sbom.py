"""What an SBOM needs beyond a snapshot, as data: each distribution's licenses, source and dependencies.

Read by :mod:`wheeldoctor.commands.sbom`; rendered by :mod:`wheeldoctor.report.cyclonedx`,
which alone maps these to CycloneDX's vocabulary (SPDX ids and expressions, purls).
"""

from __future__ import annotations

from dataclasses import dataclass

from wheeldoctor.formats.direct_url import DirectUrl


@dataclass(frozen=True, slots=True, kw_only=True)
class Licenses:
    """What METADATA says of a distribution's license, as written: nothing here is interpreted yet."""

    expression: str | None
    """``License-Expression`` (core metadata 2.4): an SPDX expression, which then alone counts (PEP 639)."""
    declared: tuple[str, ...] = ()
    """Short ``License`` fields (a name or an SPDX id; one that holds a license's whole text is left out)."""
    classifiers: tuple[str, ...] = ()
    """The last part of each ``License ::`` classifier (``MIT License``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Published:
    """The file a distribution was installed from, where its digest is known: the wheel or archive."""

    sha256: str
    """Lower-case hex."""
    url: str | None
    by: str
    """Who says so: ``direct_url.json`` or ``lock``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DistributionFacts:
    """One distribution as an SBOM describes it, beyond its snapshot."""

    licenses: Licenses
    source: DirectUrl | None = None
    """Its ``direct_url.json``: None for an install from an index (or a file without one)."""
    published: Published | None = None
    index: str | None = None
    """The index it came from, where a lock names one other than PyPI."""
    requires: tuple[str, ...] = ()
    """The installed distributions it requires directly, canonical names, for the interpreter's markers."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UnownedDigest:
    """A file nobody recorded, below its site directory, with its SHA-256 (hex; None when not read)."""

    path: str
    sha256: str | None

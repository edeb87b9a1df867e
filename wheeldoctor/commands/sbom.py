"""What an SBOM needs beyond a snapshot: each distribution's licenses, and the digests of unowned files.

Both are read here, bounded: METADATA's header block (License-Expression, License and the
license classifiers) and, for at most :data:`UNOWNED_LIMIT` files nobody recorded, their
bytes (regular files only, no link followed, at most :data:`UNOWNED_BYTES` each).
"""

from __future__ import annotations

import hashlib
import os

from wheeldoctor.formats.headers import header_fields
from wheeldoctor.model.environment import InstalledDistribution
from wheeldoctor.results.check import CheckResult
from wheeldoctor.results.sbom import Licenses, UnownedDigest
from wheeldoctor.where.environment import METADATA_LIMIT
from wheeldoctor.where.filesystem import read_regular

UNOWNED_LIMIT = 1000
UNOWNED_BYTES = 64 << 20
#: A License field longer than this, or of several lines, is a license's text, not its name.
_NAME_LIMIT = 100


def licenses_of(dist: InstalledDistribution) -> Licenses:
    """The licenses METADATA declares; none where it is unreadable or says nothing."""
    legacy = dist.path.lower().endswith(".egg-info")
    path = dist.path if os.path.isfile(dist.path) else os.path.join(dist.path, "PKG-INFO" if legacy else "METADATA")
    data = read_regular(path, METADATA_LIMIT)
    if not isinstance(data, bytes):
        return Licenses(expression=None, names=())
    fields = header_fields(data)
    expressions = [v.strip() for v in fields.get("license-expression", []) if _short(v)]
    if expressions:
        return Licenses(expression=expressions[0], names=())
    names = [v.strip() for v in fields.get("license", []) if _short(v) and v.strip().upper() != "UNKNOWN"]
    for classifier in fields.get("classifier", []):
        parts = [p.strip() for p in classifier.split("::")]
        if len(parts) >= 2 and parts[0] == "License" and _short(parts[-1]) and parts[-1] != "OSI Approved":
            names.append(parts[-1])
    return Licenses(expression=None, names=tuple(dict.fromkeys(names)))


def _short(value: str) -> bool:
    text = value.strip()
    return bool(text) and len(text) <= _NAME_LIMIT and "\n" not in text and "\r" not in text


def licenses(result: CheckResult) -> dict[str, Licenses]:
    """The licenses of every distribution of ``result``, by name."""
    return {r.name: licenses_of(r.dist) for r in result.distributions if r.dist is not None}


def unowned_digests(result: CheckResult) -> tuple[UnownedDigest, ...]:
    """The first :data:`UNOWNED_LIMIT` unowned files of ``result`` (by path), with their SHA-256."""
    if result.unowned is None:
        return ()
    files = sorted(result.unowned.files, key=lambda f: f.path)[:UNOWNED_LIMIT]
    out = []
    for f in files:
        data = read_regular(f.path, UNOWNED_BYTES)
        out.append(
            UnownedDigest(path=f.relative, sha256=hashlib.sha256(data).hexdigest() if isinstance(data, bytes) else None)
        )
    return tuple(out)

"""What an SBOM needs beyond a snapshot: each distribution's licenses, source and dependencies, and the
digests of unowned files.

Read here, bounded: METADATA's header block (License-Expression, License and the license
classifiers), ``direct_url.json`` (:data:`wheeldoctor.formats.direct_url.LIMIT`) and, for at
most :data:`UNOWNED_LIMIT` files nobody recorded, their bytes (regular files only, no link
followed, at most :data:`UNOWNED_BYTES` each). Dependencies are each distribution's
Requires-Dist whose markers hold for the inspected interpreter (and for the extras other
distributions ask of it), among the distributions installed.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Collection
from typing import TYPE_CHECKING

from wheeldoctor.formats import direct_url
from wheeldoctor.formats.headers import header_fields
from wheeldoctor.judge.requirements import RequirementGraph
from wheeldoctor.model.environment import InstalledDistribution
from wheeldoctor.results.check import CheckResult
from wheeldoctor.results.sbom import DistributionFacts, Licenses, Published, UnownedDigest
from wheeldoctor.where.environment import METADATA_LIMIT
from wheeldoctor.where.filesystem import read_regular

if TYPE_CHECKING:
    from wheeldoctor.formats.lock_model import Lock, LockedPackage

UNOWNED_LIMIT = 1000
UNOWNED_BYTES = 64 << 20
#: A License field longer than this, or of several lines, is a license's text, not its name.
_NAME_LIMIT = 100


def licenses_of(dist: InstalledDistribution) -> Licenses:
    """The licenses METADATA declares, as written; none where it is unreadable or says nothing."""
    legacy = dist.path.lower().endswith(".egg-info")
    path = dist.path if os.path.isfile(dist.path) else os.path.join(dist.path, "PKG-INFO" if legacy else "METADATA")
    data = read_regular(path, METADATA_LIMIT)
    if not isinstance(data, bytes):
        return Licenses(expression=None)
    fields = header_fields(data)
    expressions = [v.strip() for v in fields.get("license-expression", []) if _short(v)]
    declared = [v.strip() for v in fields.get("license", []) if _short(v) and v.strip().upper() != "UNKNOWN"]
    classifiers = []
    for classifier in fields.get("classifier", []):
        parts = [p.strip() for p in classifier.split("::")]
        if len(parts) >= 2 and parts[0] == "License" and _short(parts[-1]) and parts[-1] != "OSI Approved":
            classifiers.append(parts[-1])
    return Licenses(
        expression=expressions[0] if expressions else None,
        declared=tuple(dict.fromkeys(declared)),
        classifiers=tuple(dict.fromkeys(classifiers)),
    )


def source_of(dist: InstalledDistribution) -> direct_url.DirectUrl | None:
    """What the dist-info's ``direct_url.json`` says it was installed from; None without a readable one."""
    if not os.path.isdir(dist.path):
        return None
    data = read_regular(os.path.join(dist.path, "direct_url.json"), direct_url.LIMIT)
    return direct_url.parse(data) if isinstance(data, bytes) else None


def facts(result: CheckResult, lock: Lock | None = None) -> dict[str, DistributionFacts]:
    """What the SBOM says of every distribution of ``result`` beyond its snapshot, by name.

    ``lock`` (``--lock``): the locked wheel's digest and index, for a distribution installed at
    the locked version from an index (``direct_url.json``'s own archive digest comes first).
    """
    dists = [r.dist for r in result.distributions if r.dist is not None]
    requires = dependencies(RequirementGraph.of(result.environment), {d.name for d in dists})
    locked: dict[str, LockedPackage] = {str(p.name): p for p in lock.packages} if lock is not None else {}
    found = {}
    for dist in dists:
        source = source_of(dist)
        published = None
        sha256 = source.digest("sha256") if source is not None and source.kind == "archive" else None
        package = locked.get(dist.name)
        index = None
        if sha256 is not None and source is not None:
            published = Published(sha256=sha256, url=source.url, by="direct_url.json")
        elif source is None and package is not None and package.version == dist.version:
            wheel = package.selected
            if wheel is not None and wheel.sha256 is not None:
                published = Published(sha256=wheel.sha256, url=wheel.url, by="lock")
            index = package.index
        found[dist.name] = DistributionFacts(
            licenses=licenses_of(dist),
            source=source,
            published=published,
            index=index,
            requires=requires.get(dist.name, ()),
        )
    return found


def dependencies(graph: RequirementGraph, names: Collection[str]) -> dict[str, tuple[str, ...]]:
    """Whom each of ``names`` requires directly, among ``names``: markers evaluated, extras asked followed.

    An extra that one distribution asks of another (``b[x]``) makes ``b``'s requirements for ``x``
    its own; they may ask further extras, so the extras asked are gathered until none is added.
    """
    asked: dict[str, set[str]] = {name: set() for name in names}
    grown = True
    while grown:
        grown = False
        for name in names:
            for wanted, extras in graph.direct(name, sorted(asked[name])).items():
                if wanted in asked and not extras <= asked[wanted]:
                    asked[wanted] |= extras
                    grown = True
    return {
        name: tuple(sorted(w for w in graph.direct(name, sorted(asked[name])) if w in asked and w != name))
        for name in names
    }


def _short(value: str) -> bool:
    text = value.strip()
    return bool(text) and len(text) <= _NAME_LIMIT and "\n" not in text and "\r" not in text


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

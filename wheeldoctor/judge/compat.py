"""Installed metadata against the target interpreter: Requires-Python, WHEEL tags, parseability.

Pure: takes an Environment (whose ``markers`` and ``tags`` describe the target interpreter,
not ours), returns findings. packaging does every parse; what it refuses becomes a finding,
never an exception. Only active distributions are judged: the others are never imported
(duplicates.py reports them).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from wheeldoctor.model.environment import Environment, InstalledDistribution
from wheeldoctor.model.findings import Code


@dataclass(frozen=True, slots=True, kw_only=True)
class CompatibilityFinding:
    """One distribution whose metadata does not fit the target, or does not parse.

    ``expected`` is what the metadata asks for, ``found`` what the target has (or the
    text that did not parse).
    """

    code: Code
    dist: str
    version: str
    message: str
    expected: str | None = None
    found: str | None = None


@dataclass(frozen=True, slots=True)
class CompatibilityReport:
    """Every compatibility finding, and which checks could not run (and why)."""

    findings: tuple[CompatibilityFinding, ...]
    python_version: str | None
    """The target's version as pip compares it with Requires-Python; None when unknown."""
    tags_known: bool
    """Whether the target's supported tags were known, so WHEEL tags were checked."""


def target_python_version(markers: Iterable[tuple[str, str]]) -> str | None:
    """``X.Y.Z`` of the target, as pip checks Requires-Python (release only, no pre-release part)."""
    from packaging.version import Version

    env = dict(markers)
    for key in ("python_full_version", "python_version"):
        try:
            return Version(env[key]).base_version
        except (KeyError, ValueError):
            # A development build reports e.g. "3.14.0+", which PEP 440 rejects.
            continue
    return None


def check_compatibility(env: Environment) -> CompatibilityReport:
    """Judge every active distribution's version, Requires-Python and WHEEL tags."""
    python_version = target_python_version(env.markers)
    supported = _Supported(frozenset(env.tags), env.tags[0] if env.tags else "none") if env.tags is not None else None
    findings: list[CompatibilityFinding] = []
    for dist in env.active():
        findings.extend(_judge(dist, python_version, supported))
    findings.sort(key=lambda f: (f.dist, f.code.value, f.message))
    return CompatibilityReport(tuple(findings), python_version, supported is not None)


@dataclass(frozen=True, slots=True)
class _Supported:
    tags: frozenset[str]
    best: str


def _judge(
    dist: InstalledDistribution, python_version: str | None, supported: _Supported | None
) -> Iterable[CompatibilityFinding]:
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    if dist.metadata is None:
        # No Name or Version: importlib.metadata and pip skip it, so nothing can require it.
        why = "; ".join(p.message for p in dist.problems if p.code is Code.METADATA_PROBLEM) or "no metadata"
        yield CompatibilityFinding(
            code=Code.METADATA_PROBLEM,
            dist=dist.name,
            version=dist.version,
            message=f"metadata unreadable ({why}): invisible to pip",
        )
        return
    try:
        Version(dist.version)
    except ValueError:  # InvalidVersion, or a number past int()'s 4,300 digits
        yield CompatibilityFinding(
            code=Code.VERSION_INVALID,
            dist=dist.name,
            version=dist.version,
            message="version is not a PEP 440 version: no version specifier can match it",
            found=dist.version,
        )
    requires_python = dist.metadata.requires_python
    if requires_python is not None:
        try:
            spec = SpecifierSet(requires_python)
            # Checked here: a number past int()'s 4,300 digits fails only when a version is compared.
            unmet = python_version is not None and not spec.contains(python_version, prereleases=True)
        except ValueError:  # InvalidSpecifier, or such a number
            yield CompatibilityFinding(
                code=Code.REQUIRES_PYTHON_INVALID,
                dist=dist.name,
                version=dist.version,
                message="Requires-Python does not parse",
                found=requires_python,
            )
        else:
            if unmet:
                yield CompatibilityFinding(
                    code=Code.REQUIRES_PYTHON_UNMET,
                    dist=dist.name,
                    version=dist.version,
                    message=f"requires Python {spec}, the target is {python_version}",
                    expected=f"Python {spec}",
                    found=python_version,
                )
    if supported is not None and dist.wheel_tags:
        yield from _judge_tags(dist, supported)


def _judge_tags(dist: InstalledDistribution, supported: _Supported) -> Iterable[CompatibilityFinding]:
    from packaging.tags import parse_tag

    built_for: set[str] = set()
    for line in dist.wheel_tags:
        try:
            # parse_tag expands compressed sets ("py2.py3-none-any"), which some WHEEL files hold.
            built_for.update(str(tag) for tag in parse_tag(line))
        except ValueError:
            yield CompatibilityFinding(
                code=Code.WHEEL_TAG_INVALID,
                dist=dist.name,
                version=dist.version,
                message="WHEEL holds a tag that does not parse",
                found=line,
            )
    if built_for and built_for.isdisjoint(supported.tags):
        shown = ", ".join(sorted(built_for))
        yield CompatibilityFinding(
            code=Code.TAGS_UNSUPPORTED,
            dist=dist.name,
            version=dist.version,
            message=f"built for {shown}: the target interpreter supports none of these tags",
            expected=f"one of the target's {len(supported.tags)} tags, best {supported.best}",
            found=shown,
        )

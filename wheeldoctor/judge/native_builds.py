"""WD093 on data alone: one project's builds for different CUDA variants installed together.

A build's variant is a token of its name (``-cu12``, ``-cu13``, ``-cuda12x``); the
unsuffixed or ``-base`` distribution of such a project is a variant too. Two builds where
neither requires the other are reported; an overlay (``nvidia-cutlass-dsl-libs-cu13``
requires its ``-libs-base``) is intended.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from wheeldoctor.judge.native_audit import NativeFinding
from wheeldoctor.model.findings import Code, Finding, Kind

_VARIANT = re.compile(r"^cu(?:da)?([0-9]+)x?$")


def cuda_variant(name: str) -> tuple[str, str] | None:
    """(project, variant) of a distribution name with a CUDA token (``nvidia-cublas-cu12`` ->
    ``nvidia-cublas``, ``cu12``; ``cupy-cuda12x`` -> ``cupy``, ``cuda12x``); None without one."""
    parts = name.split("-")
    for i, part in enumerate(parts):
        if _VARIANT.match(part):
            return "-".join(parts[:i] + parts[i + 1 :]), part
    return None


def _families(names: Iterable[str]) -> dict[str, dict[str, str]]:
    """Project -> variant -> distribution, for projects with a build named for a CUDA variant;
    the unsuffixed or ``-base`` distribution of such a project joins as ``unsuffixed`` or ``base``."""
    installed = set(names)
    families: dict[str, dict[str, str]] = {}
    for name in sorted(installed):
        parsed = cuda_variant(name)
        if parsed is not None:
            families.setdefault(parsed[0], {})[parsed[1]] = name
    for project, variants in families.items():
        for base, label in ((project, "unsuffixed"), (f"{project}-base", "base")):
            if base in installed:
                variants.setdefault(label, base)
    return families


def family_relations(names: Iterable[str], requires: Callable[[str, str], bool]) -> frozenset[tuple[str, str]]:
    """The (a, b) pairs where ``a`` requires ``b``, among builds of one project (all WD093 asks of ``requires``)."""
    return frozenset(
        (a, b)
        for variants in _families(names).values()
        for a in variants.values()
        for b in variants.values()
        if a != b and requires(a, b)
    )


def builds_mixed(installed: Sequence[tuple[str, str]], requires: Callable[[str, str], bool]) -> Iterable[NativeFinding]:
    """WD093: one project's builds for different CUDA variants installed together, neither requiring the other."""
    versions = dict(installed)
    for project, variants in sorted(_families(versions).items()):
        members = sorted(variants.items(), key=lambda item: item[1])
        unrelated = sorted(
            {a for _, a in members for _, b in members if a != b and not requires(a, b) and not requires(b, a)}
        )
        if len(unrelated) < 2:
            continue
        label = {d: v for v, d in members}
        shown = ", ".join(f"{d} {versions[d]} ({label[d]})" for d in unrelated)
        finding = Finding(
            code=Code.CUDA_BUILDS_MIXED,
            kind=Kind.MIXED,
            path=None,
            message=f"builds for different CUDA variants installed together, neither requiring the other: {shown}",
        )
        yield NativeFinding(subject=project, version=None, site_dir=None, finding=finding)

"""``uv.lock``, version 1: read by its documented shape, selected as ``uv sync`` installs."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from packaging.utils import NormalizedName, canonicalize_name

from wheeldoctor.formats.lock_model import LockedPackage, LockedWheel, LockError, LockTarget, best_wheel, locked_wheel

#: The uv.lock ``version`` this reader knows (uv's documented lockfile shape).
UV_LOCK_VERSION = 1


def select_uv_lock(
    document: Mapping[str, Any], target: LockTarget, base: str
) -> tuple[tuple[LockedPackage, ...], frozenset[NormalizedName]]:
    """What ``uv sync`` installs for ``target``: the graph from the workspace members, by markers.

    Roots are the workspace members (sources ``editable``/``virtual``, or ``[manifest]
    members``); dependencies whose marker holds are followed, with the extras they name,
    and the members' dependency groups (``target.groups``; by default all of them, as
    ``uv sync`` installs the ``dev`` group and uv records only the groups it was told of).
    Among a package's wheels the one the target's tags rank best is chosen, as pylock does.
    """
    version = document.get("version")
    if version != UV_LOCK_VERSION:
        raise LockError(f"version: uv.lock version {version!r} is not supported (only {UV_LOCK_VERSION})")
    raw = document.get("package", [])
    if not isinstance(raw, list) or not all(isinstance(p, dict) for p in raw):
        raise LockError("package: not an array of tables")
    packages = [_uv_package(p, i, base) for i, p in enumerate(raw)]
    by_name: dict[str, list[_UvPackage]] = {}
    for package in packages:
        by_name.setdefault(package.name, []).append(package)
    manifest = document.get("manifest", {})
    members = manifest.get("members", []) if isinstance(manifest, dict) else []
    member_names = {canonicalize_name(m) for m in members if isinstance(m, str)}
    roots = [p for p in packages if p.name in member_names or p.source_kind in ("editable", "virtual")]
    if not roots:  # a lock of plain requirements: every package is installed
        roots = packages
    declared = {canonicalize_name(g) for r in roots for g in r.groups}
    unknown = sorted({canonicalize_name(g) for g in target.groups or ()} - declared)
    if unknown:
        raise LockError(f"dev-dependencies: no workspace member declares the group(s) {', '.join(unknown)}")
    undeclared = sorted(
        {canonicalize_name(e) for e in target.extras} - {canonicalize_name(e) for r in roots for e in r.extras}
    )
    if undeclared:
        raise LockError(f"optional-dependencies: no workspace member declares the extra(s) {', '.join(undeclared)}")
    markers = dict(target.markers)
    reached: dict[int, _UvPackage] = {}
    extras_done: set[tuple[int, str]] = set()
    pending: list[tuple[_UvPackage, str | None]] = [(r, None) for r in roots]
    for root in roots:
        for group, deps in root.groups.items():
            if target.groups is None or canonicalize_name(group) in {canonicalize_name(g) for g in target.groups}:
                pending.extend(_follow(deps, by_name, markers, f"{root.key}.dev-dependencies.{group}"))
        for wanted in target.extras:
            deps = root.extras.get(wanted, [])
            pending.extend(_follow(deps, by_name, markers, f"{root.key}.optional-dependencies.{wanted}"))
    while pending:
        package, extra = pending.pop()
        first = id(package) not in reached
        reached[id(package)] = package
        if first:
            pending.extend(_follow(package.dependencies, by_name, markers, f"{package.key}.dependencies"))
        if extra is not None and (id(package), extra) not in extras_done:
            extras_done.add((id(package), extra))
            deps = package.extras.get(extra, [])
            pending.extend(_follow(deps, by_name, markers, f"{package.key}.optional-dependencies.{extra}"))
    selected = []
    for package in sorted(reached.values(), key=lambda p: (p.name, p.index)):
        wheel = best_wheel(package.wheels, target.tags)
        kind = "wheel" if wheel is not None else ("sdist" if package.has_sdist else package.source_kind)
        selected.append(
            LockedPackage(
                name=package.name, version=package.version, wheels=package.wheels, selected=wheel, source=kind
            )
        )
    return tuple(selected), frozenset(p.name for p in packages)


@dataclass(frozen=True, slots=True, kw_only=True)
class _UvPackage:
    index: int
    key: str
    name: NormalizedName
    version: str | None
    source_kind: str
    wheels: tuple[LockedWheel, ...]
    has_sdist: bool
    dependencies: list[Any]
    extras: dict[str, list[Any]]
    groups: dict[str, list[Any]]


def _uv_package(raw: Mapping[str, Any], index: int, base: str) -> _UvPackage:
    key = f"package[{index}]"
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise LockError(f"{key}.name: missing or not a string")
    version = raw.get("version")
    if version is not None and not isinstance(version, str):
        raise LockError(f"{key}.version: not a string")
    source = raw.get("source", {})
    if not isinstance(source, dict):
        raise LockError(f"{key}.source: not a table")
    source_kind = next(iter(source), "registry")
    wheels_raw = raw.get("wheels", [])
    if not isinstance(wheels_raw, list):
        raise LockError(f"{key}.wheels: not an array")
    # A path registry's wheels are relative to the registry's directory.
    registry = source.get("registry")
    wheel_base = base
    if isinstance(registry, str) and "://" not in registry:
        wheel_base = os.path.join(base, registry)
    wheels = tuple(_uv_wheel(w, f"{key}.wheels[{i}]", wheel_base) for i, w in enumerate(wheels_raw))
    return _UvPackage(
        index=index,
        key=key,
        name=canonicalize_name(name),
        version=version,
        source_kind=str(source_kind),
        wheels=wheels,
        has_sdist="sdist" in raw,
        dependencies=_array(raw.get("dependencies", []), f"{key}.dependencies"),
        extras=_table_of_arrays(raw.get("optional-dependencies", {}), f"{key}.optional-dependencies"),
        groups=_table_of_arrays(raw.get("dev-dependencies", {}), f"{key}.dev-dependencies"),
    )


def _uv_wheel(raw: object, key: str, base: str) -> LockedWheel:
    if not isinstance(raw, dict):
        raise LockError(f"{key}: not a table")
    digest = raw.get("hash")
    sha256 = None
    if digest is not None:
        if not isinstance(digest, str) or ":" not in digest:
            raise LockError(f"{key}.hash: not ALGORITHM:HEX")
        algorithm, _, value = digest.partition(":")
        if algorithm.lower() == "sha256":
            sha256 = value
    fields = {k: raw.get(k) for k in ("url", "path", "filename")}
    for k, v in fields.items():
        if v is not None and not isinstance(v, str):
            raise LockError(f"{key}.{k}: not a string")
    size = raw.get("size")
    return locked_wheel(
        key,
        filename=fields["filename"],
        url=fields["url"],
        path=fields["path"],
        sha256=sha256,
        size=size if size is not None else None,
        base=base,
    )


def _array(value: object, key: str) -> list[Any]:
    if not isinstance(value, list) or not all(isinstance(d, dict) for d in value):
        raise LockError(f"{key}: not an array of tables")
    return value


def _table_of_arrays(value: object, key: str) -> dict[str, list[Any]]:
    if not isinstance(value, dict):
        raise LockError(f"{key}: not a table")
    return {str(k): _array(v, f"{key}.{k}") for k, v in value.items()}


def _follow(
    deps: Iterable[Mapping[str, Any]], by_name: Mapping[str, list[_UvPackage]], markers: Mapping[str, str], key: str
) -> Iterator[tuple[_UvPackage, str | None]]:
    """The packages (and extras of them) that dependency entries name, where their marker holds."""
    from packaging.markers import InvalidMarker, Marker

    for i, dep in enumerate(deps):
        name = dep.get("name")
        if not isinstance(name, str):
            raise LockError(f"{key}[{i}].name: missing or not a string")
        marker = dep.get("marker")
        if marker is not None:
            try:
                holds = Marker(str(marker)).evaluate({**markers, "extra": ""})
            except (InvalidMarker, ValueError) as e:
                raise LockError(f"{key}[{i}].marker: {e}") from e
            if not holds:
                continue
        candidates = by_name.get(canonicalize_name(name), [])
        version = dep.get("version")
        if version is not None:
            candidates = [c for c in candidates if c.version == version] or candidates
        if not candidates:
            raise LockError(f"{key}[{i}]: {name!r} is not a locked package")
        package = candidates[0]
        extras = dep.get("extra", [])
        yield package, None
        for extra in extras if isinstance(extras, list) else []:
            yield package, str(extra)

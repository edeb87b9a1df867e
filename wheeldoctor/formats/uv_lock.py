"""``uv.lock``, version 1: read by its documented shape, selected as ``uv sync`` installs."""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from packaging.utils import NormalizedName, canonicalize_name

from wheeldoctor.formats.lock_model import (
    LockedPackage,
    LockedWheel,
    LockError,
    LockTarget,
    best_wheel,
    index_url,
    locked_wheel,
)

#: The uv.lock ``version`` this reader knows (uv's documented lockfile shape).
UV_LOCK_VERSION = 1


#: ``uv sync``'s groups when ``[tool.uv] default-groups`` does not say.
DEFAULT_GROUPS = ("dev",)


def select_uv_lock(
    document: Mapping[str, Any],
    target: LockTarget,
    base: str,
    default_groups: tuple[str, ...] | None = DEFAULT_GROUPS,
) -> tuple[tuple[LockedPackage, ...], frozenset[NormalizedName]]:
    """What ``uv sync`` installs for ``target``: the graph from the workspace members, by markers.

    Roots are the workspace members (sources ``editable``/``virtual``, or ``[manifest]
    members``); dependencies whose marker holds are followed, with the extras they name,
    and the members' dependency groups: ``target.groups``, else ``default_groups`` (those
    of them a member declares; None for all), as uv.lock records every group and ``uv
    sync`` installs the defaults (:func:`uv_default_groups`). A dependency names its
    package by name, and by version and source where the name alone is ambiguous, as uv
    writes it. Among a package's wheels the one the target's tags rank best is chosen, as
    pylock does.
    """
    version = document.get("version")
    if version != UV_LOCK_VERSION:
        raise LockError(f"version: uv.lock version {version!r} is not supported (only {UV_LOCK_VERSION})")
    within_limits(document, target.markers)
    raw = document.get("package", [])
    if not isinstance(raw, list) or not all(isinstance(p, dict) for p in raw):
        raise LockError("package: not an array of tables")
    packages = [_uv_package(p, i, base) for i, p in enumerate(raw)]
    by_name: dict[str, list[_UvPackage]] = {}
    for package in packages:
        by_name.setdefault(package.name, []).append(package)
    manifest = document.get("manifest", {})
    members = manifest.get("members", []) if isinstance(manifest, dict) else []
    if not isinstance(members, list):
        raise LockError("manifest.members: not an array of names")
    member_names = {canonicalize_name(m) for m in members if isinstance(m, str)}
    roots = [p for p in packages if p.name in member_names or p.source_kind in ("editable", "virtual")]
    if not roots:  # a lock of plain requirements: every package is installed
        roots = packages
    groups = _chosen_groups(target, default_groups, {g for r in roots for g in r.groups})
    extras = [canonicalize_name(e) for e in target.extras]
    undeclared = sorted(set(extras) - {e for r in roots for e in r.extras})
    if undeclared:
        raise LockError(f"optional-dependencies: no workspace member declares the extra(s) {', '.join(undeclared)}")
    markers = dict(target.markers)
    reached: dict[int, _UvPackage] = {}
    extras_done: set[tuple[int, str]] = set()
    pending: list[tuple[_UvPackage, NormalizedName | None]] = [(r, None) for r in roots]
    for root in roots:
        for group, deps in root.groups.items():
            if group in groups:
                pending.extend(_follow(deps, by_name, markers, f"{root.key}.dev-dependencies.{group}"))
        for wanted in extras:
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
                name=package.name,
                version=package.version,
                wheels=package.wheels,
                selected=wheel,
                source=kind,
                index=index_url(package.source.get("registry")),
            )
        )
    return tuple(selected), frozenset(p.name for p in packages)


def within_limits(document: Mapping[str, Any], markers: Mapping[str, str]) -> None:
    """Refuse a target the lock is not for, as ``uv sync`` does: ``requires-python``, then ``supported-markers``.

    ``supported-markers`` is where uv.lock keeps ``[tool.uv] environments``; ``required-markers``
    (``required-environments``) only asks uv to find wheels for them, and restricts no target.
    """
    from packaging.markers import InvalidMarker, Marker
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    requires = document.get("requires-python")
    if requires is not None:
        if not isinstance(requires, str):
            raise LockError("requires-python: not a string")
        full = markers.get("python_full_version", "")
        try:
            allowed = SpecifierSet(requires).contains(Version(full.removesuffix("+")), prereleases=True)
        except InvalidSpecifier as e:
            raise LockError(f"requires-python: not a version specifier ({e})") from e
        except InvalidVersion as e:
            raise LockError(f"python_full_version {full!r}: not a version ({e})") from e
        if not allowed:
            raise LockError(f"requires-python: the lock is for Python {requires}; the target is Python {full}")
    supported = document.get("supported-markers")
    if supported is None:
        return
    if not isinstance(supported, list) or not all(isinstance(m, str) for m in supported):
        raise LockError("supported-markers: not an array of markers")
    try:
        holds = any(Marker(m).evaluate({**markers, "extra": ""}) for m in supported)
    except (InvalidMarker, ValueError, KeyError) as e:  # KeyError: UndefinedEnvironmentName
        raise LockError(f"supported-markers: cannot be evaluated ({e})") from e
    if not holds:
        shown = " or ".join(supported) if len(supported) <= 4 else f"{len(supported)} markers"
        raise LockError(f"supported-markers: the target is none of the lock's environments ({shown})")


def _chosen_groups(
    target: LockTarget, default_groups: tuple[str, ...] | None, declared: set[NormalizedName]
) -> set[NormalizedName]:
    """The dependency groups installed: ``target.groups``, else ``default_groups`` that are ``declared``, else all."""
    unknown = sorted({canonicalize_name(g) for g in target.groups or ()} - declared)
    if unknown:
        raise LockError(f"dev-dependencies: no workspace member declares the group(s) {', '.join(unknown)}")
    if target.groups is not None:
        return {canonicalize_name(g) for g in target.groups}
    if default_groups is not None:
        return {canonicalize_name(g) for g in default_groups} & declared
    return declared


def uv_default_groups(pyproject: Mapping[str, Any] | None) -> tuple[str, ...] | None:
    """The groups ``uv sync`` installs by default for the project ``pyproject`` (None: all of them).

    ``[tool.uv] default-groups``: a list of names, or ``"all"``; without it (or without a
    pyproject.toml) ``dev``.
    """
    tool = pyproject.get("tool") if pyproject is not None else None
    uv = tool.get("uv") if isinstance(tool, dict) else None
    if not isinstance(uv, dict) or "default-groups" not in uv:
        return DEFAULT_GROUPS
    groups = uv["default-groups"]
    if groups == "all":
        return None
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise LockError('pyproject.toml: tool.uv.default-groups: not a list of group names or "all"')
    return tuple(groups)


@dataclass(frozen=True, slots=True, kw_only=True)
class _UvPackage:
    index: int
    key: str
    name: NormalizedName
    version: str | None
    source_kind: str
    source: Mapping[str, Any]
    """The ``source`` table as locked: with name and version, what a dependency names it by."""
    wheels: tuple[LockedWheel, ...]
    has_sdist: bool
    dependencies: list[Any]
    extras: dict[NormalizedName, list[Any]]
    groups: dict[NormalizedName, list[Any]]


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
    # A wheel of a ``path`` or ``url`` source is that source; uv gives its entry no path or url.
    where = {k: v for k, v in source.items() if k in ("path", "url") and isinstance(v, str) and _is_wheel(v)}
    wheels = tuple(_uv_wheel(w, f"{key}.wheels[{i}]", wheel_base, where) for i, w in enumerate(wheels_raw))
    return _UvPackage(
        index=index,
        key=key,
        name=canonicalize_name(name),
        version=version,
        source_kind=str(source_kind),
        source=source,
        wheels=wheels,
        has_sdist="sdist" in raw,
        dependencies=_array(raw.get("dependencies", []), f"{key}.dependencies"),
        extras=_table_of_arrays(raw.get("optional-dependencies", {}), f"{key}.optional-dependencies"),
        groups=_table_of_arrays(raw.get("dev-dependencies", {}), f"{key}.dev-dependencies"),
    )


def _is_wheel(location: str) -> bool:
    """A path or URL that names a wheel file (not a directory, an sdist or a VCS checkout)."""
    try:
        return urllib.parse.urlsplit(location).path.endswith(".whl")
    except ValueError:
        return False


def _uv_wheel(raw: object, key: str, base: str, source: Mapping[str, str]) -> LockedWheel:
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
    if fields["url"] is None and fields["path"] is None:
        fields["url"], fields["path"] = source.get("url"), source.get("path")
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


def _table_of_arrays(value: object, key: str) -> dict[NormalizedName, list[Any]]:
    """Extras or groups by their normalized name (uv writes them normalized; a hand-written lock may not)."""
    if not isinstance(value, dict):
        raise LockError(f"{key}: not a table")
    table: dict[NormalizedName, list[Any]] = {}
    for k, v in value.items():
        table.setdefault(canonicalize_name(str(k)), []).extend(_array(v, f"{key}.{k}"))
    return table


def _follow(
    deps: Iterable[Mapping[str, Any]], by_name: Mapping[str, list[_UvPackage]], markers: Mapping[str, str], key: str
) -> Iterator[tuple[_UvPackage, NormalizedName | None]]:
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
            except (InvalidMarker, ValueError, KeyError) as e:  # KeyError: UndefinedEnvironmentName
                raise LockError(f"{key}[{i}].marker: cannot be evaluated ({e})") from e
            if not holds:
                continue
        package = _locked(dep, by_name, f"{key}[{i}]")
        extras = dep.get("extra", [])
        yield package, None
        for extra in extras if isinstance(extras, list) else []:
            yield package, canonicalize_name(str(extra))


def _locked(dep: Mapping[str, Any], by_name: Mapping[str, list[_UvPackage]], key: str) -> _UvPackage:
    """The one package a dependency names: by name, then by the version and source it gives.

    uv leaves out a dependency's version and source only where the name alone is
    unambiguous, so anything but exactly one match is a broken lock, never a guess.
    """
    name = str(dep["name"])
    candidates = by_name.get(canonicalize_name(name), [])
    wanted = {k: dep[k] for k in ("version", "source") if dep.get(k) is not None}
    if "version" in wanted:
        candidates = [c for c in candidates if c.version == wanted["version"]]
    if "source" in wanted:
        candidates = [c for c in candidates if c.source == wanted["source"]]
    if len(candidates) == 1:
        return candidates[0]
    named = " ".join([repr(name), *(f"{k} {v!r}" for k, v in wanted.items())])
    if not candidates:
        raise LockError(f"{key}: no locked package is {named}")
    raise LockError(f"{key}: {len(candidates)} locked packages are {named}; the dependency must name one")

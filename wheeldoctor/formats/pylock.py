"""``pylock.toml`` (PEP 751): validated and selected by ``packaging.pylock``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from packaging.utils import NormalizedName

from wheeldoctor.formats.lock_model import (
    LockedPackage,
    LockedWheel,
    LockError,
    LockTarget,
    check_url,
    index_url,
    locked_wheel,
)


def select_pylock(
    document: Mapping[str, Any], target: LockTarget, base: str
) -> tuple[tuple[LockedPackage, ...], frozenset[NormalizedName]]:
    """PEP 751 selection by ``packaging.pylock``; each selected wheel with its siblings."""
    from packaging.pylock import (
        PackageArchive,
        PackageWheel,
        Pylock,
        PylockSelectError,
        PylockUnsupportedVersionError,
        PylockValidationError,
    )

    _check_urls(document)
    try:
        lock = Pylock.from_dict(document)
    except PylockUnsupportedVersionError as e:
        raise LockError(f"lock-version: {e}") from e
    except PylockValidationError as e:
        raise LockError(f"{e.context or 'pylock'}: {e.message}") from e
    try:
        chosen = list(
            lock.select(
                environment=dict(target.markers),  # type: ignore[arg-type]
                tags=target.tags,
                extras=target.extras,
                dependency_groups=target.groups,
            )
        )
    except PylockSelectError as e:
        raise LockError(f"{_rule(lock, target)}: {e}") from e
    except (ValueError, KeyError) as e:  # a marker that cannot be evaluated (``extra`` in ``environments``, say)
        raise LockError(f"packages: a marker cannot be evaluated for this target ({e})") from e
    packages = []
    for index, (package, source) in enumerate(chosen):
        wheels = tuple(
            _pylock_wheel(w, base, f"packages[{index}].wheels[{i}]") for i, w in enumerate(package.wheels or ())
        )
        selected = None
        kind = type(source).__name__.removeprefix("Package").lower()
        if isinstance(source, PackageWheel):
            selected = next(w for w, raw in zip(wheels, package.wheels or (), strict=True) if raw is source)
            kind = "wheel"
        elif isinstance(source, PackageArchive) and _names_a_wheel(source):
            # A wheel by URL or path (``uv pip compile`` of ``x @ https://.../x.whl``): judged like any wheel.
            selected = _pylock_wheel(source, base, f"packages[{index}].archive")
            wheels = (selected,)
        version = str(package.version) if package.version is not None else None
        packages.append(
            LockedPackage(
                name=package.name,
                version=version,
                wheels=wheels,
                selected=selected,
                source=kind,
                index=index_url(package.index),
            )
        )
    return tuple(packages), frozenset(p.name for p in lock.packages)


def _rule(lock: Any, target: LockTarget) -> str:
    """The key whose rule a refused selection broke: ``requires-python``, ``environments``, else ``packages``.

    ``Pylock.select`` raises one error type for all of them; each rule is asked again here.
    """
    from packaging.version import InvalidVersion, Version

    full = target.markers.get("python_full_version", "")
    try:
        if lock.requires_python is not None and not lock.requires_python.contains(
            Version(full.removesuffix("+")), prereleases=True
        ):
            return "requires-python"
    except InvalidVersion:
        return "requires-python"
    env = {**target.markers, "extra": ""}
    try:
        if lock.environments is not None and not any(m.evaluate(env) for m in lock.environments):
            return "environments"
    except (ValueError, KeyError):  # cannot be evaluated here: select would not have got this far
        return "environments"
    return "packages"


def _names_a_wheel(archive: Any) -> bool:
    """Whether a pylock ``archive`` is a wheel: its URL's or path's file name ends in ``.whl``."""
    import urllib.parse

    where = archive.url or archive.path or ""
    try:
        return urllib.parse.urlsplit(where).path.endswith(".whl") and not archive.subdirectory
    except ValueError:
        return False


def _pylock_wheel(wheel: Any, base: str, key: str) -> LockedWheel:
    """A LockedWheel of a pylock wheel, or of an archive (which has no ``name``: it is its URL's or path's)."""
    hashes = {str(k).lower(): str(v) for k, v in (wheel.hashes or {}).items()}
    return locked_wheel(
        key,
        filename=getattr(wheel, "filename", None),
        url=wheel.url,
        path=wheel.path,
        sha256=hashes.get("sha256"),
        size=wheel.size,
        base=base,
    )


def _check_urls(document: Mapping[str, Any]) -> None:
    """Refuse a wheel URL of another scheme first, before anything reads a file name out of it."""
    packages = document.get("packages")
    for index, package in enumerate(packages if isinstance(packages, list) else ()):
        wheels = package.get("wheels") if isinstance(package, dict) else None
        for i, wheel in enumerate(wheels if isinstance(wheels, list) else ()):
            url = wheel.get("url") if isinstance(wheel, dict) else None
            if isinstance(url, str):
                check_url(url, f"packages[{index}].wheels[{i}]")

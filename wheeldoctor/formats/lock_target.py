"""The interpreter a lock is selected for: this one, an inspected one, or an explicit version and platform."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from wheeldoctor.formats.lock_model import LockError, LockTarget


def target_of(markers: Mapping[str, str], tags: Iterable[str], **options: Any) -> LockTarget:
    """A target from an inspected interpreter's markers and tag strings (best first)."""
    from packaging.tags import parse_tag

    parsed = tuple(t for text in tags for t in parse_tag(text))
    return LockTarget(markers=dict(markers), tags=tuple(dict.fromkeys(parsed)), **options)


def current_target(**options: Any) -> LockTarget:
    """This interpreter as a target."""
    from packaging.markers import default_environment
    from packaging.tags import sys_tags

    env = {k: str(v) for k, v in default_environment().items()}
    return LockTarget(markers=env, tags=tuple(sys_tags()), **options)


_PLATFORMS = {
    # platform tag prefix -> (sys_platform, platform_system, os_name)
    "manylinux": ("linux", "Linux", "posix"),
    "musllinux": ("linux", "Linux", "posix"),
    "linux": ("linux", "Linux", "posix"),
    "macosx": ("darwin", "Darwin", "posix"),
    "win": ("win32", "Windows", "nt"),
}
_WINDOWS_MACHINES = {"win_amd64": "AMD64", "win32": "x86", "win_arm64": "ARM64"}


def explicit_target(python_version: str, platforms: Sequence[str], **options: Any) -> LockTarget:
    """A machine you are not on: CPython ``X.Y`` (``X.Y.0``) or ``X.Y.Z`` on platform tags (``manylinux_2_28_x86_64``).

    A manylinux/musllinux tag also accepts the older glibc/musl versions' wheels, and a
    macOS tag the older macOS releases', as pip's ``--platform`` does.
    """
    from packaging import tags as t

    parts = python_version.split(".")
    if not 2 <= len(parts) <= 3 or not all(p.isdigit() and p.isascii() for p in parts):
        raise LockError(f"--python-version: {_shown(python_version)} is not X.Y or X.Y.Z")
    where = f"--python-version: {_shown(python_version)}"
    major = _bounded(parts[0], 9, f"{where}: major version")
    minor = _bounded(parts[1], _LARGEST, f"{where}: minor version")
    if len(parts) == 3:
        _bounded(parts[2], 999, f"{where}: micro version")
    full = python_version if len(parts) == 3 else f"{major}.{minor}.0"
    if not platforms:
        raise LockError("--platform: give at least one platform tag with --python-version")
    expanded = [p for tag in platforms for p in _expand_platform(tag.replace("-", "_").replace(".", "_"))]
    first = platforms[0].replace("-", "_").replace(".", "_")
    family = next((v for k, v in _PLATFORMS.items() if first.startswith(k)), None)
    if family is None:
        raise LockError(f"--platform: {_shown(platforms[0])} is not a manylinux, musllinux, linux, macosx or win tag")
    sys_platform, system, os_name = family
    machine = _WINDOWS_MACHINES.get(first) or _machine(first)
    markers = {
        "implementation_name": "cpython",
        "implementation_version": full,
        "os_name": os_name,
        "platform_machine": machine,
        "platform_python_implementation": "CPython",
        "platform_release": "",
        "platform_system": system,
        "platform_version": "",
        "python_full_version": full,
        "python_version": f"{major}.{minor}",
        "sys_platform": sys_platform,
    }
    found = [
        *t.cpython_tags((major, minor), platforms=expanded),
        *t.compatible_tags((major, minor), interpreter=f"cp{major}{minor}", platforms=expanded),
    ]
    return LockTarget(markers=markers, tags=tuple(dict.fromkeys(found)), **options)


#: The largest version number a target may name: packaging's tag functions count down from
#: a Python minor, a glibc/musl minor and a macOS major or minor, so a huge one would never end.
_LARGEST = 99


def _shown(text: str) -> str:
    """``text`` quoted for an error line, cut short: it came from the command line, any length."""
    return repr(text if len(text) <= 40 else text[:40] + "...")


def _bounded(digits: str, largest: int, what: str) -> int:
    """ASCII ``digits`` as an int no larger than ``largest``; a LockError naming ``what`` otherwise."""
    # The length check first: int() of thousands of digits is itself refused (or slow).
    significant = digits.lstrip("0") or "0"
    if len(significant) > len(str(largest)) or int(significant) > largest:
        raise LockError(f"{what} over {largest}")
    return int(significant)


def _machine(platform: str) -> str:
    for arch in ("x86_64", "aarch64", "arm64", "i686", "ppc64le", "s390x", "armv7l", "riscv64", "universal2"):
        if platform.endswith(arch):
            return arch
    return platform.rpartition("_")[2]


def _expand_platform(tag: str) -> list[str]:
    """A platform tag and the older ones an installer accepts for it, best first."""
    from packaging import tags as t

    for family in ("manylinux", "musllinux"):
        if tag.startswith(family + "_"):
            parts = tag.split("_", 3)  # family, major, minor, arch
            if len(parts) == 4 and parts[1].isdigit() and parts[2].isdigit():
                where = f"--platform: {_shown(tag)}"
                major = _bounded(parts[1], _LARGEST, f"{where}: major version")
                minor = _bounded(parts[2], _LARGEST, f"{where}: minor version")
                arch = parts[3]
                found = [f"{family}_{major}_{m}_{arch}" for m in range(minor, -1, -1)]
                if family == "manylinux" and major == 2:
                    legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
                    found += [f"{legacy[m]}_{arch}" for m in sorted(legacy, reverse=True) if m <= minor]
                return [*found, f"linux_{arch}"]
    if tag.startswith("macosx_"):
        parts = tag.split("_", 3)
        if len(parts) == 4 and parts[1].isdigit() and parts[2].isdigit():
            where = f"--platform: {_shown(tag)}"
            major = _bounded(parts[1], _LARGEST, f"{where}: major version")
            minor = _bounded(parts[2], _LARGEST, f"{where}: minor version")
            return list(t.mac_platforms((major, minor), parts[3]))
    return [tag]

"""Native libraries judged on data alone: what cannot load, and CUDA majors or builds mixed in one environment.

From a :class:`~wheeldoctor.model.native.NativeScan` (every shared object and where each
of its needs is found) and the installed distributions:

- **WD090**: a library that an object Python loads on import needs is found nowhere; the
  finding names a library of the environment that has it under another major.
- **WD091**: the same in an object nothing imports or needs (a plugin opened by name at run
  time, if ever): reported, not a failure.
- **WD092**: two majors of one CUDA library needed by the environment's objects and found
  (in the environment or the system). Per library, not per toolkit: CUDA 13's cuSPARSE,
  cuFFT and cuSOLVER keep ``.so.12`` names, and one major of each is healthy.
- **WD093**: one project's builds for two CUDA variants, neither requiring the other
  (:mod:`wheeldoctor.judge.native_builds`).
- **WD094**: an ELF object whose dynamic section could not be read (fails with ``--strict``).

A library of the GPU driver (``libcuda.so.1``, ``libnvidia-*``) that is found nowhere is no
finding: the host's driver provides it when the environment runs there, and a build machine
or CI runner has none. The summary says so.
"""

from __future__ import annotations

import fnmatch
import functools
import posixpath
import re
from collections.abc import Callable, Iterable, Sequence

from wheeldoctor.judge.native_audit import NativeAudit, NativeFinding, Source
from wheeldoctor.judge.native_builds import builds_mixed
from wheeldoctor.model.findings import Code, Finding, Kind
from wheeldoctor.model.native import NativeScan, Provider, SharedObject, arch_name

#: Libraries of the GPU driver: installed with the driver, never by a wheel.
DRIVER_LIBRARIES = ("libcuda.so*", "libnvidia-*", "libnvcuvid.so*", "libcudadebugger.so*")
#: CUDA's libraries (the runtime, math libraries, cuDNN, NCCL, NVRTC, nvJitLink...): the driver's excepted.
CUDA_LIBRARIES = ("libcu*", "libnv*", "libnccl*", "libnpp*")

_MAJOR = re.compile(r"^(?P<stem>.+?)\.so\.(?P<major>[0-9]+)")


def _any_of(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


_DRIVER = _any_of(DRIVER_LIBRARIES)
_CUDA = _any_of(CUDA_LIBRARIES)


def is_driver_library(name: str) -> bool:
    """Whether ``name`` is a library of the GPU driver (the host provides it, never a wheel)."""
    return _DRIVER.match(name) is not None


@functools.lru_cache(maxsize=4096)
def cuda_major(name: str) -> tuple[str, str] | None:
    """(library, major) of a CUDA library's SONAME (``libcudart.so.12`` -> ``libcudart``, ``12``); None for others."""
    match = _MAJOR.match(name)
    if match is None or is_driver_library(name) or _CUDA.match(name) is None:
        return None
    return match.group("stem"), match.group("major")


def judge_native(
    scan: NativeScan,
    installed: Sequence[tuple[str, str]],
    requires: Callable[[str, str], bool],
    *,
    strict: bool = False,
) -> NativeAudit:
    """The findings of ``scan``; ``installed`` is every active distribution as (name, version),
    ``requires(a, b)`` whether ``a`` requires ``b`` (directly or not)."""
    versions = dict(installed)
    judged = [o for o in scan.objects if not o.foreign]
    findings = [
        *_unreadable(judged),
        *_unresolved(judged, versions),
        *_majors(judged, versions),
        *builds_mixed(installed, requires),
    ]
    return NativeAudit(
        findings=tuple(findings),
        sources=_sources(judged),
        machine=arch_name(scan.arch) if scan.arch is not None else None,
        ld_so_cache=scan.cache,
        ld_so_cache_problem=scan.cache_problem,
        interpreter_rpath=scan.interpreter_rpath,
        objects=len(judged),
        extension_modules=sum(o.extension for o in judged),
        loaded_on_import=sum(o.loaded for o in judged),
        foreign=len(scan.objects) - len(judged),
        strict=strict,
    )


def _unreadable(objects: Iterable[SharedObject]) -> Iterable[NativeFinding]:
    for o in objects:
        if o.elf is None and o.problem is not None and o.problem.elf:
            finding = Finding(
                code=Code.SHARED_OBJECT_UNREADABLE,
                kind=Kind.UNVERIFIABLE,
                path=o.recorded,
                message=f"its dynamic section cannot be read ({o.problem.message}): what it needs is unknown",
            )
            yield NativeFinding(subject=o.owner, version=o.version, site_dir=o.location, finding=finding)


def _unresolved(objects: Sequence[SharedObject], versions: dict[str, str]) -> Iterable[NativeFinding]:
    majors = _env_majors(objects)
    for o in objects:
        missing = [n.name for n in o.needs if n.provider is Provider.UNRESOLVED and not is_driver_library(n.name)]
        if not missing:
            continue
        said = ", ".join(_with_other_major(name, majors, versions) for name in missing)
        if o.loaded:
            code, why = Code.LIBRARY_UNRESOLVED, "it cannot load, and what imports it fails"
        else:
            code, why = Code.PLUGIN_UNRESOLVED, "it cannot load here; nothing in the environment imports or needs it"
        finding = Finding(
            code=code,
            kind=Kind.UNLOADABLE,
            path=o.recorded,
            message=f"needs {said}: found nowhere; {why}",
            expected=", ".join(missing),
        )
        yield NativeFinding(subject=o.owner, version=o.version, site_dir=o.location, finding=finding)


def _env_majors(objects: Iterable[SharedObject]) -> dict[str, dict[str, list[SharedObject]]]:
    """CUDA library -> major -> the environment's objects whose SONAME (else file name) has it."""
    found: dict[str, dict[str, list[SharedObject]]] = {}
    for o in objects:
        if o.elf is None:
            continue
        parsed = cuda_major(o.elf.soname or posixpath.basename(o.path))
        if parsed is not None:
            found.setdefault(parsed[0], {}).setdefault(parsed[1], []).append(o)
    return found


def _with_other_major(name: str, majors: dict[str, dict[str, list[SharedObject]]], versions: dict[str, str]) -> str:
    """``name``, and which distributions provide its library under another major."""
    parsed = cuda_major(name)
    if parsed is None:
        return name
    stem, major = parsed
    others = sorted(
        {
            f"{o.owner} {versions.get(o.owner, o.version)} provides {o.elf.soname or posixpath.basename(o.path)}"
            for m, objs in majors.get(stem, {}).items()
            if m != major
            for o in objs
            if o.elf is not None
        }
    )
    return f"{name} ({'; '.join(others)}: another major)" if others else name


def _majors(objects: Sequence[SharedObject], versions: dict[str, str]) -> Iterable[NativeFinding]:
    """WD092: per CUDA library, the majors the environment's objects need and get (from it or the system).

    Only what is needed counts: a wheel may ship two builds it opens by path at run time
    (triton's two libcupti), and a library nothing needs is never loaded by name.
    """
    brought: dict[str, dict[str, set[str]]] = {}  # library -> major -> where it comes from
    needers: dict[str, dict[str, set[str]]] = {}  # library -> major -> who needs it
    for o in objects:
        for need in o.needs:
            parsed = cuda_major(need.name)
            if parsed is None or need.provider is Provider.UNRESOLVED:
                continue
            stem, major = parsed
            needers.setdefault(stem, {}).setdefault(major, set()).add(f"{o.owner} ({o.recorded})")
            if need.owner is not None:
                source = f"{need.owner} {versions.get(need.owner, '')}".rstrip()
            else:
                source = f"the system ({posixpath.normpath(need.path or '')})"
            brought.setdefault(stem, {}).setdefault(major, set()).add(source)
    for stem in sorted(brought):
        majors = brought[stem]
        if len(majors) < 2:
            continue
        parts = []
        for major in sorted(majors, key=int):
            users = sorted(needers[stem][major])
            shown = ", ".join(users[:3]) + (f" and {len(users) - 3} more" if len(users) > 3 else "")
            parts.append(f"{stem}.so.{major} from {', '.join(sorted(majors[major]))}, needed by {shown}")
        finding = Finding(
            code=Code.CUDA_MAJORS_MIXED,
            kind=Kind.MIXED,
            path=None,
            message=f"majors {' and '.join(sorted(majors, key=int))} in one environment: {'; '.join(parts)}",
        )
        yield NativeFinding(subject=stem, version=None, site_dir=None, finding=finding)


def _sources(objects: Sequence[SharedObject]) -> tuple[Source, ...]:
    """Every library needed, by where it comes from: the summary's rows, most needed first."""
    counted: dict[tuple[str, str, str | None, str | None], int] = {}
    for o in objects:
        for need in o.needs:
            provider = need.provider.value
            if need.provider is Provider.UNRESOLVED and is_driver_library(need.name):
                provider = "driver"
            path = posixpath.normpath(need.path) if need.path is not None else None  # as shown: one row a file
            key = (provider, need.name, path, need.owner)
            counted[key] = counted.get(key, 0) + 1
    rows = [
        Source(provider=p, library=n, path=path, owner=owner, needed_by=c) for (p, n, path, owner), c in counted.items()
    ]
    return tuple(sorted(rows, key=lambda s: (s.provider, -s.needed_by, s.library)))

"""Who manages each distribution of an environment, read once: dpkg, rpm, conda, pip, uv or unknown.

Three signals, strongest first: a system package manager's file list naming the
distribution's metadata (dpkg's ``info/*.list``; conda's ``conda-meta/*.json``), the
dist-info's ``INSTALLER``, and, for the interpreter as a whole, PEP 668's
``EXTERNALLY-MANAGED`` marker. rpm is asked (``rpm -qf``, ``rpm -V``, once each for all
its distributions) only when ``INSTALLER`` says rpm and rpm is installed.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

from wheeldoctor.model.environment import Environment, InstalledDistribution
from wheeldoctor.model.managed import DistroFile, ManagedBy, Tool
from wheeldoctor.model.sitedirs import is_within
from wheeldoctor.where.dpkg_owners import DEFAULT_ADMINDIR, DpkgOwners, read_owners
from wheeldoctor.where.filesystem import ReadError, read_regular
from wheeldoctor.where.system_files import listed

if TYPE_CHECKING:
    from wheeldoctor.formats.conda import CondaPackage
    from wheeldoctor.where.fingerprint import Keeper

_INSTALLERS = {"pip": Tool.PIP, "uv": Tool.UV, "conda": Tool.CONDA, "rpm": Tool.RPM, "dpkg": Tool.DPKG}
_RPM_TIMEOUT = 120
_T = TypeVar("_T")


def attach_managers(
    env: Environment,
    *,
    dpkg_admindir: str | None = None,
    stdlib: str | None = None,
    venv: str | None = None,
    rpm: str | None = "rpm",
    keeper: Keeper | None = None,
) -> Environment:
    """``env`` with every distribution's ``managed_by`` filled in, and the interpreter's PEP 668 marker.

    ``dpkg_admindir`` None reads ``/var/lib/dpkg`` when it exists, for an interpreter that
    is no venv, and for a venv (``venv``, its prefix: its stdlib's marker does not apply)
    only where some distribution lies outside it (a venv that includes the system site
    directory); a directory given explicitly that cannot be read raises
    :class:`~wheeldoctor.where.dpkg_owners.DpkgError`.
    ``rpm`` is the rpm executable to ask, None never to run it. ``keeper`` keeps which of
    dpkg's file lists name something here (see :func:`~wheeldoctor.where.dpkg_owners.read_owners`).
    """
    # Directories holding distributions, and the stdlib (where a distro's sitecustomize lives):
    # who installed a start-up hook or an unowned file there is asked of the same map.
    locations = list(dict.fromkeys([*(d.location for d in env.distributions), *([stdlib] if stdlib else [])]))
    # apt never installs into a virtual environment: unless asked, its lists are read for a venv
    # only where it includes a site directory outside itself (--system-site-packages), whose
    # files are judged as the system interpreter's are.
    dpkg = None
    if dpkg_admindir is not None or venv is None or any(not is_within(d.location, venv) for d in env.distributions):
        dpkg = read_owners(
            dpkg_admindir or DEFAULT_ADMINDIR, locations, explicit=dpkg_admindir is not None, keeper=keeper
        )
    # Each site directory's root too: site directories given without an interpreter have no prefixes.
    conda = _conda_owners([*env.prefixes, *(d.root for d in env.distributions)])
    dists = [_managed(d, dpkg, conda) for d in env.distributions]
    dists = _ask_rpm(dists, rpm)
    notes = []
    if dpkg is not None and dpkg.packages:
        notes.append(f"dpkg {dpkg.admindir}: {len(dpkg.packages)} package(s) own files here")
    if conda:
        notes.append(f"conda-meta: {len({id(p) for p, _ in conda.values()})} records")
    marker = None
    if stdlib and venv is None:
        candidate = os.path.join(stdlib, "EXTERNALLY-MANAGED")
        marker = candidate if os.path.isfile(candidate) else None
    files = {path: package.name for path, (package, _) in conda.items()}
    if dpkg is not None:
        files.update((path, info.partition(":")[0]) for path, info in dpkg.owners.items())
    return replace(
        env,
        distributions=tuple(dists),
        externally_managed=marker,
        managers=tuple(notes),
        system_files=files,
        venv=venv,
    )


def _metadata_files(dist: InstalledDistribution) -> list[str]:
    """The paths a file list would name for ``dist``'s metadata, most specific first."""
    if os.path.isdir(dist.path):
        name = "PKG-INFO" if dist.legacy else "METADATA"
        return [os.path.join(dist.path, name), dist.path]
    return [dist.path]


def _listed(files: Mapping[str, _T], dist: InstalledDistribution) -> _T | None:
    """What ``files`` holds for ``dist``'s metadata (see :func:`system_files.listed`)."""
    return next((found for path in _metadata_files(dist) if (found := listed(files, path)) is not None), None)


def _managed(
    dist: InstalledDistribution, dpkg: DpkgOwners | None, conda: Mapping[str, tuple[CondaPackage, str]]
) -> InstalledDistribution:
    installer = (dist.installer or "").strip().lower()
    tool = _INSTALLERS.get(installer, Tool.UNKNOWN)
    installer_file = os.path.join(dist.path, "INSTALLER")
    if dpkg is not None and dpkg.owners:  # nothing to look up where dpkg lists nothing here
        package = _listed(dpkg.owners, dist)
        # A dist-info whose INSTALLER dpkg did not ship was written over by that installer.
        if package is not None and (not installer or installer_file in dpkg.owners):
            return replace(dist, managed_by=dpkg.packages[package])
    found = _listed(conda, dist) if conda else None
    if found is not None and tool in (Tool.CONDA, Tool.UNKNOWN):
        return replace(dist, managed_by=_conda_record(*found))
    detail = f"INSTALLER says {dist.installer}" if installer else "no INSTALLER, and no package manager lists it"
    # INSTALLER says conda but no conda-meta record lists it: RECORD still judges it.
    return replace(dist, managed_by=ManagedBy(tool=tool, detail=detail))


def _conda_owners(prefixes: Sequence[str]) -> dict[str, tuple[CondaPackage, str]]:
    """Every path that a ``conda-meta/*.json`` of the environment's prefixes lists -> (package, prefix)."""
    owners: dict[str, tuple[CondaPackage, str]] = {}
    for prefix in dict.fromkeys(prefixes):
        meta = os.path.join(prefix, "conda-meta")
        try:
            names = sorted(n for n in os.listdir(meta) if n.endswith(".json"))
        except OSError:
            continue
        from wheeldoctor.formats.conda import CondaFormatError, parse_conda_meta  # only where conda-meta is

        for name in names:
            data = read_regular(os.path.join(meta, name), 64 << 20)
            if isinstance(data, ReadError):
                continue
            try:
                package = parse_conda_meta(data)
            except CondaFormatError:
                continue
            for path in package.files:
                owners.setdefault(os.path.join(prefix, path), (package, os.path.join(meta, name)))
    return owners


def _conda_record(package: CondaPackage, record: str) -> ManagedBy:
    prefix = os.path.dirname(os.path.dirname(record))
    files = tuple(
        DistroFile(os.path.join(prefix, p.path), "sha256", p.sha256, p.size) for p in package.paths if p.sha256
    )
    why = None if files else f"{record} records no file digests (paths_data)"
    return ManagedBy(
        tool=Tool.CONDA,
        package=package.name,
        version=f"{package.version}-{package.build}",
        record=record,
        files=files,
        unverifiable=why,
        detail=record,
    )


def _ask_rpm(dists: list[InstalledDistribution], rpm_name: str | None) -> list[InstalledDistribution]:
    """Fill in rpm's verdicts for the distributions whose INSTALLER says rpm: one ``-qf``, one ``-V``.

    ``rpm_name`` is looked up on PATH only when some distribution asks for rpm.
    """
    wanted = [i for i, d in enumerate(dists) if d.managed_by is not None and d.managed_by.tool is Tool.RPM]
    if not wanted:
        return dists
    import shutil  # it imports bz2 and lzma: only where rpm is asked

    rpm = shutil.which(rpm_name) if rpm_name else None
    if rpm is None:
        for i in wanted:
            why = "rpm is not installed here, so its record of the package cannot be read"
            dists[i] = replace(dists[i], managed_by=replace(_rpm_of(dists[i]), unverifiable=why))
        return dists
    paths = [dists[i].path for i in wanted]
    from wheeldoctor.formats.rpm import parse_query_owners, parse_verify  # only where rpm is

    owners = parse_query_owners(_run([rpm, "-qf", "--qf", "%{NAME}\t%{EVR}\n", *paths]) or "")
    by_package = {
        name: parse_verify(_run([rpm, "-V", name]) or "") for name in sorted({o[0] for o in owners if o is not None})
    }
    for i, owner in zip(wanted, (owners + [None] * len(wanted))[: len(wanted)], strict=True):
        base = _rpm_of(dists[i])
        if owner is None:
            managed = replace(base, unverifiable="rpm -qf names no package that owns it")
        else:
            name, version = owner
            managed = replace(base, package=name, version=version, record=f"rpm -V {name}", verdicts=by_package[name])
        dists[i] = replace(dists[i], managed_by=managed)
    return dists


def _rpm_of(dist: InstalledDistribution) -> ManagedBy:
    return dist.managed_by or ManagedBy(tool=Tool.RPM, detail="INSTALLER says rpm")


def _run(argv: list[str]) -> str | None:
    """Run rpm; its stdout (rpm -V exits 1 when it finds changes), None when it cannot run."""
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=_RPM_TIMEOUT, stdin=subprocess.DEVNULL, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout

"""The files an environment may run at start-up, found and read: .pth, .start (PEP 829), site and user customize.

Nothing is judged here (:mod:`wheeldoctor.where.hooks` does): the audit's child needs only
the paths, for their owners, and does not import the judges.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass

from wheeldoctor.formats.start import EntryPoint, module_files, parse_start
from wheeldoctor.formats.wheel_hooks import importable_suffix, is_package_init
from wheeldoctor.model.environment import Environment
from wheeldoctor.model.record_fields import encode_digest
from wheeldoctor.model.startup import Startup
from wheeldoctor.where.filesystem import ReadError, read_regular, stream_regular
from wheeldoctor.where.startup import HOOK_STREAM_LIMIT

#: A hook file above this size is not parsed, only hashed (none is near it): it fails as unreadable.
MODULE_LIMIT = 16 << 20
_MODULES = ("sitecustomize", "usercustomize")


def hook_paths(env: Environment) -> list[str]:
    """Every start-up hook file of ``env``, and every module a ``.start`` entry point may name.

    Their owners are looked up where the RECORDs are read.
    """
    if env.startup is None:
        return []
    paths = [pth.path for pth in env.startup.pth_files] + [path for path, _ in modules(env.startup)]
    for start in start_files(env.startup):
        paths.append(start.path)
        for entry in start.entry_points:
            if entry.module is not None:
                paths.extend(module_candidates(start.site_dir, entry.module))
    return paths


@dataclass(frozen=True, slots=True, kw_only=True)
class StartRead:
    path: str
    site_dir: str
    entry_points: tuple[EntryPoint, ...]
    sha256: str | None
    error: str | None = None


def start_files(startup: Startup) -> list[StartRead]:
    """Every ``*.start`` file of the site directories, read as ``site`` of Python 3.15 reads them."""
    found = []
    for site_dir in startup.site_dirs:
        try:
            names = sorted(n for n in os.listdir(site_dir.path) if n.endswith(".start") and not n.startswith("."))
        except OSError:
            continue
        for name in names:
            path = os.path.join(site_dir.path, name)
            data = read_regular(path, MODULE_LIMIT)
            if isinstance(data, ReadError):
                if not data.missing:
                    digest = streamed_digest(path) if data.too_large else None
                    found.append(
                        StartRead(path=path, site_dir=site_dir.path, entry_points=(), sha256=digest, error=data.message)
                    )
                continue
            digest = "sha256=" + encode_digest(hashlib.sha256(data).digest())
            found.append(StartRead(path=path, site_dir=site_dir.path, entry_points=parse_start(data), sha256=digest))
    return found


def module_candidates(site_dir: str, module: str) -> list[str]:
    """The files in ``site_dir`` that would be imported as ``module`` (source, bytecode, extension)."""
    found = [os.path.join(site_dir, p) for p in module_files(module) if os.path.isfile(os.path.join(site_dir, p))]
    parent, _, leaf = module.rpartition(".")
    directory = os.path.join(site_dir, *parent.split(".")) if parent else site_dir
    try:
        names = os.listdir(directory)
    except OSError:
        return found
    found += [
        os.path.join(directory, n)
        for n in sorted(names)
        if n.startswith(leaf + ".") and n.endswith((".so", ".pyd")) and os.path.isfile(os.path.join(directory, n))
    ]
    return found


def modules(startup: Startup) -> Iterable[tuple[str, str]]:
    """Every ``sitecustomize``/``usercustomize`` module file on the search path, in path order."""
    for directory in startup.paths:
        try:
            names = sorted(os.listdir(directory))
        except OSError:  # a zip of the standard library, or gone
            continue
        for name in names:
            stem, dot, suffix = name.partition(".")
            if stem not in _MODULES:
                continue
            full = os.path.join(directory, name)
            if not dot:
                yield from ((init, directory) for init in _package_inits(full))
            elif importable_suffix(suffix):
                yield full, directory


def _package_inits(package: str) -> list[str]:
    """The ``__init__`` files of a ``sitecustomize`` package the import system may run (``.py``, ``.pyc``, ``.so``)."""
    try:
        names = sorted(os.listdir(package))
    except OSError:  # not a directory, or gone
        return []
    return [path for n in names if is_package_init(n) and os.path.isfile(path := os.path.join(package, n))]


def read_digest(path: str) -> tuple[str | None, str | None, str | None]:
    """``sha256=…`` of the file as RECORD spells it, its text when it decodes as UTF-8, and why it could not be read.

    A file too large to read whole is still hashed, chunk by chunk, so that a finding can pin it.
    """
    data = read_regular(path, MODULE_LIMIT)
    if isinstance(data, ReadError):
        return (streamed_digest(path) if data.too_large else None), None, data.message
    try:
        text: str | None = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    return "sha256=" + encode_digest(hashlib.sha256(data).digest()), text, None


def streamed_digest(path: str) -> str | None:
    """``sha256=…`` of a file too large to hold whole; None past :data:`HOOK_STREAM_LIMIT` or on a read error."""
    digest = hashlib.sha256()
    size = stream_regular(path, HOOK_STREAM_LIMIT, digest.update)
    return None if isinstance(size, ReadError) else "sha256=" + encode_digest(digest.digest())

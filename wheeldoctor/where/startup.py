"""The search path a normal start would build, worked out without running any startup code.

``site.main()`` of CPython, step for step, with two differences: the ``import`` lines of
.pth files are recorded instead of executed, and ``sitecustomize``/``usercustomize`` are
never imported. The interpreter itself is only asked (under ``-I -S``, see
``where/target.py``) for the facts ``site`` would start from: its own entries of
``sys.path``, and the site directories in the order ``site.main()`` visits them.

What ``site`` does with each site directory (``addsitedir``): add it unless already
known, then read every ``*.pth`` in it (names not starting with ``.``, sorted), adding
each path line that exists and is not yet known. Known means: equal after
``os.path.abspath`` and ``os.path.normcase``, as ``site.makepath`` compares. A site
directory visited twice (a venv with system site packages lists its own prefix twice)
has its .pth files read twice by ``site``; their lines are recorded once here.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import sys

from wheeldoctor.formats.pth import PthStream, PthTooLarge, parse_pth
from wheeldoctor.model.record_fields import encode_digest
from wheeldoctor.model.startup import Origin, PathEntry, PthRead, SiteDir, Startup
from wheeldoctor.where.filesystem import ReadError, read_regular, stream_regular

#: A .pth file above this size is read in chunks, not whole (none is near this; site reads it whole).
PTH_LIMIT = 16 << 20
#: A start-up hook file above this size is neither classified nor hashed: it fails as unreadable.
HOOK_STREAM_LIMIT = 256 << 20
#: Bounds of a streamed .pth: a larger file, a longer line or more lines that ``site`` acts on
#: fail it as unreadable (its bytes are still hashed, up to :data:`HOOK_STREAM_LIMIT`).
_CLASSIFY_LIMIT = 64 << 20
_MAX_LINE = PTH_LIMIT
_MAX_LINES = 100_000


def makepath(*parts: str) -> tuple[str, str]:
    """The absolute path and its comparison key, exactly as ``site.makepath`` makes them."""
    path = os.path.join(*parts)
    with contextlib.suppress(OSError):  # the working directory is gone: site keeps the path as it is
        path = os.path.abspath(path)
    return path, os.path.normcase(path)


def read_pth(path: str, site_dir: str, version: tuple[int, int]) -> PthRead | None:
    """Read and parse one .pth; None for a file ``site`` would skip (hidden, gone)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    # site skips files hidden by flag (BSD/macOS UF_HIDDEN, Windows' hidden attribute).
    hidden = getattr(st, "st_flags", 0) & getattr(stat, "UF_HIDDEN", 0)
    hidden |= getattr(st, "st_file_attributes", 0) & getattr(stat, "FILE_ATTRIBUTE_HIDDEN", 0)
    if hidden:
        return None
    data = read_regular(path, PTH_LIMIT)
    if isinstance(data, ReadError):
        if data.missing:
            return None
        if data.too_large:
            return _streamed_pth(path, site_dir, version)
        return PthRead(path=path, site_dir=site_dir, parsed=None, error=data.message)
    digest = "sha256=" + encode_digest(hashlib.sha256(data).digest())
    return PthRead(path=path, site_dir=site_dir, parsed=parse_pth(data, version), sha256=digest)


def _streamed_pth(path: str, site_dir: str, version: tuple[int, int]) -> PthRead | None:
    """A .pth too large to hold whole, hashed and classified chunk by chunk (site reads it all).

    Past the stream's bounds the lines are no longer classified, but the file is still
    hashed to its end, so that a finding can pin its bytes.
    """
    digest = hashlib.sha256()
    stream = PthStream(version, max_line=_MAX_LINE, max_lines=_MAX_LINES)
    failed: list[str] = []
    fed = 0

    def sink(chunk: bytes) -> None:
        nonlocal fed
        digest.update(chunk)
        fed += len(chunk)
        if failed:
            return
        if fed > _CLASSIFY_LIMIT:
            failed.append(f"is over {_CLASSIFY_LIMIT} bytes, too large to classify its lines")
            return
        try:
            stream.feed(chunk)
        except PthTooLarge as e:
            failed.append(str(e))

    size = stream_regular(path, HOOK_STREAM_LIMIT, sink)
    if isinstance(size, ReadError):
        if size.missing:
            return None
        return PthRead(path=path, site_dir=site_dir, parsed=None, error=size.message)
    sha256 = "sha256=" + encode_digest(digest.digest())
    if not failed:
        try:
            return PthRead(path=path, site_dir=site_dir, parsed=stream.finish(), sha256=sha256)
        except PthTooLarge as e:
            failed.append(str(e))
    return PthRead(path=path, site_dir=site_dir, parsed=None, error=failed[0], sha256=sha256)


def pth_names(site_dir: str) -> list[str] | None:
    """The .pth files ``site`` reads in ``site_dir``, in its order; None if it cannot be listed."""
    try:
        names = os.listdir(site_dir)
    except OSError:
        return None
    return sorted(n for n in names if n.endswith(".pth") and not n.startswith("."))


def simulate(
    interpreter: tuple[str, ...],
    site_dirs: tuple[SiteDir, ...],
    version: tuple[int, int],
    *,
    pythonpath: tuple[str, ...] = (),
    user_site: bool | None = None,
) -> Startup:
    """Build the search path as ``site.main()`` would, executing nothing.

    ``interpreter`` is ``sys.path`` of an ``-I -S`` start; ``pythonpath`` goes before it,
    as a normal start puts ``PYTHONPATH`` there. ``site_dirs`` are every candidate that
    ``site.main()`` would pass to ``addsitedir``, in order; those that are not
    directories are skipped, as ``site`` skips them.
    """
    entries: list[PathEntry] = []
    known: set[str] = set()
    for origin, given in ((Origin.PYTHONPATH, pythonpath), (Origin.INTERPRETER, interpreter)):
        for item in given:
            path, key = makepath(item)
            if key not in known:
                entries.append(PathEntry(path=path, origin=origin))
                known.add(key)
    visited: list[SiteDir] = []
    read: dict[str, PthRead] = {}
    for site_dir in site_dirs:
        if not os.path.isdir(site_dir.path):
            continue
        path, key = makepath(site_dir.path)
        if key not in known:
            entries.append(PathEntry(path=path, origin=Origin.SITE))
            known.add(key)
        if all(v.path != path for v in visited):
            visited.append(SiteDir(path, site_dir.user))
        for name in pth_names(path) or ():
            pth_path = os.path.join(path, name)
            pth = read.get(pth_path) or read_pth(pth_path, path, version)
            if pth is None:
                continue
            read[pth_path] = pth
            for line in pth.parsed.paths if pth.parsed is not None else ():
                added, added_key = makepath(path, line.text)
                if added_key not in known and os.path.exists(added):
                    entries.append(PathEntry(path=added, origin=Origin.PTH, pth=pth_path, line=line.number))
                    known.add(added_key)
    return Startup(
        entries=tuple(entries),
        site_dirs=tuple(visited),
        pth_files=tuple(read.values()),
        version=version,
        user_site=user_site,
    )


def visit(site_dirs: tuple[SiteDir, ...], version: tuple[int, int]) -> tuple[PthRead, ...]:
    """Every .pth file of ``site_dirs`` read, as :func:`simulate` reads them, adding nothing."""
    read: list[PthRead] = []
    for site_dir in site_dirs:
        for name in pth_names(site_dir.path) or ():
            pth = read_pth(os.path.join(site_dir.path, name), site_dir.path, version)
            if pth is not None:
                read.append(pth)
    return tuple(read)


def given(paths: tuple[str, ...], version: tuple[int, int]) -> Startup:
    """Directories named with ``--path``: each is a site directory and its .pth files are read.

    Their path lines add nothing: the search path is exactly the directories named.
    """
    site_dirs = tuple(SiteDir(os.path.abspath(p)) for p in paths)
    entries = tuple(PathEntry(path=p, origin=Origin.GIVEN) for p in paths)
    return Startup(
        entries=entries, site_dirs=site_dirs, pth_files=visit(site_dirs, version), version=version, isolated=True
    )


def running(paths: tuple[str, ...]) -> Startup:
    """The running interpreter: its ``sys.path`` (``paths``) is already built, its hooks already ran.

    Its site directories are the entries of ``paths`` that ``site`` names as such
    (``site.getsitepackages()`` and, when enabled, the user site).
    """
    site_module = sys.modules.get("site")
    candidates: dict[str, bool] = {}
    if site_module is not None:  # started with -S: site processed no directory
        for path in site_module.getsitepackages():
            candidates.setdefault(makepath(path)[1], False)
        if site_module.ENABLE_USER_SITE:
            candidates.setdefault(makepath(site_module.getusersitepackages())[1], True)
    site_dirs: list[SiteDir] = []
    for path in paths:
        absolute, key = makepath(path)
        if key in candidates and all(d.path != absolute for d in site_dirs):
            site_dirs.append(SiteDir(absolute, candidates[key]))
    version = (sys.version_info[0], sys.version_info[1])
    entries = tuple(PathEntry(path=p, origin=Origin.RUNNING) for p in paths)
    user_site = bool(site_module.ENABLE_USER_SITE) if site_module is not None else False
    return Startup(
        entries=entries,
        site_dirs=tuple(site_dirs),
        pth_files=visit(tuple(site_dirs), version),
        version=version,
        isolated=False,
        user_site=user_site,
    )


def pythonpath() -> tuple[str, ...]:
    """``PYTHONPATH`` of this process, split as a normal start splits it (an empty part is the working directory)."""
    value = os.environ.get("PYTHONPATH")
    return tuple(value.split(os.pathsep)) if value else ()

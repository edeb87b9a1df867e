"""Finding an environment's start-up hooks: .pth files, PEP 829 .start files, sitecustomize/usercustomize.

The .pth files are the ones ``where/startup.py`` read as text; ``.start`` files and the
modules on the search path are listed and read by :mod:`wheeldoctor.where.hook_files`.
Each hook is judged by :mod:`wheeldoctor.judge.hooks`; nothing is run."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Mapping, Sequence

from wheeldoctor.formats.hook_template import KnownHook
from wheeldoctor.formats.start import disables_imports
from wheeldoctor.judge.hooks import HookAudit, HookKind, StartupHook, judged
from wheeldoctor.judge.known_hooks import known_module, known_pth, known_start
from wheeldoctor.model.environment import Environment
from wheeldoctor.model.ownership import Owner
from wheeldoctor.model.startup import PthRead
from wheeldoctor.where.filesystem import ReadError, read_regular
from wheeldoctor.where.hook_files import StartRead, module_candidates, modules, read_digest, start_files


def audit_hooks(
    env: Environment,
    owner_of: Callable[[str], Owner | None],
    intact: Mapping[str, bool] | None = None,
    known: Sequence[KnownHook] = (),
    registry: Sequence[KnownHook] | None = None,
) -> HookAudit:
    """Find and judge every start-up hook of ``env``.

    ``owner_of`` says who installed a file (``Owners.owner``, or its answers brought back
    from where the RECORDs were read); ``intact`` maps checked distributions to their verdict;
    ``known`` are the config's own known hooks, tried before ``registry`` (by default the
    shipped one, :func:`wheeldoctor.judge.known_hooks.shipped`, read only if a hook runs code).
    """
    startup = env.startup
    if startup is None:
        return HookAudit(())
    starts = start_files(startup)
    start_names = {os.path.join(s.site_dir, os.path.basename(s.path)) for s in starts}
    editable = _EditableOwners(env)
    hooks = [
        _pth_hook(pth, owner_of, intact or {}, known, registry, start_names, startup.version, editable)
        for pth in startup.pth_files
    ]
    hooks.extend(_start_hook(start, owner_of, intact or {}, known, registry, editable) for start in starts)
    hooks.extend(
        _module_hook(path, directory, owner_of, intact or {}, startup.user_site is not False, known, registry, editable)
        for path, directory in modules(startup)
    )
    return HookAudit(tuple(hooks))


#: A direct_url.json above this size says nothing (pip's and uv's are a few hundred bytes).
_DIRECT_URL_LIMIT = 64 << 10


class _EditableOwners:
    """Whether a hook's owner is installed editable, by its own dist-info's ``direct_url.json``.

    The file alone proves nothing: pip and uv keep one that a wheel ships inside its dist-info.
    So it must also name, as a ``file:`` URL, an existing project directory (one holding a
    ``pyproject.toml``, ``setup.py`` or ``setup.cfg``) outside the environment's prefixes and
    site directories, where no wheel's own files can have put it.
    Asked only for hooks that run code; each owner is answered once, its file read bounded, FIFO-safe.
    """

    def __init__(self, env: Environment) -> None:
        self._env = env
        self._seen: dict[str, bool] = {}
        self._inside: tuple[str, ...] | None = None

    def __call__(self, owner: Owner | None) -> bool:
        if owner is None or owner.system or owner.dist_info is None:
            return False
        if owner.dist_info not in self._seen:
            project = _editable_project(owner.dist_info)
            self._seen[owner.dist_info] = project is not None and self._is_project(project)
        return self._seen[owner.dist_info]

    def _is_project(self, path: str) -> bool:
        real = os.path.realpath(path)
        if self._inside is None:
            startup = self._env.startup
            sites = () if startup is None else tuple(d.path for d in startup.site_dirs)
            roots = {d.root for d in self._env.distributions}
            self._inside = tuple(
                {os.path.realpath(p) for p in (*self._env.prefixes, *roots, *sites) if os.path.isabs(p)}
            )
        if any(_below(real, inside) for inside in self._inside):
            return False
        try:
            if not stat.S_ISDIR(os.lstat(real).st_mode):
                return False
        except (OSError, ValueError):
            return False
        return any(_is_file(os.path.join(real, name)) for name in _PROJECT_FILES)


#: A directory holding one of these is a project a build frontend could have installed editable.
_PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg")


def _below(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _is_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def _editable_project(dist_path: str) -> str | None:
    """The local directory ``dist_path``'s ``direct_url.json`` says it was installed editable from, if any."""
    data = read_regular(os.path.join(dist_path, "direct_url.json"), _DIRECT_URL_LIMIT)
    if isinstance(data, ReadError):
        return None
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):  # RecursionError: nesting deep enough to exhaust the parser
        return None
    if not isinstance(document, dict):
        return None
    info, url = document.get("dir_info"), document.get("url")
    if not (isinstance(info, dict) and info.get("editable") is True and isinstance(url, str)):
        return None
    from urllib.parse import unquote, urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    # PEP 610 writes a local directory as file:///abs/path (no host); anything else is no local project.
    if parts.scheme != "file" or parts.netloc not in ("", "localhost") or parts.query or parts.fragment:
        return None
    path = unquote(parts.path)
    return path if os.path.isabs(path) and "\0" not in path else None


def _pth_hook(
    pth: PthRead,
    owner_of: Callable[[str], Owner | None],
    intact: Mapping[str, bool],
    known_hooks: Sequence[KnownHook],
    registry: Sequence[KnownHook] | None,
    start_names: set[str],
    version: tuple[int, int],
    editable: Callable[[Owner | None], bool],
) -> StartupHook:
    lines = () if pth.parsed is None else pth.parsed.executing
    name = os.path.basename(pth.path)
    siblings = frozenset(os.path.basename(s) for s in start_names if os.path.dirname(s) == pth.site_dir)
    disabled_by = None
    if lines and disables_imports(name, siblings, version):
        disabled_by = name[: -len(".pth")] + ".start"
        lines = ()  # PEP 829: a matching .start turns the import lines off; path lines still apply
    owner = owner_of(pth.path)
    texts = tuple(line.text for line in lines)
    known = known_pth(name, texts, _owner_name(owner), known_hooks, registry, editable=bool(lines) and editable(owner))
    hook = StartupHook(
        path=pth.path,
        kind=HookKind.PTH,
        site_dir=pth.site_dir,
        # A .pth whose lines could not all be read may run anything: site reads it whole.
        executes=bool(lines) or pth.error is not None,
        lines=tuple(line.number for line in lines),
        sha256=pth.sha256,  # of the very bytes whose lines were classified
        owner=owner,
        owner_intact=None,
        known=known,
        error=pth.error,
        disabled_by=disabled_by,
        code=tuple(line.text for line in lines),
    )
    return judged(hook, intact)


def _start_hook(
    start: StartRead,
    owner_of: Callable[[str], Owner | None],
    intact: Mapping[str, bool],
    known_hooks: Sequence[KnownHook],
    registry: Sequence[KnownHook] | None,
    editable: Callable[[Owner | None], bool],
) -> StartupHook:
    owner = owner_of(start.path)
    unresolved = []
    for entry in start.entry_points:
        shipped = entry.module is not None and any(
            (o := owner_of(p)) is not None and owner is not None and o.name == owner.name
            for p in module_candidates(start.site_dir, entry.module)
        )
        if not shipped:
            unresolved.append(entry.text)
    texts = tuple(e.text for e in start.entry_points)
    known = None
    if not unresolved:
        name = os.path.basename(start.path)
        known = known_start(
            name, texts, _owner_name(owner), known_hooks, registry, editable=bool(texts) and editable(owner)
        )
    hook = StartupHook(
        path=start.path,
        kind=HookKind.START,
        site_dir=start.site_dir,
        executes=bool(start.entry_points) or start.error is not None,
        lines=tuple(e.number for e in start.entry_points),
        sha256=start.sha256,
        owner=owner,
        owner_intact=None,
        known=known,
        error=start.error,
        entry_points=texts,
        unresolved=tuple(unresolved),
        code=texts,
    )
    return judged(hook, intact)


def _owner_name(owner: Owner | None) -> str | None:
    return None if owner is None else owner.name


def _module_hook(
    path: str,
    directory: str,
    owner_of: Callable[[str], Owner | None],
    intact: Mapping[str, bool],
    user_site: bool,
    known_hooks: Sequence[KnownHook],
    registry: Sequence[KnownHook] | None,
    editable: Callable[[Owner | None], bool],
) -> StartupHook:
    name = os.path.basename(path if os.path.basename(path) != "__init__.py" else os.path.dirname(path))
    kind = HookKind.USERCUSTOMIZE if name.startswith("usercustomize") else HookKind.SITECUSTOMIZE
    digest, text, error = read_digest(path)
    owner = owner_of(path)
    known = None
    if text is not None:
        known = known_module(name, text, _owner_name(owner), known_hooks, registry, editable=editable(owner))
    hook = StartupHook(
        path=path,
        kind=kind,
        site_dir=directory,
        # site imports usercustomize only when the user site is enabled.
        executes=kind is HookKind.SITECUSTOMIZE or user_site,
        lines=(),
        sha256=digest,
        owner=owner,
        owner_intact=None,
        known=known,
        error=error,
    )
    return judged(hook, intact)

"""Finding an environment's start-up hooks: its .pth files (read by ``where/startup.py``) and the
``sitecustomize``/``usercustomize`` modules on its search path, each judged by :mod:`wheeldoctor.judge.hooks`."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Mapping

from wheeldoctor.judge.hooks import HookAudit, HookKind, StartupHook, judged
from wheeldoctor.judge.known_hooks import known_module, known_pth
from wheeldoctor.model.environment import Environment
from wheeldoctor.model.ownership import Owner
from wheeldoctor.model.record_fields import encode_digest
from wheeldoctor.model.startup import PthRead, Startup
from wheeldoctor.where.filesystem import ReadError, read_regular

#: A hook file above this size is not read (none is near it).
_MODULE_LIMIT = 16 << 20
_MODULES = ("sitecustomize", "usercustomize")


def hook_paths(env: Environment) -> list[str]:
    """Every start-up hook file of ``env``, for its owners to be looked up where RECORDs are read."""
    if env.startup is None:
        return []
    return [pth.path for pth in env.startup.pth_files] + [path for path, _ in _modules(env.startup)]


def audit_hooks(
    env: Environment, owner_of: Callable[[str], Owner | None], intact: Mapping[str, bool] | None = None
) -> HookAudit:
    """Find and judge every start-up hook of ``env``.

    ``owner_of`` says who installed a file (``Owners.owner``, or its answers brought back
    from where the RECORDs were read); ``intact`` maps checked distributions to their verdict.
    """
    startup = env.startup
    if startup is None:
        return HookAudit(())
    hooks = [_pth_hook(pth, owner_of, intact or {}) for pth in startup.pth_files]
    hooks.extend(
        _module_hook(path, directory, owner_of, intact or {}, startup.user_site is not False)
        for path, directory in _modules(startup)
    )
    return HookAudit(tuple(hooks))


def _pth_hook(pth: PthRead, owner_of: Callable[[str], Owner | None], intact: Mapping[str, bool]) -> StartupHook:
    lines = () if pth.parsed is None else pth.parsed.executing
    known = known_pth(os.path.basename(pth.path), tuple(line.text for line in lines))
    hook = StartupHook(
        path=pth.path,
        kind=HookKind.PTH,
        site_dir=pth.site_dir,
        executes=bool(lines),
        lines=tuple(line.number for line in lines),
        sha256=pth.sha256,  # of the very bytes whose lines were classified
        owner=owner_of(pth.path),
        owner_intact=None,
        known=known,
        error=pth.error,
    )
    return judged(hook, intact)


def _module_hook(
    path: str, directory: str, owner_of: Callable[[str], Owner | None], intact: Mapping[str, bool], user_site: bool
) -> StartupHook:
    name = os.path.basename(path if os.path.basename(path) != "__init__.py" else os.path.dirname(path))
    kind = HookKind.USERCUSTOMIZE if name.startswith("usercustomize") else HookKind.SITECUSTOMIZE
    digest, text = _digest(path)
    known = known_module(name, text) if text is not None else None
    hook = StartupHook(
        path=path,
        kind=kind,
        site_dir=directory,
        # site imports usercustomize only when the user site is enabled.
        executes=kind is HookKind.SITECUSTOMIZE or user_site,
        lines=(),
        sha256=digest,
        owner=owner_of(path),
        owner_intact=None,
        known=known,
    )
    return judged(hook, intact)


def _modules(startup: Startup) -> Iterable[tuple[str, str]]:
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
                init = os.path.join(full, "__init__.py")
                if os.path.isfile(init):
                    yield init, directory
            elif suffix in ("py", "pyc") or suffix.endswith(("so", "pyd")):
                yield full, directory


def _digest(path: str) -> tuple[str | None, str | None]:
    """``sha256=…`` of the file as RECORD spells it, and its text when it decodes as UTF-8."""
    data = read_regular(path, _MODULE_LIMIT)
    if isinstance(data, ReadError):
        return None, None
    try:
        text: str | None = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    return "sha256=" + encode_digest(hashlib.sha256(data).digest()), text

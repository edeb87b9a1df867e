"""Start-up hooks: the code an environment runs at every interpreter start, and who put it there.

A hook is a ``.pth`` file in a site directory (its ``import`` lines run at start-up) or a
``sitecustomize``/``usercustomize`` module anywhere on the search path (``site`` imports
it). Nothing is run here: the .pth files are the ones ``where/startup.py`` read as text,
and modules are only listed and, for source, read.

- WD070: a hook that runs code, is owned (a RECORD or a system package lists it) and is
  not in the registry of known benign hooks (``judge/known_hooks.py``).
- WD071: a hook that runs code and that nobody owns.

Both carry ``found: sha256=…`` of the hook file, so an accept rule pinned to those bytes
matches them and any change to the file fails again. Known hooks are information.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import Enum

from wheeldoctor.engine.ownership import Owner
from wheeldoctor.formats.record_fields import encode_digest
from wheeldoctor.judge.known_hooks import KnownHook, known_module, known_pth
from wheeldoctor.model.findings import Code, Finding, Kind
from wheeldoctor.where.environment import Environment
from wheeldoctor.where.filesystem import ReadError, read_regular
from wheeldoctor.where.startup import PthRead, Startup

#: A hook file above this size is not read (none is near it).
_MODULE_LIMIT = 16 << 20
_MODULES = ("sitecustomize", "usercustomize")
#: The ``distribution`` an accept rule names for what nobody owns: not a valid project name,
#: so no real distribution can be mistaken for it.
UNOWNED = "(unowned)"


class HookKind(str, Enum):
    """What sort of hook; the JSON ``kind`` field."""

    PTH = "pth"
    SITECUSTOMIZE = "sitecustomize"
    USERCUSTOMIZE = "usercustomize"


@dataclass(frozen=True, slots=True)
class StartupHook:
    """One hook, what it runs, who owns it, and the finding it gives (if any).

    ``lines`` are the .pth lines that run code (a module runs whole: no lines); ``sha256``
    is the file's digest as RECORD spells it; ``owner_intact`` is the owning
    distribution's verdict in this run, else whether the hook holds its RECORD's bytes
    (None for a system package's file or when nothing says).
    """

    path: str
    kind: HookKind
    site_dir: str
    executes: bool
    lines: tuple[int, ...]
    sha256: str | None
    owner: Owner | None
    owner_intact: bool | None
    known: KnownHook | None
    finding: Finding | None = None
    error: str | None = None

    @property
    def relative(self) -> str:
        """The path below its directory, as RECORD names it (``litellm_init.pth``)."""
        return os.path.relpath(self.path, self.site_dir)

    @property
    def subject(self) -> str:
        """Whose finding it is, for accept rules' ``distribution``: the owner, or :data:`UNOWNED`."""
        return self.owner.name if self.owner is not None else UNOWNED


@dataclass(frozen=True, slots=True)
class HookAudit:
    """Every hook of an environment; ``failing`` are those with a finding."""

    hooks: tuple[StartupHook, ...]

    @property
    def findings(self) -> tuple[StartupHook, ...]:
        """The hooks that give a WD070 or WD071 finding, accepted or not."""
        return tuple(h for h in self.hooks if h.finding is not None)

    @property
    def failing(self) -> tuple[StartupHook, ...]:
        """The hooks whose finding no accept rule or baseline accepted: these fail the run."""
        return tuple(h for h in self.hooks if h.finding is not None and h.finding.accepted is None)


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
    return _judged(hook, intact)


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
    return _judged(hook, intact)


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


def _judged(hook: StartupHook, intact: Mapping[str, bool]) -> StartupHook:
    recorded = hook.owner.recorded if hook.owner is not None else None
    owner_intact: bool | None = None
    if hook.owner is not None and not hook.owner.system:
        owner_intact = intact.get(hook.owner.name)
        if owner_intact is None and recorded is not None:
            owner_intact = recorded == hook.sha256
    finding = None
    if hook.executes and hook.known is None:
        finding = _finding(hook, recorded)
    return replace(hook, owner_intact=owner_intact, finding=finding)


def _finding(hook: StartupHook, recorded: str | None) -> Finding:
    relative = hook.relative
    if hook.lines:
        where = "line" + ("s " if len(hook.lines) > 1 else " ") + ", ".join(map(str, hook.lines))
    else:
        where = "imported at start-up, all of it runs"
    if hook.owner is None:
        message = f"{relative} runs code at every interpreter start ({where}), and no installer recorded it"
        return Finding(Code.STARTUP_HOOK_UNOWNED, Kind.STARTUP_HOOK, relative, message, found=hook.sha256)
    message = f"{hook.owner.label} ships {relative}, which runs code at every interpreter start ({where})"
    return Finding(Code.STARTUP_HOOK_OWNED, Kind.STARTUP_HOOK, relative, message, expected=recorded, found=hook.sha256)

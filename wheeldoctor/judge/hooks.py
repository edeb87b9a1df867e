"""Start-up hooks judged: the code an environment runs at every interpreter start, and who put it there.

A hook is a ``.pth`` file in a site directory (its ``import`` lines run at start-up), a
PEP 829 ``.start`` file there (its entry points are called at start-up from Python
3.15), or a ``sitecustomize``/``usercustomize`` module anywhere on the search path
(``site`` imports it). Nothing is run here: ``where/hooks.py`` finds and reads them.
A ``.start`` file is judged on every version (it waits for the interpreter that runs it);
it turns off the import lines of the ``.pth`` of its name only where ``site`` reads it.

- WD070: a hook that runs code, is owned (a RECORD or a system package lists it) and is
  not in the registry of known benign hooks (``judge/known_hooks.py``), or a ``.start``
  entry point that resolves to no module its owner ships.
- WD071: a hook that runs code and that nobody owns.

A hook that could not be read whole (too large, an I/O error, not a regular file) is
treated as running code: ``site`` reads it all, so anything may hide in what was not read.

Both carry ``found: sha256=…`` of the hook file, so an accept rule pinned to those bytes
matches them and any change to the file fails again. Known hooks are information.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum

from wheeldoctor.formats.hook_template import KnownHook
from wheeldoctor.model.findings import Code, Finding, Kind
from wheeldoctor.model.ownership import UNOWNED, Owner
from wheeldoctor.model.sitedirs import below


class HookKind(str, Enum):
    """What sort of hook; the JSON ``kind`` field."""

    PTH = "pth"
    START = "start"
    SITECUSTOMIZE = "sitecustomize"
    USERCUSTOMIZE = "usercustomize"


@dataclass(frozen=True, slots=True, kw_only=True)
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
    code: tuple[str, ...] = ()
    """The text of each line in ``lines`` (untrusted: escape to show)."""
    entry_points: tuple[str, ...] = ()
    """A ``.start`` file's entry point lines, as written (untrusted: escape to show)."""
    unresolved: tuple[str, ...] = ()
    """Those of ``entry_points`` that name no module the file's owner ships."""
    disabled_by: str | None = None
    """For a ``.pth``: the ``.start`` file that turns its import lines off on this version."""
    wheel: str | None = None
    """For a hook judged before install (:mod:`wheeldoctor.judge.wheel_hooks`): the wheel file it would come from."""

    @property
    def relative(self) -> str:
        """The path below its directory, as RECORD names it (``litellm_init.pth``)."""
        return below(self.path, self.site_dir)

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


def judged(hook: StartupHook, intact: Mapping[str, bool]) -> StartupHook:
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
    if hook.error is not None:
        return _unread_finding(hook, recorded)
    if hook.kind is HookKind.START:
        return _start_finding(hook, recorded)
    if hook.lines:
        where = "line" + ("s " if len(hook.lines) > 1 else " ") + ", ".join(map(str, hook.lines))
    else:
        where = "imported at start-up, all of it runs"
    if hook.owner is None:
        message = f"{relative} runs code at every interpreter start ({where}), and no installer recorded it"
        return Finding(
            code=Code.STARTUP_HOOK_UNOWNED, kind=Kind.STARTUP_HOOK, path=relative, message=message, found=hook.sha256
        )
    message = f"{hook.owner.label} ships {relative}, which runs code at every interpreter start ({where})"
    return Finding(
        code=Code.STARTUP_HOOK_OWNED,
        kind=Kind.STARTUP_HOOK,
        path=relative,
        message=message,
        expected=recorded,
        found=hook.sha256,
    )


def _start_finding(hook: StartupHook, recorded: str | None) -> Finding:
    """A ``.start`` file that is not a known hook: which entry points, and which resolve to nothing its owner ships."""
    count = len(hook.entry_points)
    runs = f"names {count} entry point(s) that Python 3.15 and later call at every interpreter start"
    stray = f"; {len(hook.unresolved)} resolve(s) to no module its owner ships" if hook.unresolved else ""
    if hook.owner is None:
        message = f"{hook.relative} {runs}{stray}, and no installer recorded it"
        return Finding(
            code=Code.STARTUP_HOOK_UNOWNED,
            kind=Kind.STARTUP_HOOK,
            path=hook.relative,
            message=message,
            found=hook.sha256,
        )
    message = f"{hook.owner.label} ships {hook.relative}, which {runs}{stray}"
    return Finding(
        code=Code.STARTUP_HOOK_OWNED,
        kind=Kind.STARTUP_HOOK,
        path=hook.relative,
        message=message,
        expected=recorded,
        found=hook.sha256,
    )


def _unread_finding(hook: StartupHook, recorded: str | None) -> Finding:
    """A hook whose bytes could not all be read: it fails as if it ran code, since ``site`` reads it all."""
    unread = f"could not be read ({hook.error}): treated as running code at every interpreter start"
    if hook.owner is None:
        return Finding(
            code=Code.STARTUP_HOOK_UNOWNED,
            kind=Kind.STARTUP_HOOK,
            path=hook.relative,
            message=f"{hook.relative} {unread}, and no installer recorded it",
            found=hook.sha256,
        )
    return Finding(
        code=Code.STARTUP_HOOK_OWNED,
        kind=Kind.STARTUP_HOOK,
        path=hook.relative,
        message=f"{hook.owner.label} ships {hook.relative}, which {unread}",
        expected=recorded,
        found=hook.sha256,
    )

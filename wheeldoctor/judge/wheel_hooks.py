"""The start-up hooks a wheel would install, judged before install by the rules of installed hooks.

Pure: a :class:`~wheeldoctor.formats.wheelfile.WheelFile` (its hook members' bytes as read,
its RECORD rows) in, :class:`~wheeldoctor.judge.hooks.StartupHook` values out. Each hook is
read as ``site`` reads it, matched against the registry of known hooks with the wheel as its
owner, and judged by :func:`wheeldoctor.judge.hooks.judged`, as an installed hook is: WD070
for a line that runs code and is not known. Its RECORD row is checked against its bytes: a
hook its RECORD does not list (with a digest), or lists with other bytes, is a WD070 in
itself, known or not. A wheel is never installed editable, so the registry's editable-only
entries match nothing here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace

from wheeldoctor.formats.hook_template import KnownHook
from wheeldoctor.formats.pth import parse_pth
from wheeldoctor.formats.start import module_files, parse_start
from wheeldoctor.formats.wheel_hooks import HookMember
from wheeldoctor.formats.wheelfile import WheelFile
from wheeldoctor.judge.hooks import HookKind, StartupHook, judged
from wheeldoctor.judge.known_hooks import known_module, known_pth, known_start
from wheeldoctor.model.findings import Code, Finding, Kind
from wheeldoctor.model.ownership import Owner
from wheeldoctor.model.record import RecordRow, bytes_match
from wheeldoctor.model.record_fields import encode_digest

#: The two ways ``site`` splits a .pth (before 3.13, and since): a line that runs code in either is judged.
PTH_READINGS = ((3, 12), (3, 13))


def wheel_hooks(
    wheel: WheelFile, known: Sequence[KnownHook] = (), registry: Sequence[KnownHook] | None = None
) -> tuple[StartupHook, ...]:
    """Every start-up hook ``wheel`` would install, judged; ``known``: the config's own known hooks."""
    if not wheel.hooks:
        return ()
    rows = {m.row.path: m.row for m in wheel.members}
    shipped = frozenset(m.target for m in wheel.members)
    where = wheel_label(wheel)
    return tuple(_judge(wheel, where, h, rows.get(h.name), shipped, known, registry) for h in wheel.hooks)


def wheel_label(wheel: WheelFile) -> str:
    """The wheel's file name (from its path or URL), under which its hooks are shown: ``NAME.whl/x.pth``."""
    base = wheel.path.split("?", 1)[0].split("#", 1)[0].rstrip("/").rpartition("/")[2]
    return base or f"{wheel.name}-{wheel.version}.whl"


def _judge(
    wheel: WheelFile,
    where: str,
    member: HookMember,
    row: RecordRow | None,
    shipped: frozenset[str],
    known: Sequence[KnownHook],
    registry: Sequence[KnownHook] | None,
) -> StartupHook:
    data = member.data
    sha256 = None if data is None else f"sha256={encode_digest(hashlib.sha256(data).digest())}"
    owner = Owner(name=wheel.name, version=wheel.version, recorded=row.hash_text if row is not None else None)
    hook = StartupHook(
        path=f"{where}/{member.relative}",
        kind=HookKind(member.kind),
        site_dir=where,
        executes=True,
        lines=(),
        sha256=sha256,
        owner=owner,
        owner_intact=None,
        known=None,
        error=member.error,
        wheel=where,
    )
    if data is not None:
        hook = _read(hook, data, wheel.name, shipped, known, registry)
    intact = None if data is None or row is None else _matches(row, data)
    hook = replace(judged(hook, {}), owner_intact=intact)
    if data is not None and not intact:
        return replace(hook, finding=_record_finding(hook, row))
    return hook


def _read(
    hook: StartupHook,
    data: bytes,
    owner: str,
    shipped: frozenset[str],
    known: Sequence[KnownHook],
    registry: Sequence[KnownHook] | None,
) -> StartupHook:
    """``hook`` with what it runs (lines, entry points, a module's text) and the registry entry it matches."""
    name = hook.relative
    if hook.kind is HookKind.PTH:
        lines: dict[str, int] = {}
        for version in PTH_READINGS:
            for line in parse_pth(data, version).executing:
                lines.setdefault(line.text, line.number)
        texts = tuple(lines)
        match = known_pth(name, texts, owner, known, registry, editable=False)
        return replace(hook, executes=bool(texts), lines=tuple(lines.values()), code=texts, known=match)
    if hook.kind is HookKind.START:
        entries = parse_start(data)
        texts = tuple(e.text for e in entries)
        unresolved = tuple(e.text for e in entries if e.module is None or not _ships(e.module, shipped))
        match = None if unresolved else known_start(name, texts, owner, known, registry, editable=False)
        return replace(
            hook,
            executes=bool(texts),
            lines=tuple(e.number for e in entries),
            code=texts,
            entry_points=texts,
            unresolved=unresolved,
            known=match,
        )
    module = name if name.rpartition("/")[2] != "__init__.py" else name.partition("/")[0]
    text = data.decode("utf-8", "surrogateescape")
    return replace(hook, known=known_module(module, text, owner, known, registry, editable=False))


def _ships(module: str, shipped: frozenset[str]) -> bool:
    """Whether the wheel installs ``module`` below the site directory (source, bytecode or an extension)."""
    if any(path in shipped for path in module_files(module)):
        return True
    base = module.replace(".", "/") + "."
    return any(path.startswith(base) and path.endswith((".so", ".pyd")) for path in shipped)


def _matches(row: RecordRow, data: bytes) -> bool:
    assert row.algorithm is not None  # wheel members are hashed rows
    return bytes_match(row.digest, row.size, len(data), hashlib.new(row.algorithm, data).digest())


def _record_finding(hook: StartupHook, row: RecordRow | None) -> Finding:
    """WD070 for a hook whose bytes its wheel's RECORD does not vouch for, with the hook's own finding if any."""
    assert hook.owner is not None
    note = (
        "which its RECORD does not list with a digest" if row is None else "whose bytes are not those its RECORD gives"
    )
    if hook.finding is not None:
        return replace(hook.finding, message=f"{hook.finding.message}, and {note}", expected=hook.owner.recorded)
    return Finding(
        code=Code.STARTUP_HOOK_OWNED,
        kind=Kind.STARTUP_HOOK,
        path=hook.relative,
        message=f"{hook.owner.label} ships {hook.relative}, {note}",
        expected=hook.owner.recorded,
        found=hook.sha256,
    )

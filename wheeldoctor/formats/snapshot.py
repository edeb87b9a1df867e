"""Snapshots <-> their JSON document (``wheeldoctor-snapshot`` 1.x).

Writing is canonical: sorted keys, ASCII only (a path that is not UTF-8 keeps one
spelling), one key a line, no timestamps, so an unchanged environment gives the same bytes.
Fields with nothing to say are left out (``disk`` where it equals ``record``, an empty
``files``), which keeps a few hundred distributions within tens of kilobytes.

Reading takes a file from anywhere (another node, an artifact store): its size and nesting
are bounded before it is parsed, every field is checked for its type, and anything wrong is
one :class:`SnapshotError`. Fields a later minor version adds are ignored; another major
version is refused.
"""

from __future__ import annotations

import json
import re
from typing import Any

from wheeldoctor.model.errors import InputError
from wheeldoctor.model.snapshot import (
    MAJOR,
    MINOR,
    SCHEMA,
    DistributionState,
    FileDrift,
    HookState,
    Snapshot,
    UnownedSummary,
)

#: A snapshot is kilobytes; anything past this is not one, and is not read further.
MAX_BYTES = 32 << 20
#: The document nests four levels deep; a reader stops well before recursion could.
MAX_DEPTH = 16


class SnapshotError(InputError):
    """A file is not a snapshot this version can read; the message is one line."""


def encode(snapshot: Snapshot) -> str:
    """The canonical text of ``snapshot`` (ends with a newline)."""
    return json.dumps(document(snapshot), sort_keys=True, indent=1, separators=(",", ":"), ensure_ascii=True) + "\n"


def document(snapshot: Snapshot) -> dict[str, Any]:
    """``snapshot`` as a JSON object."""
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "version": f"{MAJOR}.{MINOR}",
        "host": snapshot.host,
        "interpreter": {
            "implementation": snapshot.implementation,
            "python": snapshot.python,
            "platform": snapshot.platform,
        },
        "tags": {"count": snapshot.tags_count, "head": list(snapshot.tags_head), "sha256": snapshot.tags_sha256},
        "distributions": {d.name: _distribution(d) for d in snapshot.distributions},
        "hooks": [{"path": h.path, "kind": h.kind, "owner": h.owner, "sha256": h.sha256} for h in snapshot.hooks],
    }
    if snapshot.unowned is not None:
        doc["unowned"] = {"files": snapshot.unowned.files, "importable": list(snapshot.unowned.importable)}
    return doc


def _distribution(dist: DistributionState) -> dict[str, Any]:
    out: dict[str, Any] = {
        "version": dist.version,
        "installer": dist.installer,
        "status": dist.status,
        "record": dist.record,
    }
    if dist.disk != dist.record:
        out["disk"] = dist.disk
    if dist.files:
        out["files"] = [{"path": f.path, "code": f.code, "recorded": f.recorded, "found": f.found} for f in dist.files]
    if dist.files_omitted:
        out["files_omitted"] = dist.files_omitted
    return out


def decode(data: bytes) -> Snapshot:
    """The snapshot in ``data``; :class:`SnapshotError` for anything else."""
    if len(data) > MAX_BYTES:
        raise SnapshotError(f"larger than {MAX_BYTES >> 20} MiB: not a snapshot")
    deep = SnapshotError(f"nested deeper than {MAX_DEPTH} levels: not a snapshot")
    try:
        # The C parser is linear in the input; it raises RecursionError at the interpreter's
        # recursion limit, long before the stack could overflow.
        raw = json.loads(data)
    except RecursionError:
        raise deep from None
    except ValueError as e:  # UnicodeDecodeError is a ValueError
        raise SnapshotError(f"not JSON ({_short(e)}): truncated, or not a snapshot") from None
    if _deeper(raw, MAX_DEPTH):
        raise deep
    if not isinstance(raw, dict) or raw.get("schema") != SCHEMA:
        raise SnapshotError(f'not a wheeldoctor snapshot (no "schema": "{SCHEMA}")')
    version = raw.get("version")
    match = re.fullmatch(r"(\d{1,6})\.(\d{1,6})", version) if isinstance(version, str) else None
    if match is None:
        raise SnapshotError('snapshot without a readable "version"')
    if int(match.group(1)) != MAJOR:
        raise SnapshotError(f"snapshot version {version}: this wheeldoctor reads {MAJOR}.x only")
    try:
        return _snapshot(raw)
    except _Bad as e:
        raise SnapshotError(f"malformed snapshot: {e}") from None


def _deeper(value: object, limit: int) -> bool:
    """Whether ``value`` nests lists and objects more than ``limit`` levels deep (no recursion)."""
    level: list[object] = [value]
    for _ in range(limit):
        level = [
            child
            for item in level
            if isinstance(item, (list, dict))
            for child in (item.values() if isinstance(item, dict) else item)
        ]
        if not level:
            return False
    return any(isinstance(item, (list, dict)) for item in level)


class _Bad(Exception):
    """A field of the wrong type or shape; its message names the field."""


def _snapshot(raw: dict[str, Any]) -> Snapshot:
    interpreter = _object(raw, "interpreter")
    tags = _object(raw, "tags")
    dists = _object(raw, "distributions")
    unowned = raw.get("unowned")
    return Snapshot(
        host=_text(raw, "host"),
        implementation=_text(interpreter, "implementation"),
        python=_text(interpreter, "python"),
        platform=_text(interpreter, "platform"),
        tags_sha256=_text(tags, "sha256", optional=True),
        tags_count=_count(tags, "count"),
        tags_head=tuple(_texts(tags, "head")),
        distributions=tuple(_dist_state(name, _object(dists, name)) for name in sorted(dists)),
        hooks=tuple(_hook(item) for item in _list(raw, "hooks")),
        unowned=None
        if unowned is None
        else UnownedSummary(
            files=_count(_object(raw, "unowned"), "files"), importable=tuple(_texts(unowned, "importable"))
        ),
    )


def _dist_state(name: str, raw: dict[str, Any]) -> DistributionState:
    record = _text(raw, "record", optional=True)
    return DistributionState(
        name=name,
        version=_text(raw, "version"),
        installer=_text(raw, "installer", optional=True),
        status=_text(raw, "status"),
        record=record,
        disk=_text(raw, "disk", optional=True) if "disk" in raw else record,
        files=tuple(_drift(item) for item in _list(raw, "files", optional=True)),
        files_omitted=_count(raw, "files_omitted", optional=True),
    )


def _drift(raw: object) -> FileDrift:
    if not isinstance(raw, dict):
        raise _Bad("a file entry is not an object")
    return FileDrift(
        path=_text(raw, "path"),
        code=_text(raw, "code"),
        recorded=_text(raw, "recorded", optional=True),
        found=_text(raw, "found", optional=True),
    )


def _hook(raw: object) -> HookState:
    if not isinstance(raw, dict):
        raise _Bad("a hook is not an object")
    return HookState(
        path=_text(raw, "path"),
        kind=_text(raw, "kind"),
        owner=_text(raw, "owner", optional=True),
        sha256=_text(raw, "sha256", optional=True),
    )


def _object(raw: dict[str, Any], key: str) -> dict[str, Any]:
    value = raw.get(key)
    if not isinstance(value, dict):
        raise _Bad(f"{key!r} is not an object")
    return value


def _list(raw: dict[str, Any], key: str, optional: bool = False) -> list[Any]:
    value = raw.get(key)
    if value is None and optional:
        return []
    if not isinstance(value, list):
        raise _Bad(f"{key!r} is not a list")
    return value


def _text(raw: dict[str, Any], key: str, optional: bool = False) -> Any:
    value = raw.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise _Bad(f"{key!r} is not a string")
    return value


def _texts(raw: object, key: str) -> list[str]:
    values = _list(raw, key) if isinstance(raw, dict) else None
    if values is None or not all(isinstance(v, str) for v in values):
        raise _Bad(f"{key!r} is not a list of strings")
    return values


def _count(raw: dict[str, Any], key: str, optional: bool = False) -> int:
    value = raw.get(key)
    if value is None and optional:
        return 0
    if type(value) is not int or value < 0:
        raise _Bad(f"{key!r} is not a count")
    return value


def _short(error: Exception) -> str:
    return str(error).splitlines()[0][:80] if str(error) else type(error).__name__

"""Baselines: the findings of one run, pinned, as a small versioned JSON file.

Each entry pins a finding by distribution, version, path, code and found digest, so a
baseline accepts exactly the state it was written on: any further change to a file
it names (other bytes, so another digest) is a new finding.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from wheeldoctor.formats.trust import refusal, untrusted
from wheeldoctor.model.errors import InputError

FORMAT = "wheeldoctor-baseline"
VERSION = 1
_KEYS = ("distribution", "version", "path", "code", "found")


class BaselineError(InputError):
    """A baseline file that cannot be used; the message is one line naming the file."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BaselineEntry:
    """One pinned finding."""

    distribution: str
    version: str | None
    path: str | None
    code: str
    found: str | None

    def matches(self, distribution: str, version: str | None, path: str | None, code: str, found: str | None) -> bool:
        """Whether this is that very finding (same bytes included)."""
        return (self.distribution, self.version, self.path, self.code, self.found) == (
            distribution,
            version,
            path,
            code,
            found,
        )


def dumps(entries: Iterable[BaselineEntry]) -> str:
    """The file's text: sorted entries, so rewriting an unchanged state changes no byte."""
    rows = sorted({e: None for e in entries}, key=lambda e: tuple(str(v) for v in _values(e)))
    document = {
        "format": FORMAT,
        "version": VERSION,
        "findings": [dict(zip(_KEYS, _values(e), strict=True)) for e in rows],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def load(path: str) -> tuple[BaselineEntry, ...]:
    """Read a baseline file; :class:`BaselineError` when it is not one this version writes, or not yours."""
    why = untrusted(path)
    if why is not None:
        raise BaselineError(refusal(path, why))
    try:
        with open(path, encoding="utf-8") as f:
            document: Any = json.load(f)
    except OSError as e:
        raise BaselineError(f"{path}: cannot be read: {e.strerror or e}") from None
    except ValueError as e:
        raise BaselineError(f"{path}: not JSON: {e}") from None
    except RecursionError:
        raise BaselineError(f"{path}: not JSON: nested too deeply") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise BaselineError(f'{path}: not a wheeldoctor baseline (no "format": "{FORMAT}")')
    if document.get("version") != VERSION:
        raise BaselineError(f"{path}: baseline version {document.get('version')!r}; this wheeldoctor reads {VERSION}")
    rows = document.get("findings")
    if not isinstance(rows, list):
        raise BaselineError(f'{path}: "findings" must be a list')
    entries = []
    for index, row in enumerate(rows):
        if not isinstance(row, dict) or set(row) != set(_KEYS):
            raise BaselineError(f"{path}: findings[{index}] must have exactly the keys {', '.join(_KEYS)}")
        if not isinstance(row["distribution"], str) or not isinstance(row["code"], str):
            raise BaselineError(f"{path}: findings[{index}]: distribution and code must be strings")
        for key in ("version", "path", "found"):
            if row[key] is not None and not isinstance(row[key], str):
                raise BaselineError(f"{path}: findings[{index}].{key} must be a string or null")
        entries.append(
            BaselineEntry(
                distribution=row["distribution"],
                version=row["version"],
                path=row["path"],
                code=row["code"],
                found=row["found"],
            )
        )
    return tuple(entries)


def _values(entry: BaselineEntry) -> tuple[str | None, ...]:
    return (entry.distribution, entry.version, entry.path, entry.code, entry.found)

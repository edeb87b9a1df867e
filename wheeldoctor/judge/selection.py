"""``--select`` / ``--ignore``: which finding codes count, by prefix, as ruff and check-wheel-contents take them.

Pure. A code counts when some ``select`` prefix matches it (every code when ``select`` is
empty) and no ``ignore`` prefix at least as long as the longest matching ``select`` prefix
does: ``--select WD07 --ignore WD01`` keeps WD071, ``--select WD07 --ignore WD071`` drops it.
A selection narrows advisory findings only: the codes of
:data:`~wheeldoctor.model.findings.INTEGRITY_CODES` always count. A prefix is a whole code
or a documented group of ten (``WD07``); ``WD`` or ``WD0``, which name nearly every code, are
refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from wheeldoctor.model.errors import InputError
from wheeldoctor.model.findings import INTEGRITY_CODES, PREFIX_HELP, is_code_prefix


class SelectionError(InputError):
    """A ``--select``/``--ignore`` value that is not a code prefix."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CodeSelection:
    """The code prefixes selected and ignored; empty ``select`` selects every code."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    select_from: str | None = None
    """The config file ``select`` came from; None: the command line (or nothing)."""
    ignore_from: str | None = None
    """The config file ``ignore`` came from; None: the command line (or nothing)."""

    @property
    def everything(self) -> bool:
        """Every code counts: the run is judged as without a selection."""
        return not self.select and not self.ignore

    def allows(self, code: str) -> bool:
        """Whether findings of ``code`` count (are shown and fail the run); integrity codes always do."""
        if code in INTEGRITY_CODES:
            return True
        chosen = max((len(p) for p in self.select if code.startswith(p)), default=-1 if self.select else 0)
        if chosen < 0:
            return False
        return not any(code.startswith(p) and len(p) >= chosen for p in self.ignore)

    def describe(self) -> str:
        """``--select WD04 --ignore WD041`` as given (``FILE: ignore WD061`` for a config's), for a finding left out."""
        parts = [_said("select", self.select, self.select_from)] if self.select else []
        if self.ignore:
            parts.append(_said("ignore", self.ignore, self.ignore_from))
        return "; ".join(parts)

    def narrowed_by(self, config: str) -> tuple[str, ...]:
        """What the config file ``config`` set of this selection: ``select WD04``, ``ignore WD061``."""
        out = [f"select {','.join(self.select)}"] if self.select and self.select_from == config else []
        if self.ignore and self.ignore_from == config:
            out.append(f"ignore {','.join(self.ignore)}")
        return tuple(out)


def _said(key: str, prefixes: tuple[str, ...], source: str | None) -> str:
    return f"--{key} {','.join(prefixes)}" if source is None else f"{source}: {key} {','.join(prefixes)}"


def parse_prefixes(values: Iterable[str], option: str) -> tuple[str, ...]:
    """Code prefixes from repeated and comma-separated option values (``WD07,WD001``), upper-cased."""
    out: list[str] = []
    for value in values:
        for item in value.split(","):
            prefix = item.strip().upper()
            if not prefix:
                # Dropped, it would leave no prefix: everything selected, a config's select overridden.
                raise SelectionError(f"{option} {value!r}: empty; give {PREFIX_HELP}")
            if not is_code_prefix(prefix):
                raise SelectionError(f"{option} {item.strip()!r}: not {PREFIX_HELP}")
            out.append(prefix)
    return tuple(out)

"""``--select`` / ``--ignore``: which finding codes count, by prefix, as ruff and check-wheel-contents take them.

Pure. A code counts when some ``select`` prefix matches it (every code when ``select`` is
empty) and no ``ignore`` prefix at least as long as the longest matching ``select`` prefix
does: ``--select WD07 --ignore WD0`` keeps WD071, ``--select WD0 --ignore WD07`` drops it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from wheeldoctor.model.errors import InputError

_PREFIX = re.compile(r"^WD[0-9]{0,3}$")


class SelectionError(InputError):
    """A ``--select``/``--ignore`` value that is not a code prefix."""


@dataclass(frozen=True, slots=True)
class CodeSelection:
    """The code prefixes selected and ignored; empty ``select`` selects every code."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    @property
    def everything(self) -> bool:
        """Every code counts: the run is judged as without a selection."""
        return not self.select and not self.ignore

    def allows(self, code: str) -> bool:
        """Whether findings of ``code`` count (are shown and fail the run)."""
        chosen = max((len(p) for p in self.select if code.startswith(p)), default=-1 if self.select else 0)
        if chosen < 0:
            return False
        return not any(code.startswith(p) and len(p) >= chosen for p in self.ignore)

    def describe(self) -> str:
        """``--select WD0 --ignore WD07`` as given, for the reason of a finding left out."""
        parts = [f"--select {','.join(self.select)}"] if self.select else []
        if self.ignore:
            parts.append(f"--ignore {','.join(self.ignore)}")
        return " ".join(parts)


def parse_prefixes(values: Iterable[str], option: str) -> tuple[str, ...]:
    """Code prefixes from repeated and comma-separated option values (``WD07,WD001``), upper-cased."""
    out: list[str] = []
    for value in values:
        for item in value.split(","):
            prefix = item.strip().upper()
            if not prefix:
                # Dropped, it would leave no prefix: everything selected, a config's select overridden.
                raise SelectionError(f"{option} {value!r}: empty code prefix (WD, WD0, WD07, WD071)")
            if not _PREFIX.match(prefix):
                raise SelectionError(f"{option} {item.strip()!r}: not a code prefix (WD, WD0, WD07, WD071)")
            out.append(prefix)
    return tuple(out)

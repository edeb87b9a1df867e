"""Requires-Dist lines -> packaging's ``Requirement``, each distinct text parsed once per process.

Many distributions require the same things in the same words (``typing-extensions>=4``,
``numpy``): the parse is memoised by text. The objects are shared, so they must not be
changed, and a judge keying anything by ``id()`` keys the text, not the line.
"""

from __future__ import annotations

from functools import lru_cache

TYPE_CHECKING = False
if TYPE_CHECKING:
    from packaging.requirements import Requirement

#: Distinct texts kept: a real environment has a few thousand; a hostile one cannot grow memory past this.
_KEPT = 16384


@lru_cache(maxsize=_KEPT)
def parse_requirement(text: str) -> Requirement:
    """packaging's parse of ``text``; raises ``packaging.requirements.InvalidRequirement`` (not memoised)."""
    from packaging.requirements import Requirement

    return Requirement(text)

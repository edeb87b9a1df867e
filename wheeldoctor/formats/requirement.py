"""Requires-Dist lines -> packaging's ``Requirement``, each distinct text parsed once per process.

Many distributions require the same things in the same words (``typing-extensions>=4``,
``numpy``), and deps, the requirement graph, preflight and fix each walk them: the parse is
memoised by text. The objects are shared, so they must not be changed, and a judge keying
anything by ``id()`` keys the text, not the line.
"""

from __future__ import annotations

from functools import lru_cache

TYPE_CHECKING = False
if TYPE_CHECKING:
    from packaging.requirements import InvalidRequirement, Requirement

#: Distinct texts kept: a real environment has a few thousand; a hostile one cannot grow memory past this.
_KEPT = 16384


@lru_cache(maxsize=_KEPT)
def parse_requirement(text: str) -> Requirement | InvalidRequirement:
    """packaging's parse of Requires-Dist line ``text``, or why it does not parse."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return Requirement(text)
    except InvalidRequirement as e:
        return e.with_traceback(None)  # kept: its frames need not be
    except ValueError as e:  # a version of more than int()'s 4,300 digits
        return InvalidRequirement(str(e).partition(";")[0])

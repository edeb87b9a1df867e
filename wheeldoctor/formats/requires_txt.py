"""An ``.egg-info``'s ``requires.txt``, as pip reads it: its Requires-Dist and Provides-Extra lines.

setuptools writes an egg-info's requirements to ``requires.txt``, not to PKG-INFO. Where
PKG-INFO has no Requires-Dist (no Provides-Extra), pip takes them from there
(``pip/_internal/metadata/base.py``: ``_add_egg_info_requires``), and so does ``pip
check``: each line is a requirement; a ``[extra:marker]`` header starts a section whose
lines get the marker ``(marker) and extra == "extra"`` (the extra normalised as packaging
normalises names); blank lines and ``#`` comments are skipped. pip's older pkg_resources
backend evaluates a section's marker itself instead of writing it into the requirement:
for the target interpreter, the same requirements.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.utils import canonicalize_name


@dataclass(frozen=True, slots=True)
class RequiresTxt:
    """What ``requires.txt`` adds to the metadata, as PEP 508 strings and extra names."""

    requires_dist: tuple[str, ...]
    provides_extra: tuple[str, ...]


def parse_requires_txt(text: str) -> RequiresTxt:
    """The Requires-Dist lines and extras ``text`` gives, in pip's order and spelling."""
    requires: list[str] = []
    extras: dict[str, None] = {}
    extra = marker = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            extra, _, marker = line.strip("[]").partition(":")
            continue
        name = canonicalize_name(extra)
        if name:
            extras[name] = None
        if name and marker:
            requires.append(f'{line} ; ({marker}) and extra == "{name}"')
        elif name:
            requires.append(f'{line} ; extra == "{name}"')
        elif marker:
            requires.append(f"{line} ; {marker}")
        else:
            requires.append(line)
    return RequiresTxt(tuple(requires), tuple(extras))

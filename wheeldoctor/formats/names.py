"""Whether a METADATA Name and Version may enter a command: packaging's rules, nothing else.

An attacker may have written METADATA. A word enters an installer's command line only as
a valid project name (it then starts with a letter or digit: never ``-r/file``, ``-e/dir``
or ``evil @ file:///dir``) and a PEP 440 version.

The answer depends on the words alone, so the words found fit are remembered for the
process. Nothing is kept between runs.
"""

from __future__ import annotations

#: (name, version) pairs found fit in this process.
_FIT: set[tuple[str, str | None]] = set()
#: A hostile environment of a million names cannot grow the set past this.
_FIT_MOST = 1 << 16


def unsafe_words(name: str, version: str | None = None) -> str | None:
    """Why ``name`` (and ``version``) must not enter a command, or None when they may."""
    if (name, version) in _FIT:
        return None
    from packaging.utils import InvalidName, canonicalize_name
    from packaging.version import Version

    try:
        canonicalize_name(name, validate=True)
    except InvalidName:
        return f"its name {name!r} is not a valid project name, so no command is built from it"
    if name.startswith("-"):  # the rules above exclude it; said again for whoever changes them
        return f"its name {name!r} reads as an option, so no command is built from it"
    if version is not None:
        try:
            Version(version)
        except ValueError:  # InvalidVersion, or digits past int()'s limit
            return f"its version {version!r} is not a PEP 440 version, so no command is built from it"
    if len(_FIT) < _FIT_MOST:
        _FIT.add((name, version))
    return None


def same_version(first: str, second: str) -> bool:
    """Whether two versions are one by PEP 440 (``1.0`` is ``1.0.0``); as text where either is not one."""
    from packaging.version import Version

    try:
        return Version(first) == Version(second)
    except ValueError:  # InvalidVersion, or digits past int()'s limit
        return first == second

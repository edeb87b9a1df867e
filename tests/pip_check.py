"""Run the real ``pip check`` on a venv and read its findings, and ours, as comparable sets.

``pip check`` prints one line per problem (pip/_internal/commands/check.py):

* ``{name} {version} requires {dep}, which is not installed.``
* ``{name} {version} has requirement {req}, but you have {dep} {version}.``
* ``{name} {version} is not supported on this platform`` (pip >= 24.2)

Names are canonical and versions normalised on both sides before comparing.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

_MISSING = re.compile(r"^(?P<dist>\S+) (?P<version>\S+) requires (?P<name>\S+), which is not installed\.$")
_CONFLICT = re.compile(
    r"^(?P<dist>\S+) (?P<version>\S+) has requirement (?P<req>.+), but you have (?P<name>\S+) (?P<installed>\S+)\.$"
)
_UNSUPPORTED = re.compile(r"^(?P<dist>\S+) (?P<version>\S+) is not supported on this platform$")
_HEALTHY = "No broken requirements found."


@dataclass(frozen=True, order=True)
class Problem:
    """One (distribution, requirement) problem, as both tools can state it."""

    dist: str
    version: str
    kind: str
    name: str
    installed: str | None
    requirement: str | None = None
    """For incompatible ones: the requirement, as our packaging writes it once parsed."""


@dataclass(frozen=True)
class PipCheck:
    """What ``pip check`` said."""

    returncode: int
    problems: frozenset[Problem]
    unsupported: frozenset[tuple[str, str]]
    stdout: str
    stderr: str


def _requirement(text: str) -> str:
    # pip's vendored packaging may write a requirement differently; parsed, they compare.
    return str(Requirement(text))


def _version(text: str) -> str:
    try:
        return str(Version(text))
    except InvalidVersion:
        return text


def pip_check(python: Path | str) -> PipCheck:
    """``python -m pip --python PYTHON check`` with the test interpreter's pip, parsed strictly."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "check"],
        capture_output=True,
        text=True,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"},
        stdin=subprocess.DEVNULL,
        timeout=300,
        check=False,
    )
    problems: set[Problem] = set()
    unsupported: set[tuple[str, str]] = set()
    for line in done.stdout.splitlines():
        if not line.strip() or line.strip() == _HEALTHY:
            continue
        if m := _MISSING.match(line):
            problems.add(
                Problem(
                    str(canonicalize_name(m["dist"])),
                    _version(m["version"]),
                    "missing",
                    str(canonicalize_name(m["name"])),
                    None,
                )
            )
        elif m := _CONFLICT.match(line):
            problems.add(
                Problem(
                    str(canonicalize_name(m["dist"])),
                    _version(m["version"]),
                    "incompatible",
                    str(canonicalize_name(m["name"])),
                    _version(m["installed"]),
                    _requirement(m["req"]),
                )
            )
        elif m := _UNSUPPORTED.match(line):
            unsupported.add((str(canonicalize_name(m["dist"])), _version(m["version"])))
        else:
            raise AssertionError(f"pip check printed a line this parser does not know: {line!r}")
    return PipCheck(done.returncode, frozenset(problems), frozenset(unsupported), done.stdout, done.stderr)


def ours(conflicts: Iterable[Mapping[str, Any]], *, pip_comparable: bool = True) -> frozenset[Problem]:
    """Our JSON ``dependency_conflicts`` as Problems; by default only those pip check also covers."""
    return frozenset(
        Problem(
            str(canonicalize_name(c["dist"])),
            _version(c["version"]),
            c["kind"],
            c["name"],
            None if c["installed"] is None else _version(c["installed"]),
            _requirement(c["requirement"]) if c["kind"] == "incompatible" else None,
        )
        for c in conflicts
        if not pip_comparable or c["via_extra"] is None
    )

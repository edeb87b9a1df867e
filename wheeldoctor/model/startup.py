"""The search path a normal start builds, as data: its entries, site directories and .pth files read."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


@dataclass(frozen=True, slots=True)
class PthLine:
    """One line that ``site`` acts on: a directory to add, or code it runs.

    ``number`` counts from 1 as ``site`` does in its error messages; ``text`` is the
    line as ``site`` uses it (a path line without trailing whitespace, an import line
    without its line break).
    """

    number: int
    text: str
    executes: bool


@dataclass(frozen=True, slots=True)
class PthFile:
    """The lines of one .pth file that ``site`` acts on, in file order."""

    lines: tuple[PthLine, ...]

    @property
    def executing(self) -> tuple[PthLine, ...]:
        """The lines ``site`` would pass to ``exec()``."""
        return tuple(line for line in self.lines if line.executes)

    @property
    def paths(self) -> tuple[PthLine, ...]:
        """The lines ``site`` would join to the site directory."""
        return tuple(line for line in self.lines if not line.executes)


class Origin(str, Enum):
    """Why an entry is on the search path; the JSON ``origin`` field."""

    PYTHONPATH = "PYTHONPATH"
    INTERPRETER = "interpreter"
    """The interpreter's own entries: the standard library and its extension modules."""
    SITE = "site"
    """A site directory (site-packages, dist-packages, the user site)."""
    PTH = "pth"
    """A path line of a .pth file."""
    RUNNING = "running"
    """Taken from the running interpreter's ``sys.path``, which its start-up already built."""
    GIVEN = "given"
    """A directory named with ``--path``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PathEntry:
    """One entry of the search path and where it came from (``pth`` and ``line`` for .pth lines)."""

    path: str
    origin: Origin
    pth: str | None = None
    line: int | None = None


@dataclass(frozen=True, slots=True)
class SiteDir:
    """A directory that ``site`` would process with ``addsitedir``; ``user`` for the user site."""

    path: str
    user: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class PthRead:
    """One .pth file as read from a site directory; ``error`` says why its lines could not be (``parsed`` None)."""

    path: str
    site_dir: str
    parsed: PthFile | None
    error: str | None = None
    sha256: str | None = None
    """The digest of the file's bytes (those parsed, when parsed), as RECORD spells it (``sha256=…``);
    None when they could not all be read."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Startup:
    """What a normal start of the interpreter does to ``sys.path``, and what it would run.

    ``entries`` is the search path, in order; ``site_dirs`` the directories whose .pth
    files were read; ``pth_files`` every .pth read there. Any entry that the import lines
    of those files would add is absent: those lines (``not_run``) were not executed.
    """

    entries: tuple[PathEntry, ...]
    site_dirs: tuple[SiteDir, ...]
    pth_files: tuple[PthRead, ...]
    version: tuple[int, int]
    isolated: bool = True
    """True when worked out without running startup code; False for the running interpreter,
    whose ``sys.path`` startup code already built."""
    user_site: bool | None = None
    """Whether ``site`` enables the user site (then it imports ``usercustomize``); None: unknown."""

    @property
    def paths(self) -> tuple[str, ...]:
        """The search path as plain strings."""
        return tuple(entry.path for entry in self.entries)

    @property
    def not_run(self) -> tuple[tuple[str, int], ...]:
        """(.pth path, line number) of every line that would run code at start-up; none was run."""
        return tuple(
            (pth.path, line.number) for pth in self.pth_files if pth.parsed is not None for line in pth.parsed.executing
        )

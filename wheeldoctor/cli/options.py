"""The command line declared once: each option's spelling, kind and help, for both parsers.

Every command has one frozen options class (beside its body: ``cli/check.py``'s
``CheckOptions``, ...), whose fields are declared with :func:`given`: a field's
``metadata["cli"]`` is its :class:`Spec`. typer's commands are built from those fields
(``cli/app.py``), and the fast parser reads the same ones (``cli/plain.py``), so the two
cannot drift. typer is not imported here: the fast path runs without it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

TYPE_CHECKING = False  # typing stays off the path the fast parser exists for
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TypeVar

    from _typeshed import DataclassInstance

    Options = TypeVar("Options", bound=DataclassInstance)

FLAG, VALUE, MANY, COUNT, NUMBER, WORDS = "flag", "value", "many", "count", "number", "words"
"""How an option is given: alone (True), with one value (the last one wins), repeatable (a
tuple), with a positive whole number, with a number; ``WORDS`` are the positional words."""

#: A field's default, by kind, where the declaration gives none.
_DEFAULTS: dict[str, object] = {FLAG: False, VALUE: None, MANY: (), COUNT: None, WORDS: ()}


@dataclass(frozen=True, slots=True, kw_only=True)
class Spec:
    """How one option is spelt and taken on the command line, and its help."""

    names: tuple[str, ...]
    """``--output``, ``-o``: the long name first; none for ``WORDS``."""
    kind: str
    help: str
    metavar: str | None = None
    """The value's name in the help (``PATH``); for ``WORDS``, the words' (``NAME...``)."""
    required: bool = False
    """``WORDS`` that must be given (typer says so when they are not)."""


def flag(*names: str, help: str) -> Spec:
    """An option given alone: True when given."""
    return Spec(names=names, kind=FLAG, help=help)


def value(*names: str, metavar: str, help: str) -> Spec:
    """An option with one value (the last one given wins)."""
    return Spec(names=names, kind=VALUE, help=help, metavar=metavar)


def many(*names: str, metavar: str, help: str) -> Spec:
    """A repeatable option with one value each time: a tuple of them, in order."""
    return Spec(names=names, kind=MANY, help=help, metavar=metavar)


def count(*names: str, help: str) -> Spec:
    """An option with a positive whole number."""
    return Spec(names=names, kind=COUNT, help=help)


def number(*names: str, metavar: str, help: str) -> Spec:
    """An option with a number."""
    return Spec(names=names, kind=NUMBER, help=help, metavar=metavar)


def words(metavar: str, help: str, *, required: bool = False) -> Spec:
    """The positional words, a tuple of them."""
    return Spec(names=(), kind=WORDS, help=help, metavar=metavar, required=required)


def given(spec: Spec, default: object = None) -> Any:
    """The options-class field of ``spec``: its default is ``default``, else its kind's."""
    value = default if default is not None else _DEFAULTS.get(spec.kind)
    return field(default=value, metadata={"cli": spec})


def specs(options: DataclassInstance | type[DataclassInstance]) -> list[tuple[str, Spec]]:
    """The fields of an options class, in order, with their specs."""
    return [(f.name, f.metadata["cli"]) for f in fields(options)]


def build(options: type[Options], values: Mapping[str, object]) -> Options:
    """An options object from values as typer passes them: a repeatable option's list (or None) as a tuple."""
    made = dict(values)
    for name, spec in specs(options):
        if spec.kind in (MANY, WORDS):
            given = values.get(name)
            made[name] = tuple(given) if isinstance(given, (list, tuple)) else ()
    return options(**made)


PYTHON = value(
    "--python",
    metavar="PATH",
    help="Inspect this interpreter's environment. It is started (with -I -S) to ask for its paths: "
    "give only an interpreter you would run.",
)
PATH = many("--path", metavar="DIR", help="Inspect this site directory (repeatable), in order.")
DPKG_ADMINDIR = value(
    "--dpkg-admindir",
    metavar="DIR",
    help="dpkg's database (default /var/lib/dpkg); IMG/var/lib/dpkg reads a mounted image rooted at IMG.",
)
JSON = flag("--json", help="The same as --format json.")
FORMAT = value(
    "--format",
    metavar="FORMAT",
    help="text (default), json, github (annotations), junit, sarif or cyclonedx (an SBOM).",
)
#: ``--format`` of deps and wheels: no SBOM (they judge requirements and wheels, not verified files).
REPORT_FORMAT = value("--format", metavar="FORMAT", help="text (default), json, github (annotations), junit or sarif.")
OUTPUT = value(
    "--output",
    "-o",
    metavar="FILE",
    help="Write the report to FILE (atomically); stdout gets the text report. - is stdout.",
)
JOBS = count("--jobs", "-j", help="Hashing threads or forked workers (default: usable CPUs).")
CONFIG = value(
    "--config",
    metavar="FILE",
    help="Accept rules and defaults (python, select, ...) from FILE, not the nearest config.",
)
ISOLATED = flag(
    "--isolated",
    help="Read no config file (pyproject.toml, wheeldoctor.toml): the command line alone decides.",
)
BASELINE = value("--baseline", metavar="FILE", help="Accept what FILE pins.")
WRITE_BASELINE = value("--write-baseline", metavar="FILE", help="Pin the current findings in FILE; exit 0.")
SHOW_ACCEPTED = flag("--show-accepted", help="List accepted findings too.")
STRICT = flag("--strict", help="Fail on overlaid distributions too, and on unverifiable ones with --all.")
NO_CACHE = flag("--no-cache", help="Use no cache: hash every file, read every dist-info (nothing is written).")
SHOW_UNOWNED = flag("--show-unowned", help="List every file no installer recorded.")
SELECT = many(
    "--select",
    metavar="CODE",
    help="Only these codes or groups count, and integrity always (repeatable, or CODE,CODE): WD04, WD041.",
)
IGNORE = many(
    "--ignore", metavar="CODE", help="These advisory codes or groups do not count (repeatable, or CODE,CODE): WD061."
)
EXIT_ZERO = flag("--exit-zero", help="Exit 0 even when problems are found (2 still means it could not run).")
QUIET = flag("--quiet", "-q", help="Only what fails and the summary: no environment line, notes, tips, progress.")
VERBOSE = flag(
    "--verbose", "-v", help="Every finding of a clash, and full digests in the terminal table (JSON always has them)."
)
LOCK = value("--lock", metavar="FILE", help="pylock.toml, pylock.NAME.toml, uv.lock (wheels: also pip --report JSON).")
FIND_LINKS = many(
    "--find-links", metavar="DIR", help="Read locked wheels found in DIR (hash-checked) instead of fetching."
)
VERIFY_WHEELS = flag("--verify-wheels", help="Download whole wheels and check each sha256 against the lock.")
EXTRA = many("--extra", metavar="NAME", help="Select the lock with this extra (repeatable).")
GROUP = many("--group", metavar="NAME", help="Select these dependency groups, not the lock's default (repeatable).")

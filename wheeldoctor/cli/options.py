"""The options several commands share, declared once."""

from __future__ import annotations

from typing import Annotated

import typer

PythonOption = Annotated[
    str | None,
    typer.Option(
        "--python",
        metavar="PATH",
        help="Inspect this interpreter's environment. It is started (with -I -S) to ask for its paths: "
        "give only an interpreter you would run.",
    ),
]
PathOption = Annotated[
    list[str] | None,
    typer.Option("--path", metavar="DIR", help="Inspect this site directory (repeatable), in order."),
]
DpkgAdmindirOption = Annotated[
    str | None,
    typer.Option(
        "--dpkg-admindir",
        metavar="DIR",
        help="dpkg's database (default /var/lib/dpkg); IMG/var/lib/dpkg reads a mounted image rooted at IMG.",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="The same as --format json.")]
FormatOption = Annotated[
    str | None,
    typer.Option(
        "--format",
        metavar="FORMAT",
        help="text (default), json, github (annotations), junit, sarif or cyclonedx (an SBOM).",
    ),
]
#: ``--format`` of deps and wheels: no SBOM (they judge requirements and wheels, not verified files).
ReportFormatOption = Annotated[
    str | None,
    typer.Option("--format", metavar="FORMAT", help="text (default), json, github (annotations), junit or sarif."),
]
OutputOption = Annotated[
    str | None,
    typer.Option(
        "--output",
        "-o",
        metavar="FILE",
        help="Write the report to FILE (atomically); stdout gets the text report. - is stdout.",
    ),
]
JobsOption = Annotated[
    int | None, typer.Option("--jobs", "-j", min=1, help="Hashing threads or forked workers (default: usable CPUs).")
]
ConfigOption = Annotated[
    str | None,
    typer.Option(
        "--config",
        metavar="FILE",
        help="Accept rules and defaults (python, select, ...) from FILE, not the nearest config.",
    ),
]
BaselineOption = Annotated[str | None, typer.Option("--baseline", metavar="FILE", help="Accept what FILE pins.")]
WriteBaselineOption = Annotated[
    str | None, typer.Option("--write-baseline", metavar="FILE", help="Pin the current findings in FILE; exit 0.")
]
ShowAcceptedOption = Annotated[bool, typer.Option("--show-accepted", help="List accepted findings too.")]
StrictOption = Annotated[
    bool, typer.Option("--strict", help="Fail on overlaid distributions too, and on unverifiable ones with --all.")
]
NoCacheOption = Annotated[
    bool, typer.Option("--no-cache", help="Use no cache: hash every file, read every dist-info (nothing is written).")
]
ShowUnownedOption = Annotated[bool, typer.Option("--show-unowned", help="List every file no installer recorded.")]
SelectOption = Annotated[
    list[str] | None,
    typer.Option(
        "--select",
        metavar="CODE",
        help="Only codes with these prefixes count (repeatable, or CODE,CODE): WD0, WD07, WD071.",
    ),
]
IgnoreOption = Annotated[
    list[str] | None,
    typer.Option("--ignore", metavar="CODE", help="Codes with these prefixes do not count (repeatable, or CODE,CODE)."),
]
ExitZeroOption = Annotated[
    bool, typer.Option("--exit-zero", help="Exit 0 even when problems are found (2 still means it could not run).")
]
QuietOption = Annotated[
    bool,
    typer.Option("--quiet", "-q", help="Only what fails and the summary: no environment line, notes, tips, progress."),
]
VerboseOption = Annotated[
    bool, typer.Option("--verbose", "-v", help="Full digests in the terminal table (JSON always has them).")
]
LockOption = Annotated[
    str | None,
    typer.Option(
        "--lock", metavar="FILE", help="pylock.toml, pylock.NAME.toml, uv.lock (wheels: also pip --report JSON)."
    ),
]
PythonVersionOption = Annotated[
    str | None, typer.Option("--python-version", metavar="X.Y", help="Select the lock for this CPython version.")
]
PlatformOption = Annotated[
    list[str] | None,
    typer.Option("--platform", metavar="TAG", help="Select the lock for this platform tag (repeatable)."),
]
FindLinksOption = Annotated[
    list[str] | None,
    typer.Option(
        "--find-links", metavar="DIR", help="Read locked wheels found in DIR (hash-checked) instead of fetching."
    ),
]
VerifyWheelsOption = Annotated[
    bool,
    typer.Option("--verify-wheels", help="Download whole wheels and check each sha256 against the lock."),
]
ExtraOption = Annotated[
    list[str] | None, typer.Option("--extra", metavar="NAME", help="Select the lock with this extra (repeatable).")
]
GroupOption = Annotated[
    list[str] | None,
    typer.Option(
        "--group", metavar="NAME", help="Select these dependency groups, not the lock's default (repeatable)."
    ),
]

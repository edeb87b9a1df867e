"""``imports``: its options, and its body (typer parses its command line)."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from wheeldoctor.cli.options import EXIT_ZERO, ISOLATED, JSON, PYTHON, given, number, value, words
from wheeldoctor.cli.runner import choose_format, exit_code, fail, target_of, terminal_console

_FORBID_HELP = "Effects that fail the run: gpu-init, threads, processes, devices, slow:SECONDS."


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportsOptions:
    """``imports``'s options, as given on the command line."""

    modules: tuple[str, ...] = given(words("MODULE...", "Modules to import, a process each.", required=True))
    python: str | None = given(PYTHON)
    isolated: bool = given(ISOLATED)
    json: bool = given(JSON)
    format: str | None = given(
        value("--format", metavar="FORMAT", help="text (default), json or github (annotations).")
    )
    forbid: str = given(value("--forbid", metavar="EFFECT,...", help=_FORBID_HELP), default="gpu-init")
    timeout: float = given(number("--timeout", metavar="S", help="Kill an import that takes longer."), default=60.0)
    exit_zero: bool = given(EXIT_ZERO)


def imports(options: ImportsOptions) -> int:
    """Import modules (this RUNS their code); GPU driver initialisation, threads, processes, time; the exit code."""
    chosen = choose_format(options.format, options.json, allowed=("text", "json", "github"))
    # The environment every command finds, never wheeldoctor's own.
    target = target_of(options.python, (), isolated=options.isolated)
    from wheeldoctor.commands.imports import run_imports
    from wheeldoctor.probes.imports import ImportProbeError
    from wheeldoctor.report import imports_text
    from wheeldoctor.report import json as json_report
    from wheeldoctor.results.imports import Forbid

    try:
        forbid = Forbid.parse(options.forbid)
        result = run_imports(options.modules, target.python, forbid=forbid, timeout=options.timeout)
    except (ImportProbeError, ValueError) as e:
        fail(str(e))
    if chosen == "json":
        sys.stdout.write(json_report.render(json_report.imports_document(result)))
    elif chosen == "github":
        from wheeldoctor.report import imports_github

        sys.stdout.writelines(line + "\n" for line in imports_github.render(result))
    elif (console := terminal_console()) is not None:
        imports_text.render_rich(result, console)
    else:
        sys.stdout.writelines(line + "\n" for line in imports_text.render_plain(result))
    return exit_code(result.healthy, options.exit_zero)

"""One result -> the text of a chosen format (``--format``): the single place a format is picked."""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import Enum
from typing import TYPE_CHECKING, Any

# deps's result is asked for first: check's classes are then made only for the commands that return them.
from wheeldoctor.results.deps import DepsResult

if TYPE_CHECKING:
    from wheeldoctor.report.cases import Cases, Result


class Format(str, Enum):
    """The ``--format`` choices."""

    TEXT = "text"
    JSON = "json"
    GITHUB = "github"
    JUNIT = "junit"
    SARIF = "sarif"


def plain_lines(
    result: Result, show_accepted: bool = False, header: bool = True, verbose: bool = False
) -> Iterable[str]:
    """The plain text report of any command's result (what a pipe gets); accepted findings listed on request.

    ``header=False`` leaves out the ``environment:`` line (discovery's own line on stderr named it);
    ``verbose`` lists every finding a clash block (or a wheel clash) counts.
    """
    from wheeldoctor.report import inert

    # Untrusted text is made inert here, on its way out: a name or path cannot add a line.
    if isinstance(result, DepsResult):  # the deps report alone needs no file verifier's text
        from wheeldoctor.report import deps_text

        return inert.lines(deps_text.render_plain(result, header=header))
    from wheeldoctor.results.check import CheckResult, DoctorResult

    if isinstance(result, DoctorResult):
        from wheeldoctor.report import deps_text

        return inert.lines(
            deps_text.render_doctor_plain(result, show_accepted=show_accepted, header=header, verbose=verbose)
        )
    if isinstance(result, CheckResult):
        from wheeldoctor.report import text

        return inert.lines(text.render_plain(result, show_accepted=show_accepted, header=header, verbose=verbose))
    from wheeldoctor.report.preflight_text import render_preflight

    return inert.lines(render_preflight(result, header=header, verbose=verbose))


#: Lines ``-q`` leaves out of the plain report: context and advice, not what fails.
_CHATTER = ("environment:", "managed by ", "note:", "Note:", "Tip:", "  ", "startup hooks:", "unowned: ")
#: A finding's line (``SUBJECT: WDnnn: ...``): always kept, whatever its subject's name begins with.
_FINDING = re.compile(r": WD\d{3}: ")


def quiet_lines(result: Result) -> Iterable[str]:
    """``-q``: the plain report's failing lines and summary only; nothing at all when healthy."""
    if result.healthy:
        return ()
    return (line for line in plain_lines(result) if _FINDING.search(line) or not line.startswith(_CHATTER))


def json_document(result: Result) -> dict[str, Any]:
    """The versioned JSON document of any command's result."""
    from wheeldoctor.report import json as json_report

    if isinstance(result, DepsResult):
        return json_report.deps_document(result)
    from wheeldoctor.results.check import CheckResult, DoctorResult

    if isinstance(result, DoctorResult):
        return json_report.doctor_document(result)
    if isinstance(result, CheckResult):
        return json_report.check_document(result)
    return json_report.wheels_document(result)


def render(
    result: Result, chosen: Format, show_accepted: bool = False, header: bool = True, verbose: bool = False
) -> str:
    """The whole report of ``result`` in format ``chosen`` (``show_accepted``: text lists accepted findings;
    ``header``: text has its ``environment:`` line; ``verbose``: text lists every grouped finding)."""
    if chosen is Format.TEXT:
        return "".join(line + "\n" for line in plain_lines(result, show_accepted, header, verbose))
    if chosen is Format.JSON:
        from wheeldoctor.report import json as json_report

        return json_report.render(json_document(result))
    from wheeldoctor.report.cases import cases_of

    cases = cases_of(result)
    if chosen is Format.GITHUB:
        from wheeldoctor.report import github

        return "".join(line + "\n" for line in github.render(cases))
    if chosen is Format.JUNIT:
        from wheeldoctor.report import junit

        return junit.render(cases)
    from wheeldoctor.report import sarif

    return sarif.render(cases)


def step_summary(result: Result) -> str:
    """The Markdown job summary GitHub shows for the step (``--format github``)."""
    from wheeldoctor.report import github
    from wheeldoctor.report.cases import cases_of

    summary_cases: Cases = cases_of(result)
    return github.summary([summary_cases])

"""``fix`` -> text for people: the numbered plan, each step as it runs, then before and after.

Plain lines, on a terminal too: installer output streams between them, and a table
would not survive that.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

from wheeldoctor.repair.outcome import Outcome, Problem
from wheeldoctor.repair.plan import FixStep
from wheeldoctor.repair.steps import StepKind
from wheeldoctor.report import inert
from wheeldoctor.results.fix import FixPlan, FixResult, StepResult, StepStatus


def render_plan(planned: FixPlan) -> Iterable[str]:
    """The environment, the numbered steps with what each fixes, and what is left alone.

    The environment is left out when discovery chose it: its own ``environment:`` line, with why,
    is on stderr already.
    """
    plan = planned.plan
    if planned.target.reason is None:
        yield f"environment: {planned.environment.label}"
    if not plan.needed:
        yield from (f"note: {n}" for n in plan.notes)
        yield "plan: nothing to repair" if not planned.before else "plan: nothing that fix can repair"
        yield from (f"left alone: {p.subject}: {p.text}" for p in planned.before)
        return
    yield f"plan: {len(plan.steps)} step(s)"
    for number, step in enumerate(plan.steps, 1):
        yield f"  {number}. {step.command}"
        # A clean-up's uninstalls take whichever dist-info pip finds first: no version is theirs to name.
        unsure = step.kind is StepKind.UNINSTALL and step.group.startswith("stale:")
        yield f"     {step.kind.value} {step.name}{'' if unsure else ' ' + step.version}: {step.fixes}"
    for left in plan.left_alone:
        yield f"left alone: {left.subject}: {left.reason}"
        yield from (f"  for you to run: {c}" for c in left.commands)
    yield from (f"note: {n}" for n in plan.notes)


class StreamSink:
    """Writes the plan, then each step's header, the installer's output as it comes, and its exit code."""

    def __init__(self, stream: TextIO) -> None:
        """Write to ``stream``."""
        self._stream = stream
        self._total = 0

    def plan(self, planned: FixPlan) -> None:
        """The numbered plan (:func:`render_plan`)."""
        self._total = len(planned.plan.steps)
        write(self._stream, render_plan(planned))

    def start(self, number: int, step: FixStep) -> None:
        """``step N/M: command``."""
        self._write(f"step {number}/{self._total}: {step.command}")

    def line(self, text: str) -> None:
        """One line of installer output, indented."""
        self._write(f"  | {text}")

    def end(self, number: int, result: StepResult) -> None:
        """``step N/M: exit C``, and the reason when it failed."""
        code = "not started" if result.returncode is None else f"exit {result.returncode}"
        if result.status is StepStatus.FAILED and result.returncode == 0:
            code += ", but it did not do its job"
        note = f" ({result.note})" if result.note else ""
        self._write(f"step {number}/{self._total}: {code}{note}")

    def _write(self, text: str) -> None:
        self._stream.write(inert.text(text) + "\n")
        self._stream.flush()


def render_outcome(result: FixResult) -> Iterable[str]:
    """What ran and what did not, then fixed / still broken / new, and one verdict line."""
    failed = result.failed
    if failed is not None:
        done = [n for n, r in enumerate(result.results, 1) if r.status is StepStatus.OK]
        skipped = [n for n, r in enumerate(result.results, 1) if r.status is StepStatus.NOT_RUN]
        number = result.results.index(failed) + 1
        yield f"error: step {number} failed: {failed.error}"
        forward = [(n, r) for n, r in enumerate(result.results, 1) if r.note]
        yield f"ran: {_numbers(done)}; failed: step {number}; not run: {_numbers(skipped)}"
        for n, again in forward:
            verdict = "ok" if again.status is StepStatus.OK else f"failed: {again.error}"
            yield f"rolled forward: step {n} ran to put the files back ({verdict})"
    outcome = result.outcome
    if outcome is not None:
        yield from _outcome_lines(outcome)
    elif result.planned.plan.steps:
        yield f"fix: {len(result.planned.plan.steps)} step(s) planned; nothing was run"
        return
    yield "fix: healthy" if result.healthy else "fix: problems remain"


def _outcome_lines(outcome: Outcome) -> Iterable[str]:
    yield (
        f"after: {len(outcome.fixed)} fixed, {len(outcome.still_broken)} still broken, "
        f"{len(outcome.new)} new problem(s)"
    )
    for label, problems in (("fixed", outcome.fixed), ("still broken", outcome.still_broken), ("new", outcome.new)):
        yield from _problem_lines(label, problems)


#: Problems listed per distribution and verdict before the rest are counted (an overlay's base: ~100 paths).
_SHOWN = 5


def _problem_lines(label: str, problems: tuple[Problem, ...]) -> Iterable[str]:
    by_subject: dict[str, list[Problem]] = {}
    for problem in problems:
        by_subject.setdefault(problem.subject, []).append(problem)
    for subject, some in by_subject.items():
        for problem in some[:_SHOWN]:
            yield f"{label}: {problem.text}"
        if len(some) > _SHOWN:
            yield f"{label}: {subject}: and {len(some) - _SHOWN} more (--json lists every one)"


def _numbers(numbers: list[int]) -> str:
    if not numbers:
        return "none"
    return ", ".join(str(n) for n in numbers)


def write(stream: TextIO, lines: Iterable[str]) -> None:
    """Write ``lines`` to ``stream`` now (installer output follows them on the same stream)."""
    for line in lines:
        stream.write(inert.text(line) + "\n")  # the plan can never be hidden
    stream.flush()


def finish(result: FixResult, out: TextIO, document: TextIO | None, *, dry_run: bool) -> None:
    """How the run ended on ``out``; with ``document`` (``--json``), the JSON document there."""
    write(out, render_outcome(result))
    if document is not None:
        from wheeldoctor.report import json as json_report
        from wheeldoctor.report.fix_json import fix_document

        text = json_report.render(fix_document(result, dry_run=dry_run))
        buffer = getattr(document, "buffer", None)
        if buffer is None:
            document.write(text)
        else:  # UTF-8 whatever the locale: stdout's encoding (ASCII under LANG=C) would mangle it
            document.flush()
            buffer.write(text.encode("utf-8", "backslashreplace"))
            buffer.flush()

"""Clash pairs as text: the pair's line, its tips, and its findings grouped as one block.

Two distributions that write the same paths can leave a hundred files each holding the
other's bytes. Those findings are one block per pair: the pair's line, the tip, then per
side a count and a few example paths (``verbose``: every finding, whole). The machine
formats list every finding as it is.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from wheeldoctor.judge.clash import ClashPair, Relation
from wheeldoctor.judge.files import DistributionReport
from wheeldoctor.model.findings import Code, Finding
from wheeldoctor.repair.steps import Choice
from wheeldoctor.report.finding_text import evidence, shown, step_text, subject, subject_of
from wheeldoctor.results.check import CheckResult

#: Example paths a block shows per side; ``--verbose`` lists every finding.
EXAMPLES = 3


@dataclass(frozen=True, slots=True)
class PairSide:
    """One side of a clash pair: its files that hold the other side's bytes."""

    report: DistributionReport
    other: str
    findings: tuple[Finding, ...]


@dataclass(frozen=True, slots=True)
class PairBlock:
    """A clash pair that is not settled, with the findings it explains on each side."""

    pair: ClashPair
    sides: tuple[PairSide, ...]


def pair_blocks(result: CheckResult) -> list[PairBlock]:
    """A block for every pair that is not a settled overlay (that one is a line of its own)."""
    by_name = {r.name: r for r in result.distributions}
    blocks = []
    for pair in result.pairs:
        if pair.relation is Relation.OVERLAY and pair.settled:
            continue
        sides = []
        for me, other in ((pair.first, pair.second), (pair.second, pair.first)):
            report = by_name.get(me.name)
            if report is None:
                continue
            # Accepted findings keep their own lines (with --show-accepted), notes and all.
            held = tuple(
                f
                for f in report.findings
                if f.content_from == other.name and f.accepted is None and shown(f, show_accepted=False)
            )
            if held:
                sides.append(PairSide(report, other.name, held))
        blocks.append(PairBlock(pair, tuple(sides)))
    return blocks


def grouped(blocks: Iterable[PairBlock]) -> frozenset[tuple[str, Finding]]:
    """The findings the blocks show, by distribution name: left out of the one-line-per-finding list."""
    return frozenset((side.report.name, f) for block in blocks for side in block.sides for f in side.findings)


def block_lines(block: PairBlock, result: CheckResult, verbose: bool = False) -> Iterable[str]:
    """The pair's line, its tips, then each side: a count and a few example paths (``verbose``: all)."""
    yield pair_line(block.pair)
    yield from pair_tips(block.pair, result)
    for side in block.sides:
        yield from side_lines(side, verbose)


def side_lines(side: PairSide, verbose: bool = False) -> Iterable[str]:
    """``subject: codes: N file(s) hold OTHER's bytes``, then example paths indented."""
    codes = ", ".join(sorted(Counter(f.code.value for f in side.findings)))
    head = f"{subject(side.report)}: {codes}: {len(side.findings)} file(s) hold {side.other}'s bytes"
    if verbose:
        yield f"{head}:"
        for f in side.findings:
            yield f"  {f.code.value}: {f.path} {f.message}{evidence(f)}"
        return
    yield from example_lines(head, [f.path or "" for f in side.findings])


def example_lines(head: str, paths: Iterable[str]) -> Iterable[str]:
    """``head``, then the first few of ``paths`` (sorted) under their common directory, named once, and
    how many more there are: ``head, e.g. in DIR/:``, ``  a.so``, ``  and 97 more (...)``."""
    every = sorted(paths)
    examples = every[:EXAMPLES]
    try:
        base = posixpath.commonpath(examples) if len(examples) > 1 else posixpath.dirname(examples[0])
    except ValueError:  # absolute and relative paths (a hostile RECORD's): no common directory
        base = ""
    if base in examples:  # one path is the other's directory: no common directory to name
        base = posixpath.dirname(base)
    where = f" in {base.rstrip('/')}/" if base else ""
    more = len(every) - len(examples)
    yield f"{head}, e.g.{where}:" if more else f"{head}{where}:"
    yield from (f"  {posixpath.relpath(p, base) if base else p}" for p in examples)
    if more:
        yield f"  and {more} more (--verbose lists every one)"


def pair_tips(pair: ClashPair, result: CheckResult) -> list[str]:
    """What to do about one clashing pair, and what an uninstall of either side would delete."""
    repair = result.repairs.pair(pair)
    first, second = pair.first.name, pair.second.name
    deletes = (
        f"uninstalling either deletes all {pair.shared} shared path(s), the other's files among them"
        if pair.relation is Relation.UNRELATED
        else f"uninstalling {pair.winner.name} deletes all {pair.shared} shared path(s), "
        f"{pair.loser.name}'s among them: reinstall {pair.loser.name} after"
    )
    if pair.relation is Relation.OVERLAY:
        if pair.settled:
            return [f"Note: {pair.winner.name} lies on top of {pair.loser.name} ({pair.reason}); {deletes}"]
        # No "let the base win instead": that would overwrite the package that requires it.
        return [
            f"Tip: only one of {first} and {second} can own the {pair.differing} differing path(s); "
            f"reinstall {pair.winner.name} last ({pair.reason}): {step_text(repair.winner)}",
            f"Note: {deletes}",
        ]
    keep_winner, keep_loser = repair.choices
    return [
        f"Tip: {first} and {second} are unrelated (neither requires the other) yet write {pair.shared} of the "
        f"same path(s); they are alternatives: keep one.",
        f"Tip: keep {keep_winner.keep}: {_choice_text(keep_winner)}",
        f"Tip: or keep {keep_loser.keep}: {_choice_text(keep_loser)}",
        f"Note: {deletes}",
    ]


def _choice_text(choice: Choice) -> str:
    return f"no command: {choice.refused}" if choice.refused else " && ".join(choice.commands)


def pair_line(pair: ClashPair) -> str:
    """One line that says what two clashing distributions did to each other.

    A settled overlay (every difference holds the overlay's bytes) is one line for all its
    paths: ``overlay: W lies on top of L ...``; it never calls the base broken.
    """
    if pair.relation is Relation.OVERLAY and pair.settled:
        return (
            f"overlay: {subject_of(pair.winner)} lies on top of {subject_of(pair.loser)}: "
            f"{pair.differing} of {pair.shared} shared path(s) hold {pair.winner.name}'s bytes "
            f"({Code.REPLACED.value} replaced; {pair.loser.name} is overlaid)"
        )
    broken = ", ".join(pair.broken) or "neither"
    return (
        f"clash: {subject_of(pair.first)} and {subject_of(pair.second)} share {pair.shared} path(s), "
        f"{pair.differing} with different bytes; on disk: {pair.from_first} from {pair.first.name}, "
        f"{pair.from_second} from {pair.second.name}, {pair.from_neither} from neither; broken: {broken}; "
        f"relation: {pair.relation.value}"
    )

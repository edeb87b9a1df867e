"""``wheels`` results -> plain lines: broken wheels, paths they clash on, installed files they would replace.

Paths shared by the same wheels are one block: a count and a few examples (``verbose``: one
line per path), then the pair's tip; so are the installed files one wheel would replace of
the same owners.
"""

from __future__ import annotations

from collections.abc import Iterable

from wheeldoctor.judge.preflight import Overwrite, PreflightResult, WheelPair
from wheeldoctor.report.clash_text import example_lines
from wheeldoctor.report.finding_text import finding_line
from wheeldoctor.report.hooks_text import accept_block, hook_lines
from wheeldoctor.report.policy_text import said


def render_preflight(result: PreflightResult, header: bool = True, verbose: bool = False) -> Iterable[str]:
    """Plain lines for ``wheels`` (``header``: the environment first; ``verbose``: every path of a block)."""
    if header and result.environment is not None:
        yield f"environment: {result.environment.label}"
    for wheel in result.wheels:
        for finding in wheel.findings:
            yield finding_line(f"{wheel.name} {wheel.version} (wheel)", finding)
    yield from hook_lines(result.hooks)
    differing = [c for c in result.clashes if not c.identical]
    by_claimants: dict[tuple[str, ...], list[str]] = {}
    for clash in differing:
        by_claimants.setdefault(clash.claimants, []).append(clash.path)
    told: set[WheelPair] = set()
    for claimants, paths in by_claimants.items():
        pair = next((p for p in result.pairs if {p.first, p.second} == set(claimants)), None)
        if verbose or len(paths) == 1:
            yield from (f"clash: {path} is shipped by {', '.join(claimants)} with different bytes" for path in paths)
        else:
            yield from example_lines(
                f"clash: {', '.join(claimants)} ship {len(paths)} path(s) with different bytes", paths
            )
        if pair is not None:
            yield pair_tip(pair)  # with its paths: the one thing to do about all of them
            told.add(pair)
    yield from _overwrite_lines([o for o in result.overwrites if not o.identical], verbose)
    yield (
        f"{len(result.wheels)} wheel(s): {len(result.clashes)} shared path(s), {len(differing)} with different bytes; "
        f"{sum(not o.identical for o in result.overwrites)} installed file(s) of others would be replaced"
    )
    yield from (pair_tip(pair) for pair in result.pairs if pair not in told)
    yield from _hook_tips(result)
    if result.config is not None:
        yield f"config: {said(result.config, result.narrowed)}"


def _hook_tips(result: PreflightResult) -> Iterable[str]:
    """Before install: read the hook; the accept rule that trusts exactly its bytes."""
    if not result.hooks.failing:
        return
    yield (
        "Tip: a start-up hook runs in every Python process of the environment it is installed into; read it "
        "before installing. If you trust it, accept exactly these bytes in pyproject.toml "
        "(a changed file fails again; wheeldoctor's docs/startup-hooks.md):"
    )
    for hook in result.hooks.failing:
        yield from (f"  {line}" for line in accept_block(hook))


def _overwrite_lines(overwrites: list[Overwrite], verbose: bool) -> Iterable[str]:
    """One line per installed file a wheel would replace; a block per wheel and owners where there are several."""
    by_wheel: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for write in overwrites:
        by_wheel.setdefault((write.wheel, write.owners), []).append(write.location)
    for (wheel, owners), locations in by_wheel.items():
        whose = ", ".join(owners) if owners else "no installed distribution"
        if verbose or len(locations) == 1:
            yield from (f"overwrite: installing {wheel} would replace {at} (recorded by {whose})" for at in locations)
        else:
            yield from example_lines(
                f"overwrite: installing {wheel} would replace {len(locations)} file(s) recorded by {whose}", locations
            )


def pair_tip(pair: WheelPair) -> str:
    """What to do about two wheels that ship different bytes for the same paths."""
    if pair.overlay is not None:
        base = pair.second if pair.overlay == pair.first else pair.first
        return (
            f"Tip: {pair.overlay} requires {base} and lies on top of it ({pair.differing} differing path(s)): "
            f"install {pair.overlay} last"
        )
    return (
        f"Tip: {pair.first} and {pair.second} are alternatives (neither requires the other) yet ship "
        f"{pair.differing} of the same path(s) with different bytes: install one, not both; "
        f"uninstalling either later would delete the other's files"
    )

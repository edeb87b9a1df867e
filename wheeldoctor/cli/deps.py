"""``deps``: its options, and its body, which both parsers run (typer's and the fast one)."""

from __future__ import annotations

from dataclasses import dataclass

from wheeldoctor.cli.options import (
    DPKG_ADMINDIR,
    ISOLATED,
    JSON,
    NO_CACHE,
    OUTPUT,
    PATH,
    PYTHON,
    REPORT_FORMAT,
    given,
)
from wheeldoctor.cli.runner import (
    EXIT_HEALTHY,
    EXIT_PROBLEMS,
    REPORT_FORMATS,
    cache_dir,
    choose_format,
    deliver,
    metadata_memos,
    no_cyclic_gc,
    scan_keeper,
    target_of,
)

TYPE_CHECKING = False  # typing stays off the command's start-up path
if TYPE_CHECKING:
    from rich.console import Console


@dataclass(frozen=True, slots=True, kw_only=True)
class DepsOptions:
    """``deps``'s options, as given on the command line."""

    python: str | None = given(PYTHON)
    isolated: bool = given(ISOLATED)
    path: tuple[str, ...] = given(PATH)
    json: bool = given(JSON)
    format: str | None = given(REPORT_FORMAT)
    output: str | None = given(OUTPUT)
    no_cache: bool = given(NO_CACHE)
    dpkg_admindir: str | None = given(DPKG_ADMINDIR)


def deps(options: DepsOptions) -> int:
    """Requirements (as pip check judges them, and further), duplicates, compatibility; the exit code."""
    chosen = choose_format(options.format, options.json, allowed=REPORT_FORMATS)
    target = target_of(options.python, options.path, options.dpkg_admindir, isolated=options.isolated)
    from wheeldoctor.where.target import load_target, start_probe

    start_probe(target, with_tags=True)
    with no_cyclic_gc():  # as for check: reading and judging make many objects, none in a cycle
        cached = cache_dir(options.no_cache)
        memo = None
        if cached is not None:
            from wheeldoctor.engine.deps_memo import memo_for

            memo = memo_for(cached, target.python, target.paths)
        from wheeldoctor.commands.deps import run_deps

        env = load_target(
            target, with_tags=True, with_records=False, memos=metadata_memos(cached), keeper=scan_keeper(cached)
        )
        result = run_deps(env, memo=memo, cache_dir=cached)

    header = target.reason is None  # discovery has said on stderr which environment, and why

    def rich(console: Console) -> None:
        from wheeldoctor.report import deps_text

        deps_text.render_rich(result, console, header=header)

    deliver(result, chosen, options.output, rich, header=header)
    return EXIT_HEALTHY if result.healthy else EXIT_PROBLEMS

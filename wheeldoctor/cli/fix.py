"""``fix``: its options, and its body (typer parses its command line)."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from wheeldoctor.cli.lock import lock_judge, lock_options
from wheeldoctor.cli.options import (
    BASELINE,
    CONFIG,
    DPKG_ADMINDIR,
    EXTRA,
    FIND_LINKS,
    GROUP,
    ISOLATED,
    JSON,
    LOCK,
    NO_CACHE,
    PATH,
    PYTHON,
    VERIFY_WHEELS,
    flag,
    given,
    many,
    value,
    words,
)
from wheeldoctor.cli.runner import EXIT_ERROR, EXIT_HEALTHY, EXIT_PROBLEMS, cache_dir, choose_format, fail, target_of


@dataclass(frozen=True, slots=True, kw_only=True)
class FixOptions:
    """``fix``'s options, as given on the command line."""

    names: tuple[str, ...] = given(words("NAME...", "Distributions to repair."))
    all: bool = given(flag("--all", help="Repair every installed distribution."))
    python: str | None = given(PYTHON)
    path: tuple[str, ...] = given(PATH)
    dry_run: bool = given(flag("--dry-run", help="Print the plan; run nothing."))
    yes: bool = given(flag("--yes", "-y", help="Run the plan without asking."))
    keep: tuple[str, ...] = given(many("--keep", metavar="NAME", help="Of an unrelated pair, keep NAME."))
    json: bool = given(JSON)
    format: str | None = given(
        value("--format", metavar="FORMAT", help="text (default) or json: the document on stdout, the rest on stderr.")
    )
    no_cache: bool = given(NO_CACHE)
    dpkg_admindir: str | None = given(DPKG_ADMINDIR)
    config: str | None = given(CONFIG)
    isolated: bool = given(ISOLATED)
    baseline: str | None = given(BASELINE)
    lock: str | None = given(LOCK)
    find_links: tuple[str, ...] = given(FIND_LINKS)
    verify_wheels: bool = given(VERIFY_WHEELS)
    extra: tuple[str, ...] = given(EXTRA)
    group: tuple[str, ...] = given(GROUP)


def fix(options: FixOptions) -> int:
    """Repair what check and doctor report, with the recorded installer; then verify again."""
    if bool(options.names) == options.all:
        fail("name the distributions to repair, or pass --all (not both)")
    as_json = choose_format(options.format, options.json, allowed=("text", "json")) == "json"
    from wheeldoctor.commands.fix import plan_fix, run_fix
    from wheeldoctor.report import fix_text

    given = lock_options(
        options.lock, options.find_links, options.verify_wheels, options.extra, options.group, options.no_cache
    )
    judge = lock_judge(given, "json" if as_json else "text")
    if judge is not None and not options.all:
        fail("--lock judges the whole environment: give --all")
    planned = plan_fix(
        target_of(
            options.python, options.path, options.dpkg_admindir, config=options.config, isolated=options.isolated
        ),
        options.names or None,
        keep=options.keep,
        cache_dir=cache_dir(options.no_cache),
        config=options.config,
        baseline=options.baseline,
        against=judge,
        isolated=options.isolated,
    )
    out = sys.stderr if as_json else sys.stdout  # with --json, stdout holds the document alone
    ask = _confirm if sys.stdin.isatty() else None
    sink = fix_text.StreamSink(out)  # a refusal (FixRefused) exits 2 through the guard
    result = run_fix(
        planned, sink, dry_run=options.dry_run, yes=options.yes, ask=ask, explicit_python=bool(options.python)
    )
    fix_text.finish(result, out, sys.stdout if as_json else None, dry_run=options.dry_run)
    return EXIT_HEALTHY if result.healthy else EXIT_PROBLEMS


def _confirm(steps: int) -> bool:
    """Ask on the terminal whether to run ``steps`` steps; cut short (EOF, Ctrl-C), nothing runs: exit 2."""
    import typer  # fix's command line is typer's: it is imported already

    try:
        return typer.confirm(f"Run these {steps} step(s)?", err=True)
    except typer.Abort:
        raise SystemExit(EXIT_ERROR) from None

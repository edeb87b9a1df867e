"""The fleet commands, their options and bodies: ``snapshot`` (one node) and ``diff`` (several nodes)."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

from wheeldoctor.cli.options import EXIT_ZERO, ISOLATED, JOBS, NO_CACHE, PATH, PYTHON, flag, given, many, value, words
from wheeldoctor.cli.runner import (
    EXIT_ERROR,
    EXIT_HEALTHY,
    cache_dir,
    exit_code,
    fail,
    metadata_memos,
    no_cyclic_gc,
    note,
    silence_notes,
    target_of,
)
from wheeldoctor.where.target import load_target, start_probe

_SNAPSHOT_FORMATS = ("json", "cyclonedx")
_DIFF_FORMATS = ("text", "json", "github")


@dataclass(frozen=True, slots=True, kw_only=True)
class SnapshotOptions:
    """``snapshot``'s options, as given on the command line."""

    python: str | None = given(PYTHON)
    isolated: bool = given(ISOLATED)
    path: tuple[str, ...] = given(PATH)
    output: str | None = given(
        value(
            "--output", "-o", metavar="FILE", help="Write to FILE atomically (default stdout); %N in FILE is the host."
        )
    )
    format: str = given(
        value("--format", metavar="FORMAT", help="json (the snapshot, default) or cyclonedx (an SBOM)."), default="json"
    )
    host: str | None = given(
        value("--host", metavar="NAME", help="The node's name in the snapshot (default: hostname).")
    )
    jobs: int | None = given(JOBS)
    no_cache: bool = given(NO_CACHE)
    quiet: bool = given(flag("--quiet", "-q", help="Nothing on stderr unless it fails: no environment line, no notes."))


def snapshot(options: SnapshotOptions) -> int:
    """Verify every distribution (as check --all) and write a compact, canonical snapshot; the exit code."""
    if options.format not in _SNAPSHOT_FORMATS:
        fail(f"unknown format {options.format!r}: choose one of {', '.join(_SNAPSHOT_FORMATS)}")
    if options.format == "cyclonedx":
        from wheeldoctor.cli.sbom import require_sbom

        require_sbom()
    if options.quiet:
        silence_notes()
    target = target_of(options.python, options.path, quiet=options.quiet, isolated=options.isolated)
    start_probe(target, with_tags=True)
    from wheeldoctor.commands.snapshot import run_snapshot
    from wheeldoctor.formats.snapshot import encode

    with no_cyclic_gc():
        cached = cache_dir(options.no_cache)
        env = load_target(target, with_tags=True, defer_records=True, memos=metadata_memos(cached))
        result, taken = run_snapshot(env, host=options.host, cache_dir=cached)
    if options.format == "cyclonedx":
        from wheeldoctor.cli.sbom import sbom_text

        text = sbom_text(result, taken)
    else:
        text = encode(taken)
    _write(None if options.output is None else node_path(options.output, taken.host), text)
    return EXIT_HEALTHY


def node_path(output: str, host: str) -> str:
    """``output`` with ``%N`` as the host's name (as srun spells a node's) and ``%%`` as ``%``.

    The name comes from the machine: only letters, digits, ``.``, ``_`` and ``-`` of it are
    kept (others become ``_``), so it cannot leave the directory or hide a file.
    """
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", host).lstrip(".") or "node"
    return re.sub(r"%[N%]", lambda m: safe if m.group() == "%N" else "%", output)


@dataclass(frozen=True, slots=True, kw_only=True)
class DiffOptions:
    """``diff``'s options, as given on the command line."""

    files: tuple[str, ...] = given(
        words("SNAPSHOT...", "Snapshots to compare (one alone has nothing to differ from).", required=True)
    )
    reference: str | None = given(
        value(
            "--reference",
            metavar="SNAPSHOT",
            help="Compare every snapshot with this one (a golden node), not by majority.",
        )
    )
    ignore: tuple[str, ...] = given(
        many(
            "--ignore",
            metavar="KIND[:GLOB]",
            help="Leave out differences of KIND (file, distribution, hook, ...) whose name or path matches GLOB.",
        )
    )
    exit_zero: bool = given(EXIT_ZERO)
    format: str = given(
        value("--format", metavar="FORMAT", help="text (default), json or github (annotations)."), default="text"
    )
    output: str | None = given(value("--output", "-o", metavar="FILE", help="Write the report to FILE atomically."))


def diff(options: DiffOptions) -> int:
    """Compare snapshots of several nodes: what differs, and the odd ones out by majority; the exit code."""
    if options.format not in _DIFF_FORMATS:
        fail(f"unknown format {options.format!r}: choose one of {', '.join(_DIFF_FORMATS)}")
    from wheeldoctor.judge.drift import ignore_rule

    try:
        rules = [ignore_rule(rule) for given in options.ignore for rule in given.split(",") if rule.strip()]
    except ValueError as e:
        fail(str(e))
    from wheeldoctor.commands.diff import run_diff

    compared = run_diff(options.files, reference=options.reference, ignore=rules)
    from wheeldoctor.report import inert

    for path in compared.repeated:
        note(f"{path} is a file given before: counted once")
    if compared.errors:
        sys.stderr.writelines(f"error: {inert.text(line)}\n" for line in compared.errors)
        return EXIT_ERROR
    drift = compared.drift
    if drift is None:
        fail("give a snapshot to compare")
    if options.format == "json":
        from wheeldoctor.report import drift_json as chosen
    elif options.format == "github":
        from wheeldoctor.report import drift_github as chosen  # type: ignore[no-redef]
    else:
        from wheeldoctor.report import drift_text as chosen  # type: ignore[no-redef]
    _write(options.output, chosen.render(drift))
    return exit_code(drift.agree, options.exit_zero)


def _write(output: str | None, text: str) -> None:
    if output is None or output == "-":
        sys.stdout.write(text)
        return
    from wheeldoctor.report.output import OutputError, write_atomic

    try:
        write_atomic(output, text)
    except OutputError as e:
        fail(str(e))

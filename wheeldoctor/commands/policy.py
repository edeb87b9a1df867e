"""The policy a command runs under: accept rules from the nearest config, and a baseline."""

from __future__ import annotations

import datetime
import os

from wheeldoctor.checks.policy import Policy
from wheeldoctor.formats import baseline
from wheeldoctor.formats.config import Config, find_config, load_config
from wheeldoctor.where.environment import Environment


def load_policy(
    env: Environment,
    *,
    config: str | None = None,
    baseline_file: str | None = None,
    start: str | None = None,
    today: datetime.date | None = None,
) -> Policy:
    """Read the config (``config``, else the nearest one above ``start``) and ``baseline_file``.

    Raises :class:`~wheeldoctor.formats.config.ConfigError` or
    :class:`~wheeldoctor.formats.baseline.BaselineError` (both ValueError) with one line
    naming the file. Nothing inside ``env`` is ever read as a config.
    """
    fence = [*env.prefixes[:1], *env.paths]  # its own prefix, not a base interpreter's (/usr)
    path = config if config is not None else find_config(start or os.getcwd(), outside=fence)
    rules = load_config(path, outside=fence) if path is not None else Config()
    entries = baseline.load(baseline_file) if baseline_file is not None else ()
    return Policy(today or datetime.date.today(), rules, entries, baseline_file)

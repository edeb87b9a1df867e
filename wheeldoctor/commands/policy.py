"""The policy a command runs under: accept rules from the nearest config, and a baseline."""

from __future__ import annotations

import os

from wheeldoctor.formats.config_search import config_file
from wheeldoctor.model.errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime
    from collections.abc import Sequence

    from wheeldoctor.judge.files import DistributionReport
    from wheeldoctor.judge.policy import Policy
    from wheeldoctor.judge.selection import CodeSelection
    from wheeldoctor.model.environment import Environment


def load_policy(
    env: Environment,
    *,
    config: str | None = None,
    baseline_file: str | None = None,
    writing: str | None = None,
    start: str | None = None,
    today: datetime.date | None = None,
    selection: CodeSelection | None = None,
    isolated: bool = False,
) -> Policy:
    """Read the config (``config``, else the nearest one above ``start``) and ``baseline_file``.

    Raises :class:`~wheeldoctor.formats.config.ConfigError` or
    :class:`~wheeldoctor.formats.baseline.BaselineError` (both ValueError) with one line
    naming the file. Nothing inside ``env`` is ever read as a config. ``writing`` is the
    baseline about to be written, which cannot also be read. ``isolated``: no config is read.
    """
    found = find_policy(
        env,
        config=config,
        baseline_file=baseline_file,
        writing=writing,
        start=start,
        today=today,
        selection=selection,
        isolated=isolated,
    )
    if found is not None:
        return found
    import datetime

    from wheeldoctor.judge.policy import Policy

    return Policy(today=today or datetime.date.today())


def find_policy(
    env: Environment | None,
    *,
    config: str | None = None,
    baseline_file: str | None = None,
    writing: str | None = None,
    start: str | None = None,
    today: datetime.date | None = None,
    selection: CodeSelection | None = None,
    isolated: bool = False,
) -> Policy | None:
    """:func:`load_policy`, but None where there is nothing to read or select.

    That is no config file found, no baseline and every code selected: a ``Policy`` of
    today alone judges the same, and neither the config's validator nor the policy's
    judge is imported for it.
    """
    if baseline_file is not None and writing is not None:
        raise InputError("give --baseline or --write-baseline, not both")
    # Its own prefix (not a base interpreter's: /usr) and the directories its distributions
    # lie in; not every sys.path entry: an editable install's .pth puts the project's own
    # root there, and the project's config is the one to read.
    fence = [*env.prefixes[:1], *sorted({d.location for d in env.distributions})] if env is not None else []
    path = config_file(config, start or os.getcwd(), isolated=isolated, outside=fence)
    if path is None and baseline_file is None and (selection is None or selection.everything):
        return None
    import datetime

    from wheeldoctor.formats import baseline
    from wheeldoctor.formats.config import Config, load_config
    from wheeldoctor.judge.policy import Policy
    from wheeldoctor.judge.selection import CodeSelection

    rules = load_config(path, outside=fence) if path is not None else Config()
    entries = baseline.load(baseline_file) if baseline_file is not None else ()
    return Policy(
        today=today or datetime.date.today(),
        config=rules,
        baseline=entries,
        baseline_source=baseline_file,
        selection=selection or CodeSelection(),
    )


def baseline_text(reports: Sequence[DistributionReport]) -> tuple[str, int]:
    """The baseline file pinning the findings of ``reports``, and how many findings it pins."""
    from wheeldoctor.formats import baseline
    from wheeldoctor.judge.policy import baseline_entries

    entries = baseline_entries(reports)
    return baseline.dumps(entries), len(entries)

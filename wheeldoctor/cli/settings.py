"""What the command line, else the config's ``[tool.wheeldoctor]`` defaults, set for one run."""

from __future__ import annotations

import os
from dataclasses import dataclass

from wheeldoctor.formats.config_search import ConfigError, config_file
from wheeldoctor.judge.selection import CodeSelection, parse_prefixes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from wheeldoctor.formats.config import Defaults
    from wheeldoctor.where.discover import ConfigPython


@dataclass(frozen=True, slots=True)
class Settings:
    """``--select``/``--ignore`` as one selection, ``--jobs`` and ``--strict``, each given or from the config."""

    selection: CodeSelection
    jobs: int | None
    strict: bool


def settings_of(
    config: str | None,
    *,
    select: Sequence[str],
    ignore: Sequence[str],
    jobs: int | None,
    strict: bool,
    isolated: bool = False,
) -> Settings:
    """Each of ``--select``, ``--ignore``, ``--jobs``, ``--strict`` as given, else the config's key.

    ``isolated`` (``--isolated``): no config is read. A bad option value or config raises an
    ``InputError`` (one line and exit 2 through ``guard``).
    """
    found = config_file(config, os.getcwd(), isolated=isolated)
    defaults = _config_defaults(found)
    chosen = parse_prefixes(select, "--select") if select else (defaults.select if defaults else ())
    left_out = parse_prefixes(ignore, "--ignore") if ignore else (defaults.ignore if defaults else ())
    return Settings(
        CodeSelection(
            select=tuple(chosen),
            ignore=tuple(left_out),
            select_from=found if chosen and not select else None,
            ignore_from=found if left_out and not ignore else None,
        ),
        jobs if jobs is not None else (defaults.jobs if defaults else None),
        strict or bool(defaults is not None and defaults.strict),
    )


def config_python(config: str | None = None, *, isolated: bool = False) -> ConfigPython | None:
    """``[tool.wheeldoctor] python`` of ``--config FILE``, else of the nearest config, with where it came from.

    A config that cannot be read is reported later, when its rules are loaded.
    """
    found = config_file(config, os.getcwd(), isolated=isolated)
    try:
        defaults = _config_defaults(found)
    except (ConfigError, OSError):
        return None
    if found is None or defaults is None or defaults.python is None:
        return None
    from wheeldoctor.formats.config_search import project_root
    from wheeldoctor.where.discover import ConfigPython

    return ConfigPython(defaults.python, found, project_root(found))


def _config_defaults(found: str | None) -> Defaults | None:
    """The defaults of the config file ``found``; None when there is none."""
    if found is None:
        return None
    from wheeldoctor.formats.config import load_config  # the validator, only for a file found

    return load_config(found).defaults

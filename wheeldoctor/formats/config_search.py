"""Where the config file is: the nearest ``wheeldoctor.toml``, or ``pyproject.toml`` with ``[tool.wheeldoctor]``.

Apart from :mod:`wheeldoctor.formats.config`, which reads and validates the file found:
a run with no config imports none of that.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable
from typing import Any

from wheeldoctor.model.errors import InputError

CONFIG_NAME = "wheeldoctor.toml"
PYPROJECT = "pyproject.toml"
_REPOSITORY_MARKERS = (".git", ".hg")


class ConfigError(InputError):
    """A config file that cannot be used; the message is one line naming the file and the key."""


def find_config(start: str, outside: Iterable[str] = ()) -> str | None:
    """The config file that applies in ``start``: the nearest one up to the repository root.

    Folders under any of ``outside`` (the inspected environment's prefixes and site
    directories) are never read from.
    """
    fences = [os.path.realpath(p) for p in outside]
    here = os.path.realpath(start)
    while True:
        if not any(within(here, fence) for fence in fences):
            own = os.path.join(here, CONFIG_NAME)
            if os.path.isfile(own):
                return own
            project = os.path.join(here, PYPROJECT)
            if os.path.isfile(project) and _has_tool_table(project):
                return project
        if any(os.path.exists(os.path.join(here, marker)) for marker in _REPOSITORY_MARKERS):
            return None
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def config_file(given: str | None, start: str, *, isolated: bool = False, outside: Iterable[str] = ()) -> str | None:
    """The config a run reads: ``--config FILE`` as ``given``, else the nearest one above ``start``.

    None with ``--isolated`` (``isolated``), which reads none; given both, :class:`ConfigError`.
    """
    if isolated:
        if given is not None:
            raise ConfigError("give --config FILE or --isolated, not both")
        return None
    return given if given is not None else find_config(start, outside)


def project_root(config: str) -> str:
    """The project a config file belongs to: the nearest folder above it holding ``.git`` or ``.hg``, else its own."""
    own = os.path.dirname(os.path.abspath(config))
    here = own
    while True:
        if any(os.path.exists(os.path.join(here, marker)) for marker in _REPOSITORY_MARKERS):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return own
        here = parent


#: A config or pyproject.toml larger than this is refused, not read.
_CONFIG_LIMIT = 16 << 20


def read_toml(path: str) -> dict[str, Any]:
    """The TOML document at ``path``; :class:`ConfigError` when it cannot be read or parsed."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]
    try:
        # Not blocking: a FIFO in a config's place is one line, never a wait for a writer.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise ConfigError(f"{path}: cannot be read: not a regular file")
            data = f.read(_CONFIG_LIMIT + 1)
        if len(data) > _CONFIG_LIMIT:
            raise ConfigError(f"{path}: cannot be read: larger than {_CONFIG_LIMIT >> 20} MiB")
        document: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
        return document
    except OSError as e:
        raise ConfigError(f"{path}: cannot be read: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not valid TOML: not UTF-8") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    except RecursionError:
        raise ConfigError(f"{path}: not valid TOML: nested too deeply") from None


def _has_tool_table(path: str) -> bool:
    try:
        document = read_toml(path)
    except ConfigError:
        return True  # a broken pyproject.toml is reported, not skipped
    tool = document.get("tool")
    return isinstance(tool, dict) and "wheeldoctor" in tool


def within(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or below it (both as given: no link is resolved)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)

"""Which environment to inspect when neither ``--python`` nor ``--path`` names one: as uv finds it.

In order: ``VIRTUAL_ENV`` (an activated venv), ``CONDA_PREFIX`` (an activated conda
environment), the ``python`` default of the config, a ``.venv`` in the working
directory or the nearest parent holding one, and last the interpreter wheeldoctor runs
in. That last one is refused when it is wheeldoctor's own isolated tool environment
(``uv tool``, ``pipx``, a pre-commit hook's venv): checking it would report on
wheeldoctor's dependencies, never on the user's, and would say "intact" about the wrong
environment. Pure: it takes the environment variables, the directories and the running
prefix as arguments, and only looks at the file system.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

#: What ``uv tool install`` and ``pipx`` leave in the venvs they make for a tool.
_TOOL_RECEIPTS = ("uv-receipt.toml", "pipx_metadata.json")


@dataclass(frozen=True, slots=True)
class Choice:
    """The environment chosen: an interpreter (None: the running one) and why, for the first line."""

    python: str | None
    reason: str


class Refusal(ValueError):
    """The only candidate is wheeldoctor's own tool environment; the message says how to name one."""


def interpreter_in(directory: str) -> str | None:
    """The interpreter of a venv or prefix directory (``bin/python``, ``Scripts/python.exe``), if any."""
    for relative in ("bin/python", "bin/python3", "Scripts/python.exe", "python.exe"):
        candidate = os.path.join(directory, *relative.split("/"))
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def tool_environment(prefix: str, environ: Mapping[str, str]) -> str | None:
    """Why ``prefix`` is an isolated tool environment (uv tool, pipx, pre-commit), or None when it is not."""
    for receipt in _TOOL_RECEIPTS:
        if os.path.isfile(os.path.join(prefix, receipt)):
            return f"it holds {receipt}"
    real = os.path.realpath(prefix)
    for variable in ("UV_TOOL_DIR", "PIPX_HOME"):
        home = environ.get(variable)
        if home and (real + os.sep).startswith(os.path.realpath(home).rstrip(os.sep) + os.sep):
            return f"it is under {variable}"
    if os.path.basename(prefix).startswith("py_env-"):
        return "it is a pre-commit hook's venv"
    return None


def discover(environ: Mapping[str, str], cwd: str, running_prefix: str, config_python: str | None = None) -> Choice:
    """The environment to inspect, and why; :class:`Refusal` when only the tool's own venv is left."""
    for variable in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        value = environ.get(variable)
        if not value:
            continue
        if os.path.realpath(value) == os.path.realpath(running_prefix):
            return Choice(None, f"from {variable}")
        python = interpreter_in(value)
        if python is not None:
            return Choice(python, f"from {variable}")
    if config_python:
        return Choice(interpreter_in(config_python) or config_python, "from the config's python")
    here = os.path.abspath(cwd)
    while True:
        venv = os.path.join(here, ".venv")
        if os.path.isdir(venv):
            python = interpreter_in(venv)
            if python is not None:
                return Choice(python, f"from {venv}")
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    why = tool_environment(running_prefix, environ)
    if why is not None and os.path.basename(running_prefix).startswith("py_env-"):
        # pre-commit installs a `language: python` hook into ~/.cache/pre-commit/…/py_env-*.
        raise Refusal(
            f"this would check only the hook's own environment ({running_prefix}), not your project's; "
            "give the hook `args: [--python, .venv/bin/python]`, or use the `wheeldoctor-system` hook"
        )
    if why is not None:
        raise Refusal(
            f"no environment to check: the only one found is wheeldoctor's own ({running_prefix}; {why}); "
            "activate a venv (VIRTUAL_ENV), run from a project with a .venv, set python = PATH in the "
            "tool.wheeldoctor table of pyproject.toml, or give --python PATH (an interpreter or a venv "
            "directory) or --path DIR"
        )
    return Choice(None, "the interpreter wheeldoctor runs in")

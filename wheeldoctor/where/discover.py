"""Which environment to inspect when neither ``--python`` nor ``--path`` names one: as uv finds it.

In order: ``VIRTUAL_ENV`` (an activated venv), ``CONDA_PREFIX`` (an activated conda
environment), the ``python`` default of the config, a ``.venv`` in the working
directory or the nearest parent holding one, and last the interpreter wheeldoctor runs
in. A tool's own isolated environment (``uv tool``, ``uvx``, ``pipx``, a pre-commit hook's
venv) is never taken: not from ``VIRTUAL_ENV`` (pre-commit sets it to the hook's venv),
and not as the running interpreter, where it is refused. Checking one would report on a
tool's dependencies, never on the user's, and say "intact" about the wrong environment.
Pure: it takes the environment variables, the directories and the running prefix as
arguments, and only looks at the file system.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

#: What ``uv tool install`` and ``pipx`` leave in the venvs they make for a tool.
_TOOL_RECEIPTS = ("uv-receipt.toml", "pipx_metadata.json")


@dataclass(frozen=True, slots=True)
class Choice:
    """The environment chosen: an interpreter (None: the running one) and why, for the first line.

    ``reason`` says where it came from (``from VIRTUAL_ENV``), then each variable passed over
    because it named a tool's own environment (``VIRTUAL_ENV=DIR passed over: ...``).
    """

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
    """Why ``prefix`` is a tool's isolated environment (uv tool, uvx, pipx, pre-commit), or None when it is not."""
    for receipt in _TOOL_RECEIPTS:
        if os.path.isfile(os.path.join(prefix, receipt)):
            return f"it holds {receipt}"
    real = os.path.realpath(prefix)
    for variable in ("UV_TOOL_DIR", "PIPX_HOME"):
        home = environ.get(variable)
        if home and (real + os.sep).startswith(os.path.realpath(home).rstrip(os.sep) + os.sep):
            return f"it is under {variable}"
    if os.path.basename(real.rstrip(os.sep)).startswith("py_env-"):
        return "it is a pre-commit hook's venv"
    parent = os.path.dirname(real.rstrip(os.sep))
    # uvx (``uv tool run``) runs a tool from an environment in uv's cache: CACHE/archive-vN/ID.
    if os.path.basename(parent).startswith("archive-v") and os.path.isfile(
        os.path.join(os.path.dirname(parent), "CACHEDIR.TAG")
    ):
        return "it is an environment in uv's cache (uvx)"
    return None


def discover(environ: Mapping[str, str], cwd: str, running_prefix: str, config_python: str | None = None) -> Choice:
    """The environment to inspect, and why; :class:`Refusal` when only the tool's own venv is left."""
    passed: list[str] = []  # variables that named a tool's own environment
    for variable in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        value = environ.get(variable)
        if not value:
            continue
        why = tool_environment(value, environ)
        if why is not None:
            passed.append(f"{variable}={value} passed over: {why}")
            continue
        if os.path.realpath(value) == os.path.realpath(running_prefix):
            return _choice(None, f"from {variable}", passed)
        python = interpreter_in(value)
        if python is not None:
            return _choice(python, f"from {variable}", passed)
    if config_python:
        return _choice(interpreter_in(config_python) or config_python, "from the config's python", passed)
    venv = _nearest_venv(cwd)
    if venv is not None:
        return _choice(venv[1], f"from {venv[0]}", passed)
    _refuse_tool(running_prefix, environ)
    return _choice(None, "the interpreter wheeldoctor runs in", passed)


def _choice(python: str | None, reason: str, passed: list[str]) -> Choice:
    return Choice(python, "; ".join([reason, *passed]))


def _nearest_venv(cwd: str) -> tuple[str, str] | None:
    """``.venv`` in ``cwd`` or the nearest parent holding one with an interpreter: (its directory, its python)."""
    here = os.path.abspath(cwd)
    while True:
        venv = os.path.join(here, ".venv")
        if os.path.isdir(venv):
            python = interpreter_in(venv)
            if python is not None:
                return venv, python
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _refuse_tool(running_prefix: str, environ: Mapping[str, str]) -> None:
    """:class:`Refusal` when the interpreter wheeldoctor runs in is a tool's own environment."""
    why = tool_environment(running_prefix, environ)
    if why is None:
        return
    if why.endswith("pre-commit hook's venv"):
        # pre-commit installs a `language: python` hook into ~/.cache/pre-commit/…/py_env-*.
        raise Refusal(
            f"this would check only the hook's own environment ({running_prefix}), not your project's; "
            "give the hook `args: [--python, .venv/bin/python]`, or use the `wheeldoctor-system` hook"
        )
    raise Refusal(
        f"no environment to check: the only one found is wheeldoctor's own ({running_prefix}; {why}); "
        "activate a venv (VIRTUAL_ENV), run from a project with a .venv, set python = PATH in the "
        "tool.wheeldoctor table of pyproject.toml, or give --python PATH (an interpreter or a venv "
        "directory) or --path DIR"
    )

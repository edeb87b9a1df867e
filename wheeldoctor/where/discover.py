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
import stat
from collections.abc import Mapping
from dataclasses import dataclass

#: What ``uv tool install`` and ``pipx`` leave in the venvs they make for a tool.
_TOOL_RECEIPTS = ("uv-receipt.toml", "pipx_metadata.json")


@dataclass(frozen=True, slots=True)
class ConfigPython:
    """The config's ``python`` key: the path (made absolute from the config's folder), the file, its project."""

    python: str
    source: str
    tree: str
    """The project the config belongs to: its repository root, else the config's folder."""


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


class Untrusted(ValueError):
    """A project's file (its config's ``python``, its committed ``.venv``) would start a program of that project.

    The message is one line: what, where it resolves, and how to run it anyway (``--python``).
    """


#: Bytes of a ``pyvenv.cfg`` read for its ``home`` key; a venv writes a few hundred.
_PYVENV_LIMIT = 64 << 10


def runs_from(python: str, tree: str) -> str | None:
    """Why starting ``python`` would run a file of ``tree`` (a project's folder), or None when it would not.

    Two ways lead there: ``python`` itself, its symbolic links resolved, lies in ``tree`` (a
    script, a copied binary); or a ``pyvenv.cfg`` beside it names a ``home`` in ``tree``, from
    which the interpreter would take its standard library at start-up. A venv made by ``venv``,
    virtualenv or uv links to an interpreter installed elsewhere, and passes.
    """
    root = os.path.realpath(tree)
    real = os.path.realpath(python)
    if _within(real, root):
        return f"{python} resolves to {real}, inside {tree}"
    here = os.path.dirname(os.path.abspath(python))
    for folder in (here, os.path.dirname(here)):
        config = os.path.join(folder, "pyvenv.cfg")
        home = _venv_home(config)
        if home is not None and _within(os.path.realpath(os.path.join(folder, home)), root):
            return f"{config} sets home = {home}, inside {tree}"
    return None


def _venv_home(path: str) -> str | None:
    """The ``home`` key of the ``pyvenv.cfg`` at ``path``; None when there is no such file or key."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return "."  # not a plain file: judged as naming the folder it lies in
        text = f.read(_PYVENV_LIMIT).decode("utf-8", "replace")
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip().lower() == "home":
            return value.strip() or "."
    return None


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


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


def discover(
    environ: Mapping[str, str], cwd: str, running_prefix: str, config_python: ConfigPython | None = None
) -> Choice:
    """The environment to inspect, and why; :class:`Refusal` when only the tool's own venv is left.

    :class:`Untrusted` when the config's ``python`` or the ``.venv`` found would start a program
    from the project's own tree (:func:`runs_from`): a pull request can commit either.
    """
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
    if config_python is not None:
        python = interpreter_in(config_python.python) or config_python.python
        why = runs_from(python, config_python.tree)
        if why is not None:
            raise Untrusted(
                f"{config_python.source}: python is not started: {why}, the project the config came from; "
                f"a project's config never starts its own programs: give --python {config_python.python} to run it"
            )
        return _choice(python, "from the config's python", passed)
    venv = _nearest_venv(cwd)
    if venv is not None:
        why = runs_from(venv[1], os.path.dirname(venv[0]))
        if why is not None:
            raise Untrusted(
                f"{venv[0]} is not started: {why}; a .venv found by discovery is run only when it links to "
                f"an interpreter outside the project: give --python {venv[0]} to run it"
            )
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

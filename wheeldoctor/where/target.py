"""Which environment to inspect: this interpreter, another one, or site directories.

Another interpreter is started with ``-I -S`` and asked only for its own paths and site
directories; the search path a normal start would build is then worked out here
(``where/startup.py``), reading its .pth files as text. Nothing of the environment runs:
no .pth ``import`` line, no ``sitecustomize`` or ``usercustomize``, and its packages are
never imported into ours.

Environment variables follow one rule: those that ``site`` and the path
configuration read to build the search path apply as they would to a plain ``PY``
started from wheeldoctor's environment: ``PYTHONPATH`` (before the standard library),
``PYTHONNOUSERSITE`` and ``PYTHONUSERBASE``. ``PYTHONHOME`` and ``PYTHONPLATLIBDIR``,
which move the interpreter's own standard library, are not applied.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from wheeldoctor.model.errors import InputError
from wheeldoctor.where import probe

if TYPE_CHECKING:  # what reads the environment is imported when it is read, not with TargetError
    import subprocess
    from collections.abc import Sequence

    from wheeldoctor.model.environment import Environment
    from wheeldoctor.model.startup import SiteDir, Startup
    from wheeldoctor.where.environment import MemoFor
    from wheeldoctor.where.fingerprint import Keeper

_PROBE_TIMEOUT = 30


class TargetError(InputError):
    """The environment asked for cannot be inspected; the message is one line for the user."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """What the user asked to inspect."""

    python: str | None = None
    paths: tuple[str, ...] = ()
    dpkg_admindir: str | None = None
    """dpkg's admin directory (``/var/lib/dpkg`` when None; a mounted image's ``IMG/var/lib/dpkg``)."""
    reason: str | None = None
    """Why discovery chose it (``from VIRTUAL_ENV``...), as its ``environment:`` line on stderr
    says; None when ``--python`` or ``--path`` named it."""


def load_target(
    target: Target,
    *,
    with_tags: bool = False,
    with_records: bool = True,
    defer_records: bool = False,
    memos: MemoFor | None = None,
    keeper: Keeper | None = None,
) -> Environment:
    """Read the environment ``target`` names; raise TargetError when it cannot be read.

    ``with_tags`` also gathers the interpreter's supported wheel tags (``Environment.tags``);
    it costs an import of ``packaging.tags``, so only the checks that need them ask.
    ``with_records=False`` skips RECORD files, for checks of metadata alone;
    ``defer_records`` leaves them for the verification to read, in parallel where it can.
    ``memos`` keep what each dist-info gave, for the next read (see
    :func:`wheeldoctor.where.environment.load_environment`); ``keeper``, which of dpkg's
    file lists name something here (see :func:`wheeldoctor.where.dpkg_owners.read_owners`).
    """
    if target.python and target.paths:
        raise TargetError("give --python or --path, not both")
    if target.paths:
        env, stdlib = _load_paths(target.paths, with_tags, with_records, defer_records, memos)
    elif target.python:
        env, stdlib = _load_interpreter(target.python, with_tags, with_records, defer_records, memos)
    else:
        env, stdlib = _load_current(with_tags, with_records, defer_records, memos)
    from wheeldoctor.where.dpkg_owners import DpkgError
    from wheeldoctor.where.managers import attach_managers

    try:
        return attach_managers(env, dpkg_admindir=target.dpkg_admindir, stdlib=stdlib[0], venv=stdlib[1], keeper=keeper)
    except DpkgError as e:
        raise TargetError(str(e)) from e


_Stdlib = tuple[str | None, str | None]
"""The interpreter's stdlib directory (where PEP 668's marker lives) and the prefix of the venv it runs, if any."""


def _load_current(
    with_tags: bool = False,
    with_records: bool = True,
    defer_records: bool = False,
    memos: MemoFor | None = None,
) -> tuple[Environment, _Stdlib]:
    import sysconfig

    from wheeldoctor.model.sitedirs import current_prefixes
    from wheeldoctor.where.environment import Reading, load_environment
    from wheeldoctor.where.startup import running

    # sys.path[0] is the script's directory (or the cwd): where we were started from,
    # not where anything is installed, unless -P/safe_path already removed it.
    paths = sys.path if getattr(sys.flags, "safe_path", False) else sys.path[1:]
    stdlib = (sysconfig.get_path("stdlib"), sys.prefix if sys.prefix != sys.base_prefix else None)
    env = load_environment(
        f"python {sys.executable}",
        paths,
        current_prefixes(),
        python=sys.executable,
        markers=tuple(_current_markers().items()),
        tags=_current_tags() if with_tags else None,
        startup=running(tuple(paths)),
        reading=Reading(records=with_records, defer_records=defer_records, memos=memos),
    )
    return env, stdlib


def _current_markers() -> dict[str, str]:
    from packaging.markers import default_environment

    return {k: str(v) for k, v in default_environment().items()}


def _current_tags() -> list[str]:
    from packaging.tags import sys_tags

    return [str(t) for t in sys_tags()]


def _load_paths(
    paths: Sequence[str],
    with_tags: bool = False,
    with_records: bool = True,
    defer_records: bool = False,
    memos: MemoFor | None = None,
) -> tuple[Environment, _Stdlib]:
    from wheeldoctor.where.environment import Reading, load_environment
    from wheeldoctor.where.startup import given

    for path in paths:
        if not os.path.isdir(path):
            raise TargetError(f"--path {path}: no such directory")
    label = "paths " + " ".join(paths)
    python = _python_beside(paths[0])
    probe: _Probe | None = None
    if python is not None:
        import contextlib

        # The interpreter of that layout says what its markers and tags are; one that
        # cannot answer (a broken venv) leaves us with our own, as for a bare directory.
        with contextlib.suppress(TargetError):
            probe = _probe(python, with_tags)
    if probe is None:
        markers, tags = _current_markers(), (_current_tags() if with_tags else None)
        version = (sys.version_info[0], sys.version_info[1])
    else:
        markers, tags, python, version = probe.markers, probe.tags, probe.executable, probe.version
    env = load_environment(
        label,
        paths,
        [],
        python=python,
        markers=tuple(markers.items()),
        tags=tags,
        startup=given(tuple(paths), version),
        reading=Reading(records=with_records, defer_records=defer_records, memos=memos),
    )
    return env, (probe.stdlib, probe.venv_prefix) if probe is not None else (None, None)


def _python_beside(site_dir: str) -> str | None:
    """The interpreter of a PREFIX/lib/pythonX.Y/site-packages layout, for repair tips."""
    from wheeldoctor.model.sitedirs import root_for

    root = root_for(os.path.abspath(site_dir), [])
    for candidate in ("bin/python", "Scripts/python.exe"):
        path = os.path.join(root, candidate)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class _Probe:
    """What an interpreter started with ``-I -S`` says about itself."""

    executable: str
    version: tuple[int, int]
    interpreter: tuple[str, ...]
    """Its ``sys.path`` before ``site``: the standard library and its extension modules."""
    site_dirs: tuple[SiteDir, ...]
    """Every directory ``site.main()`` would pass to ``addsitedir``, in order."""
    user_site: bool
    """Whether ``site`` would enable the user site (and so import ``usercustomize``)."""
    prefixes: list[str]
    markers: dict[str, str]
    tags: list[str] | None
    stdlib: str | None = None
    venv: bool = False

    @property
    def venv_prefix(self) -> str | None:
        """The venv's own prefix (``sys.prefix``), when the interpreter runs one."""
        return self.prefixes[0] if self.venv and self.prefixes else None

    def startup(self) -> Startup:
        """The search path a normal start would build (``PYTHONPATH`` applied), executing nothing."""
        from wheeldoctor.where.startup import pythonpath, simulate

        return simulate(
            self.interpreter, self.site_dirs, self.version, pythonpath=pythonpath(), user_site=self.user_site
        )


def start_probe(target: Target, *, with_tags: bool = False) -> None:
    """Start the ``--python`` probe of ``target`` now (see :func:`probe.start`); :func:`load_target`
    collects its answer. Nothing is started for another kind of target."""
    if target.python and not target.paths:
        probe.start(target.python, with_tags)


def _load_interpreter(
    python: str,
    with_tags: bool = False,
    with_records: bool = True,
    defer_records: bool = False,
    memos: MemoFor | None = None,
) -> tuple[Environment, _Stdlib]:
    from wheeldoctor.where.environment import Reading, load_environment

    python = probe.resolved(python)
    if not probe.runnable(python):
        raise TargetError(f"--python {python}: no such interpreter")
    answer = _probe(python, with_tags)
    startup = answer.startup()
    env = load_environment(
        f"python {answer.executable}",
        startup.paths,
        answer.prefixes,
        python=answer.executable,
        markers=tuple(answer.markers.items()),
        tags=answer.tags,
        startup=startup,
        reading=Reading(records=with_records, defer_records=defer_records, memos=memos),
    )
    return env, (answer.stdlib, answer.venv_prefix)


#: Said whenever the probe fails: the file given was executed, whatever it turned out to be.
_RAN = "(it was started with -I -S to ask for its paths)"


def _probe(python: str, with_tags: bool) -> _Probe:
    """Ask ``python``, started with ``-I -S``, for its own paths, site directories, prefixes, markers and tags.

    Where ``python`` is this very interpreter's binary (:func:`probe.own_build`), its tags are
    computed here, not in the probe: importing packaging's tags module there cost about
    as much again as the rest of the probe, and this process imports it anyway.
    """
    here = with_tags and probe.own_build(python)
    found = _answer(python, probe.started.pop((python, with_tags), None), with_tags and not here)
    if not here:
        return found
    tags = _own_tags(found)
    if tags is None:  # the same file, yet not the same interpreter answered: it computes its own tags
        return _answer(python, None, True)
    return replace(found, tags=tags)


def _own_tags(found: _Probe) -> list[str] | None:
    """This process's wheel tags, where the probe's answer says it is the same interpreter; else None."""
    import platform
    import sysconfig

    same = (
        found.version == sys.version_info[:2]
        and found.stdlib == sysconfig.get_path("stdlib")
        and found.markers.get("python_full_version") == platform.python_version()
        and found.markers.get("implementation_name") == sys.implementation.name
        and found.markers.get("platform_machine") == platform.machine()
    )
    return _current_tags() if same else None


def _answer(python: str, process: subprocess.Popen[str] | None, with_tags: bool) -> _Probe:
    """The probe's answer: from ``process``, started already, or from one started now."""
    import json
    import subprocess

    from wheeldoctor.model.startup import SiteDir

    try:
        if process is None:
            process = probe.spawn(python, with_tags)
        with process:
            try:
                stdout, stderr = process.communicate(timeout=_PROBE_TIMEOUT)
            except BaseException:
                process.kill()
                raise
    except (OSError, subprocess.TimeoutExpired) as e:
        raise TargetError(f"--python {python}: could not run it ({e}) {_RAN}") from e
    if process.returncode != 0:
        last = (stderr.strip().splitlines() or ["no output"])[-1][:200]
        raise TargetError(f"--python {python}: exited {process.returncode} ({last}) {_RAN}")
    try:
        answer = json.loads(stdout.strip().splitlines()[-1])
        return _Probe(
            # The real interpreter, not a shim or wrapper script: repair tips name it.
            executable=str(answer["executable"]) or python,
            version=(int(answer["version"][0]), int(answer["version"][1])),
            interpreter=tuple(str(p) for p in answer["interpreter"]),
            site_dirs=tuple(SiteDir(str(d), bool(user)) for d, user in answer["site_dirs"]),
            user_site=bool(answer["user_site"]),
            prefixes=[str(p) for p in answer["prefixes"]],
            markers={str(k): str(v) for k, v in answer["markers"].items()},
            tags=None if answer.get("tags") is None else [str(t) for t in answer["tags"]],
            stdlib=str(answer["stdlib"]) if answer.get("stdlib") else None,
            venv=bool(answer.get("venv")),
        )
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as e:  # malformed: not our probe's answer
        raise TargetError(f"--python {python}: did not answer like a Python interpreter {_RAN}") from e

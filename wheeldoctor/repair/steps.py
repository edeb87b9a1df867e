"""The exact command that reinstalls a distribution, with the tool that manages its files.

A distribution that a system package manager owns (dpkg, rpm, conda) is repaired by that
manager: pip or uv would overwrite files the manager keeps a record of, and pip refuses an
``EXTERNALLY-MANAGED`` interpreter anyway (PEP 668). A step is data (:class:`RepairStep`):
``wheeldoctor fix`` runs the pip and uv steps and lists the others for the user to run.
A clash is repaired by a sequence of commands (:func:`pair_choices`), also as data.

Each command is built once, as an argument list: tips print it joined (``shlex.join``),
``fix`` runs the same list. What ``fix`` must not run by itself says why (:func:`refusal`).

Names and versions come from METADATA, which an attacker may have written: a word enters
a command only when :func:`untrusted` finds nothing wrong with it (a valid project name
that cannot be read as an option, a PEP 440 version), and pip's and uv's requirements
follow ``--``, so that even then nothing positional can become an option. Otherwise there
is no command: the step's ``argv`` is empty and its ``note`` says why.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple

from wheeldoctor.formats.names import unsafe_words
from wheeldoctor.judge.clash import ClashPair
from wheeldoctor.model.environment import Environment, InstalledDistribution, LockedSource
from wheeldoctor.model.managed import Tool
from wheeldoctor.model.sitedirs import is_within
from wheeldoctor.where.environment import with_record

_BREAK = "--break-system-packages"

#: Installers that remove exactly what a dist-info's RECORD lists: the only ones ``fix`` runs.
RECORD_INSTALLERS = frozenset({"pip", "uv"})

Argv = tuple[str, ...]

#: A system package name (Debian, RPM and conda names are of these characters), never option-shaped.
_SYSTEM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+~-]*")


def untrusted(dist: InstalledDistribution) -> str | None:
    """:func:`unsafe_words` for ``dist``'s name and version (an empty version is :func:`refusal`'s to say)."""
    return unsafe_words(dist.name, dist.version or None)


def _system_unsafe(package: str) -> str | None:
    if _SYSTEM_NAME.fullmatch(package) is None:
        return f"its package name {package!r} is not a package name, so no command is built from it"
    return None


class Command(NamedTuple):
    """An installer command, typed where it is made: the tool that runs (``pip`` or ``uv``), and its words."""

    tool: str
    argv: Argv


class StepKind(str, Enum):
    """What a step does; the JSON ``kind`` field."""

    CACHE_CLEAN = "cache-clean"
    UNINSTALL = "uninstall"
    INSTALL = "install"
    REINSTALL = "reinstall"


@dataclass(frozen=True, slots=True, kw_only=True)
class RepairStep:
    """One command that puts back a distribution's bytes, as data.

    ``manager`` owns the files; ``runs_pip`` says whether the command is pip or uv (the
    only ones ``fix`` runs). ``note`` is what the user must know before running it (a
    PEP 668 marker overridden, a manager that could not be identified), or None.
    """

    manager: Tool
    argv: tuple[str, ...]
    package: str | None = None
    note: str | None = None
    tool: str | None = None
    """``pip`` or ``uv`` where the command is theirs (what ``fix`` runs); None for a system manager's."""

    @property
    def runs_pip(self) -> bool:
        """Whether the command runs pip or uv (never true for a system package manager's files)."""
        return not self.manager.system

    @property
    def command(self) -> str:
        """The command as one shell line; empty where none is built (``note`` says why)."""
        return shlex.join(self.argv)


def repair_step(dist: InstalledDistribution, env: Environment) -> RepairStep:
    """The step that reinstalls ``dist`` with the manager that owns its files, its dependencies untouched."""
    managed = dist.managed_by
    if managed is not None and managed.tool.system:
        return _system_step(dist)
    tool = managed.tool if managed is not None else Tool.UNKNOWN
    why = untrusted(dist)
    if why is not None:
        return RepairStep(manager=tool, argv=(), note=why)
    program, argv = _installer_words(dist, env)
    note = None
    if overrides_pep668(env):
        # pip and uv refuse a PEP 668 interpreter; say so, and what overriding it means.
        argv = list(with_override(tuple(argv), env))
        owner = "pip's" if tool in (Tool.PIP, Tool.UV) else "no package manager's"
        note = (
            f"{env.python} is EXTERNALLY-MANAGED (PEP 668: {env.externally_managed}); {dist.name}'s files are "
            f"{owner}, so this overrides the marker with {_BREAK}"
        )
    return RepairStep(manager=tool, argv=tuple(argv), note=note, tool=program)


def overrides_pep668(env: Environment) -> bool:
    """Whether pip and uv commands aimed at ``env``'s interpreter need ``--break-system-packages``.

    pip and uv refuse to install into, and to uninstall from, an interpreter marked
    EXTERNALLY-MANAGED; a command that reaches it by ``--python`` or ``-m pip`` must override it.
    """
    return env.externally_managed is not None and env.python is not None


def with_override(argv: tuple[str, ...], env: Environment) -> tuple[str, ...]:
    """``argv`` (pip or uv, its operands after ``--``) with ``--break-system-packages`` when ``env`` needs it."""
    if not overrides_pep668(env):
        return argv
    at = argv.index("--") if "--" in argv else len(argv) - 1
    return (*argv[:at], _BREAK, *argv[at:])


def install_argv(specs: Sequence[str], env: Environment, *, uv: bool, reinstall: str | None = None) -> Argv:
    """pip or uv words that install ``specs`` where ``env``'s distributions live (never into whatever is active).

    With ``reinstall``, that one distribution is replaced without touching its dependencies,
    letting the installer pick the build that fits (no version pinned). Site directories given
    without an interpreter are aimed at with ``--target`` (the first), as the reinstall tips are.
    """
    bare = env.python is None and bool(env.paths)
    if uv:
        where = ["--python", env.python] if env.python else ["--target", env.paths[0]] if bare else []
        words = [
            "uv",
            "pip",
            "install",
            *where,
            *(["--reinstall-package", reinstall, "--no-deps"] if reinstall else []),
        ]
    else:
        runner = ["pip", "install", "--target", env.paths[0]] if bare else [*pip_runner(env), "install"]
        words = [*runner, *(["--force-reinstall", "--no-deps"] if reinstall else [])]
    return with_override((*words, "--", *specs), env)


def _system_step(dist: InstalledDistribution) -> RepairStep:
    managed = dist.managed_by
    assert managed is not None
    if managed.package is None:
        return _unnamed_step(dist, managed.tool)
    why = _system_unsafe(managed.package)
    if why is not None:
        return RepairStep(manager=managed.tool, argv=(), package=None, note=why)
    if managed.tool is Tool.DPKG:
        return RepairStep(
            manager=Tool.DPKG, argv=("apt-get", "install", "--reinstall", managed.package), package=managed.package
        )
    if managed.tool is Tool.RPM:
        return RepairStep(manager=Tool.RPM, argv=("dnf", "reinstall", managed.package), package=managed.package)
    prefix = os.path.dirname(os.path.dirname(managed.record)) if managed.record else None
    version = (managed.version or "").rpartition("-")[0] or managed.version
    if version and _SYSTEM_NAME.fullmatch(version) is None:
        note = f"its version {version!r} is not a version: no command"
        return RepairStep(manager=Tool.CONDA, argv=(), package=managed.package, note=note)
    spec = f"{managed.package}={version}" if version else managed.package
    where = ["--prefix", prefix] if prefix else []
    argv = ("conda", "install", *where, "--force-reinstall", "--no-deps", spec)
    return RepairStep(manager=Tool.CONDA, argv=argv, package=managed.package)


def _unnamed_step(dist: InstalledDistribution, tool: Tool) -> RepairStep:
    """A system manager's step when its package could not be named: never pip over its files."""
    metadata = os.path.join(dist.path, "METADATA") if not dist.legacy else dist.path
    if tool is Tool.CONDA:
        why = untrusted(dist)
        if why is not None:
            return RepairStep(manager=tool, argv=(), package=None, note=why)
        spec = f"{dist.name}=={dist.version}"
        note = "no conda-meta record names the conda package; its name may differ from the distribution's"
        return RepairStep(
            manager=tool,
            argv=("conda", "install", "--prefix", dist.root, "--force-reinstall", "--no-deps", spec),
            package=None,
            note=note,
        )
    if tool is Tool.RPM:
        note = "rpm could not name the package; dnf finds the package that owns this file"
        return RepairStep(manager=tool, argv=("dnf", "reinstall", metadata), package=None, note=note)
    # dpkg always names its package; this is for a manager added later without that.
    note = "the package could not be named: this asks dpkg for it; then apt-get install --reinstall PACKAGE"
    return RepairStep(manager=tool, argv=("dpkg", "-S", metadata), package=None, note=note)


def uv_pip(verb: str, python: str | None, *rest: str) -> tuple[str, ...]:
    """``uv pip VERB [--python PYTHON] REST...``."""
    target = ("--python", python) if python else ()
    return ("uv", "pip", verb, *target, *rest)


def reaching(dist: InstalledDistribution, env: Environment) -> str | None:
    """``env``'s interpreter when its pip installs where ``dist`` lies, else None (aim at the directory).

    An interpreter asked for (``--python``) reaches its whole path, but a venv's only itself:
    its pip would install a base interpreter's distribution (a ``--system-site-packages``
    venv's) into the venv, leaving the base's files as they are. One found beside a
    ``--path`` directory (no prefixes) was found beside the first alone: ``pip install``
    through it would put a distribution of another ``--path`` directory in its own.
    """
    venv = env.venv
    if venv is not None and not is_within(os.path.realpath(dist.location), os.path.realpath(venv)):
        return None
    if env.python is None or env.prefixes or not env.paths:
        return env.python
    return env.python if os.path.realpath(dist.location) == os.path.realpath(env.paths[0]) else None


def pinned_version(dist: InstalledDistribution, env: Environment) -> str:
    """The version a reinstall of ``dist`` pins: the lock's, when ``env`` was checked against one, else its own."""
    return env.locked.get(dist.name, dist.version)


def locked_pin(name: str, version: str | None) -> tuple[str, str] | None:
    """A locked package's (canonical name, version) when both are safe words for an installer, else None.

    The lock is read from disk like everything else: its name must be a valid project
    name and its version a PEP 440 version written as such, so neither can become an
    option (``-e``, ``--index-url=...``) or anything but ``NAME==VERSION``.
    """
    from packaging.utils import canonicalize_name
    from packaging.version import Version

    if version is None or version != version.strip() or version.startswith("-"):
        return None
    try:
        canonical = canonicalize_name(name, validate=True)
        Version(version)
    except ValueError:  # InvalidName, InvalidVersion, or digits past int()'s limit
        return None
    return str(canonical), version


def locked_source(
    index: str | None, wheel_path: str | None, wheel_url: str | None, sha256: str | None = None
) -> LockedSource | None:
    """Where a reinstall takes a locked package from, when the lock's words are safe for a command line.

    The lock is hostile like any file read: an index or wheel URL must be http(s) with a host
    and no space or control character, a path absolute and printable. In order: the wheel's
    path (the exact locked file), the index alone (asked for a wheel only, never a source
    build), the wheel's URL (with the lock's sha256 as its ``#sha256=`` fragment, which pip and
    uv check before installing); None when none may be used.
    """
    import urllib.parse

    def safe_url(url: str | None) -> str | None:
        if url is None or not url.isprintable() or any(c.isspace() for c in url):
            return None
        try:
            parts = urllib.parse.urlsplit(url)
        except ValueError:
            return None
        return url if parts.scheme in ("https", "http") and parts.hostname else None

    if wheel_path is not None and wheel_path.startswith("/") and wheel_path.isprintable():
        return LockedSource(wheel=wheel_path)
    if safe_url(index) is not None:
        return LockedSource(index=index)
    url = safe_url(wheel_url)
    if url is None:
        return None
    if sha256 is not None and len(sha256) == 64 and all(c in "0123456789abcdef" for c in sha256):
        url = f"{url.partition('#')[0]}#sha256={sha256}"
    return LockedSource(wheel=url)


def _installer_words(dist: InstalledDistribution, env: Environment) -> tuple[str, list[str]]:
    """The tool, and pip or uv words that reinstall ``dist`` at its pinned version; the spec comes last.

    Against a lock, from the lock's source: its index alone (``--index-url=URL``), or the
    locked wheel's path or URL, never by name from whatever index the installer is set to.
    """
    spec = f"{dist.name}=={pinned_version(dist, env)}"
    source = env.locked_sources.get(dist.name)
    index: list[str] = []
    if source is not None and source.wheel is not None:
        spec = source.wheel if source.wheel.startswith("/") else f"{dist.name} @ {source.wheel}"
    elif source is not None and source.index is not None:
        index = [f"--index-url={source.index}", "--only-binary=:all:"]  # the locked file is a wheel: never a build
    python = reaching(dist, env)
    uv = (dist.installer or "").lower() == "uv"
    if python is None:
        # Site directories without an interpreter: aim at the directory itself, never at
        # whatever environment happens to be active where the tip is pasted.
        if uv:
            target = ["--target", dist.location, "--reinstall-package", dist.name, "--no-deps", *index, "--", spec]
            return "uv", ["uv", "pip", "install", *target]
        words = ["pip", "install", "--target", dist.location, "--upgrade", "--force-reinstall", "--no-deps"]
        return "pip", [*words, *index, "--", spec]
    if uv:
        words = ["uv", "pip", "install", "--python", python, "--reinstall-package", dist.name, "--no-deps"]
        return "uv", [*words, *index, "--", spec]
    return "pip", [*pip_runner(env), "install", "--force-reinstall", "--no-deps", *index, "--", spec]


def refusal(dist: InstalledDistribution, env: Environment) -> str | None:
    """Why ``fix`` must not run pip or uv on ``dist`` by itself; None when it may.

    A system package manager's files are that manager's (its step is listed for the user
    instead); a tool that is not recorded, or is not pip or uv, may keep records that pip
    would leave stale; without a version a reinstall cannot be pinned to what is installed.
    In a directory no known interpreter reaches, pip or uv ``--target`` picks builds for the
    Python that runs it, which fits compiled extensions only by luck. A name or version
    that may not enter a command (:func:`untrusted`) is refused before anything else.
    """
    why = untrusted(dist)
    if why is not None:
        return why
    managed = dist.managed_by
    if managed is not None and managed.tool.system:
        package = f" (package {managed.package})" if managed.package else ""
        return f"its files belong to {managed.tool.value}{package}: repair it with {managed.tool.value}"
    installer = (dist.installer or "").strip()
    if installer.lower() not in RECORD_INSTALLERS:
        if not installer:
            return "no INSTALLER is recorded, so the tool that owns its files is unknown"
        return f"installed by {installer}, not pip or uv: repair it with {installer}"
    if not dist.version:
        return "no version is recorded, so a reinstall cannot be pinned to what is installed"
    if reaching(dist, env) is None and _compiled(dist):
        return (
            f"it holds compiled extensions and no interpreter is known for {dist.location}: "
            "pip --target would pick builds for its own Python; give --python"
        )
    return None


def _compiled(dist: InstalledDistribution) -> bool:
    """Whether ``dist`` records an extension module (its build must match the interpreter)."""
    record = with_record(dist).record  # a RECORD the verification read in its workers is read here
    rows = record.rows if record is not None else ()
    return any(row.path.endswith((".so", ".pyd", ".dylib")) or ".so." in row.path for row in rows)


def reinstall_command_of(dist: InstalledDistribution, env: Environment) -> Command:
    """:func:`repair_step`'s command, typed (what ``fix`` runs)."""
    step = repair_step(dist, env)
    return Command(step.tool or step.manager.value, step.argv)


def reinstall_command(dist: InstalledDistribution, env: Environment) -> str:
    """A command that puts back ``dist``'s own bytes, without touching its dependencies.

    A system package manager's distribution is reinstalled by that manager
    (``apt-get install --reinstall python3-pip``); uv installs with uv (its cache holds
    the wheel); anything else with pip, the exact version pinned so nothing is upgraded.
    An environment without pip of its own (a uv venv) is reached with ``pip --python``;
    site directories given without an interpreter with ``--target``.
    """
    return repair_step(dist, env).command


def pip_runner(env: Environment) -> list[str]:
    """The words that run pip on ``env``: its own pip, else ``pip --python`` (a uv venv has none)."""
    if env.python is None:
        return ["pip"]
    if env.find("pip") is not None:
        return [env.python, "-m", "pip"]
    return ["pip", "--python", env.python]


def cache_clean_argv(dist: InstalledDistribution) -> Argv | None:
    """For a uv install whose altered files are hard links, the command that drops uv's copy.

    uv links installed files to its cache, so bytes altered in place are altered in the
    cache too, and a reinstall would link them back.
    """
    if (dist.installer or "").strip().lower() != "uv" or untrusted(dist) is not None:
        return None
    return ("uv", "cache", "clean", "--", dist.name)


def cache_clean_command(dist: InstalledDistribution) -> str | None:
    """:func:`cache_clean_argv`, as a line to paste."""
    argv = cache_clean_argv(dist)
    return shlex.join(argv) if argv is not None else None


def uninstall_command(dist: InstalledDistribution, env: Environment) -> Command:
    """The command that uninstalls ``dist``, with the tool that manages its files.

    A system package manager's distribution is removed by that manager. Site directories
    without an interpreter are aimed at with ``uv pip uninstall --target`` (pip has no
    such option), never at whatever environment is active where it is pasted. Where no
    command may be built (:func:`untrusted`), its ``argv`` is empty.
    """
    managed = dist.managed_by
    if managed is not None and managed.tool.system and managed.package is not None:
        if _system_unsafe(managed.package) is not None:
            return Command(managed.tool.value, ())
        remove = {Tool.DPKG: ("apt-get", "remove"), Tool.RPM: ("dnf", "remove")}.get(managed.tool)
        argv = (*(remove or ("conda", "remove", "--prefix", dist.root)), managed.package)
        return Command(managed.tool.value, argv)
    python = reaching(dist, env)
    uv = python is None or (dist.installer or "").lower() == "uv"
    if untrusted(dist) is not None:
        return Command("uv" if uv else "pip", ())
    if python is None:
        return Command("uv", uv_pip("uninstall", None, "--target", dist.location, "--", dist.name))
    if uv:
        return Command("uv", with_override(uv_pip("uninstall", python, "--", dist.name), env))
    return Command("pip", with_override((*pip_runner(env), "uninstall", "-y", "--", dist.name), env))


@dataclass(frozen=True, slots=True, kw_only=True)
class Choice:
    """One way to end a clash: keep ``keep``, remove ``remove`` (None: keep both), run ``argvs`` in order."""

    keep: str
    remove: str | None
    steps: tuple[Command, ...]
    refused: str | None = None
    """Why there are no steps: a name or version that may not enter a command (:func:`untrusted`)."""

    @property
    def argvs(self) -> tuple[Argv, ...]:
        """The commands' words, in order."""
        return tuple(step.argv for step in self.steps)

    @property
    def commands(self) -> tuple[str, ...]:
        """The commands as lines to paste, in order."""
        return tuple(shlex.join(argv) for argv in self.argvs)


def keep_sequence(keep: InstalledDistribution, drop: InstalledDistribution, env: Environment) -> Choice:
    """Uninstall ``drop``, then reinstall ``keep``: uninstalling deletes every shared path, ``keep``'s too."""
    why = untrusted(drop) or untrusted(keep)
    if why is not None:
        return Choice(keep=keep.name, remove=drop.name, steps=(), refused=why)
    return Choice(
        keep=keep.name, remove=drop.name, steps=(uninstall_command(drop, env), reinstall_command_of(keep, env))
    )


def pair_choices(pair: ClashPair, env: Environment) -> tuple[Choice, ...]:
    """The ways to repair a clashing pair, best first.

    An overlay has one: reinstall the overlay last, keeping both (letting the base win
    would overwrite the package that requires it). Unrelated distributions are
    alternatives: keep the winner (uninstall the other, then reinstall it), or the other.
    """
    if pair.overlay is not None:
        why = untrusted(pair.winner)
        if why is not None:
            return (Choice(keep=pair.winner.name, remove=None, steps=(), refused=why),)
        return (Choice(keep=pair.winner.name, remove=None, steps=(reinstall_command_of(pair.winner, env),)),)
    return (keep_sequence(pair.winner, pair.loser, env), keep_sequence(pair.loser, pair.winner, env))

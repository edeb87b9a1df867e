"""Reusable test helpers: real wheels, real virtual environments, real installers.

Everything here produces *real* artefacts:

* :func:`build_wheel` writes a spec-valid ``.whl`` whose ``RECORD`` is computed
  from the bytes actually written (hashes are never hard-coded anywhere in the
  test-suite; :func:`record_hash` is the single place they are computed).
* :func:`make_venv` creates a real virtual environment with ``uv venv``.
* :func:`pip_install` and :func:`uv_install` run the real installers against
  such an environment.

The module depends only on the standard library, ``packaging`` and (optionally)
the ``uv`` package from PyPI, which is used to locate the ``uv`` binary.
"""

from __future__ import annotations

import base64
import csv
import functools
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from packaging.tags import parse_tag
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

__all__ = [
    "CommandFailed",
    "Venv",
    "VenvFactory",
    "WheelFactory",
    "build_wheel",
    "copy_venv",
    "data_dirname",
    "dist_info_dirname",
    "escape_name",
    "escape_version",
    "find_interpreter",
    "find_uv",
    "make_venv",
    "pip_install",
    "read_record",
    "record_hash",
    "record_rows",
    "run_checked",
    "uv_install",
]

#: Fixed timestamp for every zip member, so identical inputs give identical wheels.
_ZIP_DATE_TIME = (1980, 1, 1, 0, 0, 0)

#: Minimum pip version that supports ``pip --python <interpreter>``.
_PIP_PYTHON_OPTION_MIN = (22, 3)

#: Environment variable read by :func:`uv_install`/:func:`make_venv` for the
#: cache directory (uv's own variable; ``tests/conftest.py`` points it at a
#: per-session temporary directory).
UV_CACHE_ENV = "UV_CACHE_DIR"


# --------------------------------------------------------------------------
# Hashing / RECORD
# --------------------------------------------------------------------------


def record_hash(data: bytes) -> str:
    """Return the RECORD hash field for *data*: ``sha256=<urlsafe-b64, no padding>``.

    This is the single place in the test-suite where RECORD hashes are computed.
    """
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def record_rows(files: Mapping[str, bytes]) -> list[list[str]]:
    """Return ``[path, hash, size]`` RECORD rows for *files*, in mapping order.

    The row for ``RECORD`` itself (``RECORD,,``) is *not* included; callers that
    write a RECORD file append it themselves (as :func:`build_wheel` does).
    """
    return [[path, record_hash(data), str(len(data))] for path, data in files.items()]


def read_record(path: Path) -> list[list[str]]:
    """Parse a RECORD file on disk into its CSV rows (blank lines skipped)."""
    with path.open(newline="", encoding="utf-8") as fh:
        return [row for row in csv.reader(fh) if row]


def _render_csv(rows: Sequence[Sequence[str]]) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerows(rows)
    return buf.getvalue().encode("utf-8")


# --------------------------------------------------------------------------
# Wheel building
# --------------------------------------------------------------------------


def escape_name(name: str) -> str:
    """Escape a distribution name for wheel file and ``.dist-info`` names.

    Per the binary distribution format spec: the name is normalised
    (:func:`packaging.utils.canonicalize_name`: lower-cased, runs of ``-_.``
    collapsed) and ``-`` is then replaced by ``_``. ``"Foo.Bar-baz"`` gives
    ``"foo_bar_baz"``.
    """
    return canonicalize_name(name).replace("-", "_")


def escape_version(version: str) -> str:
    """Escape a version for wheel file and ``.dist-info`` names.

    Valid versions are normalised (``1.0-rc1`` -> ``1.0rc1``); anything else has
    runs of characters other than alphanumerics, ``.`` and ``+`` replaced by ``_``.
    """
    try:
        return str(Version(version))
    except InvalidVersion:
        return re.sub(r"[^\w.+]+", "_", version)


def dist_info_dirname(name: str, version: str) -> str:
    """Return the ``{name}-{version}.dist-info`` directory name used in wheels."""
    return f"{escape_name(name)}-{escape_version(version)}.dist-info"


def data_dirname(name: str, version: str) -> str:
    """Return the ``{name}-{version}.data`` directory name used in wheels.

    Use it to place scripts/headers/data in a wheel, e.g.
    ``f"{data_dirname('demo', '1.0')}/scripts/demo-tool"``.
    """
    return f"{escape_name(name)}-{escape_version(version)}.data"


def _metadata(
    name: str,
    version: str,
    requires: Sequence[str],
    requires_python: str | None,
    extras: Mapping[str, Sequence[str]],
) -> bytes:
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if requires_python is not None:
        lines.append(f"Requires-Python: {requires_python}")
    lines.extend(f"Requires-Dist: {req}" for req in requires)
    for extra, extra_requires in extras.items():
        lines.append(f"Provides-Extra: {extra}")
        for req in extra_requires:
            spec, sep, marker = req.partition(";")
            marker = marker.strip()
            condition = f'extra == "{extra}"'
            if sep and marker:
                condition = f"({marker}) and {condition}"
            lines.append(f"Requires-Dist: {spec.strip()}; {condition}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def _wheel_file(tag: str) -> bytes:
    lines = [
        "Wheel-Version: 1.0",
        "Generator: wheeldoctor-tests",
        "Root-Is-Purelib: true",
    ]
    # Expand compressed tag sets ("py2.py3-none-any") into one Tag line each.
    lines.extend(f"Tag: {t}" for t in sorted(str(t) for t in parse_tag(tag)))
    return ("\n".join(lines) + "\n").encode("utf-8")


def _entry_points(console_scripts: Mapping[str, str]) -> bytes:
    lines = ["[console_scripts]"]
    lines.extend(f"{script} = {target}" for script, target in console_scripts.items())
    return ("\n".join(lines) + "\n").encode("utf-8")


def _check_member_path(path: str) -> None:
    if not path or path.startswith("/") or "\\" in path or ".." in path.split("/"):
        raise ValueError(f"invalid wheel member path: {path!r}")


def build_wheel(
    directory: Path,
    name: str,
    version: str,
    files: Mapping[str, bytes],
    *,
    requires: Sequence[str] = (),
    requires_python: str | None = None,
    extras: Mapping[str, Sequence[str]] = {},
    console_scripts: Mapping[str, str] = {},
    tag: str = "py3-none-any",
    record_override: Callable[[list[list[str]]], list[list[str]]] | None = None,
    metadata_name: str | None = None,
) -> Path:
    """Write a real, spec-valid wheel into *directory* and return its path.

    Args:
        directory: Where to write the wheel (created if missing).
        name: Distribution name. Escaped with :func:`escape_name` for the file
            name ``{name}-{version}-{tag}.whl`` and the ``.dist-info`` directory.
        version: Version string, written verbatim to METADATA and escaped with
            :func:`escape_version` for file/directory names.
        files: Archive members, ``{relative posix path: bytes}``, written in the
            given order. Paths may use the ``{dist}-{ver}.data/scripts/...``
            convention (see :func:`data_dirname`); members under ``.data/scripts/``
            get mode 0o755, everything else 0o644. Members may also live in the
            ``.dist-info`` directory; a member named ``METADATA``, ``WHEEL`` or
            ``entry_points.txt`` there *replaces* the generated one. ``RECORD``
            cannot be supplied (use *record_override*).
        requires: ``Requires-Dist`` lines.
        requires_python: ``Requires-Python`` value, if any.
        extras: ``{extra: [requirement, ...]}``; written as ``Provides-Extra`` plus
            ``Requires-Dist: req; extra == "extra"`` (an existing marker on the
            requirement is and-ed with the extra condition).
        console_scripts: ``{script name: "module:function"}`` for
            ``entry_points.txt``; the file is only written when non-empty.
        tag: Wheel tag (may be compressed, e.g. ``py2.py3-none-any``); each
            expanded tag gets a ``Tag:`` line in WHEEL.
        record_override: Called with the computed RECORD rows (every member,
            including the final ``["<dist-info>/RECORD", "", ""]`` row) and
            returns the rows actually written. Use it to corrupt RECORD.
        metadata_name: ``Name:`` written to METADATA (default: *name* verbatim).
            File and directory names always derive from *name*.

    Returns:
        Path of the written ``.whl`` file.

    """
    dist_info = dist_info_dirname(name, version)
    record_path = f"{dist_info}/RECORD"

    members: dict[str, bytes] = {}
    for path, data in files.items():
        _check_member_path(path)
        if path == record_path:
            raise ValueError("RECORD is computed; use record_override to change it")
        members[path] = bytes(data)

    generated: dict[str, bytes] = {
        f"{dist_info}/METADATA": _metadata(
            metadata_name if metadata_name is not None else name,
            version,
            requires,
            requires_python,
            extras,
        ),
        f"{dist_info}/WHEEL": _wheel_file(tag),
    }
    if console_scripts:
        generated[f"{dist_info}/entry_points.txt"] = _entry_points(console_scripts)

    # Payload first, then the .dist-info directory, RECORD last (as the spec
    # recommends). Caller-supplied dist-info files take precedence.
    dist_info_prefix = dist_info + "/"
    payload = {p: d for p, d in members.items() if not p.startswith(dist_info_prefix)}
    meta = {**generated, **{p: d for p, d in members.items() if p.startswith(dist_info_prefix)}}
    ordered = {**payload, **meta}

    rows = record_rows(ordered)
    rows.append([record_path, "", ""])
    if record_override is not None:
        rows = record_override([list(row) for row in rows])
    ordered[record_path] = _render_csv(rows)

    scripts_prefix = f"{data_dirname(name, version)}/scripts/"
    directory.mkdir(parents=True, exist_ok=True)
    wheel_path = directory / f"{escape_name(name)}-{escape_version(version)}-{tag}.whl"
    with zipfile.ZipFile(wheel_path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path, data in ordered.items():
            info = zipfile.ZipInfo(path, date_time=_ZIP_DATE_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            mode = 0o755 if path.startswith(scripts_prefix) else 0o644
            info.external_attr = (0o100000 | mode) << 16
            zf.writestr(info, data)
    return wheel_path


# --------------------------------------------------------------------------
# Subprocesses
# --------------------------------------------------------------------------


class CommandFailed(RuntimeError):
    """A helper subprocess exited non-zero; carries the full command output."""

    def __init__(self, cmd: Sequence[str], result: subprocess.CompletedProcess[str]) -> None:
        """Record *cmd* and its completed *result*."""
        self.cmd = list(cmd)
        self.returncode = result.returncode
        self.stdout = result.stdout
        self.stderr = result.stderr
        super().__init__(
            f"command failed with exit code {result.returncode}: {' '.join(self.cmd)}\n"
            f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}"
        )


def run_checked(
    cmd: Sequence[str | Path],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run *cmd* capturing text output; raise :class:`CommandFailed` on failure.

    *env* entries are layered on top of ``os.environ``.
    """
    argv = [str(arg) for arg in cmd]
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    result = subprocess.run(argv, capture_output=True, text=True, env=full_env, cwd=cwd, check=False)
    if result.returncode != 0:
        raise CommandFailed(argv, result)
    return result


@functools.cache
def find_uv() -> Path:
    """Locate the ``uv`` binary: ``uv.find_uv_bin()`` first, then ``$PATH``."""
    try:
        from uv import find_uv_bin
    except ImportError:
        pass
    else:
        try:
            return Path(find_uv_bin())
        except FileNotFoundError:
            pass
    found = shutil.which("uv")
    if found is None:
        raise RuntimeError("uv not found: `pip install uv` into the test environment")
    return Path(found)


def find_interpreter(version: str) -> Path | None:
    """Return a working interpreter for *version* (``"3.12"``), or ``None``.

    Checks the running interpreter, ``python3.X`` on ``$PATH`` and
    ``~/.pyenv/versions/3.X*/bin/python3.X``; each candidate is actually run
    (pyenv shims exist on PATH but fail for versions that are not selected).
    Note ``uv venv --python 3.12`` can trip over such shims, so pass the path.
    """
    if f"{sys.version_info.major}.{sys.version_info.minor}" == version:
        return Path(sys.executable)
    candidates: list[Path] = []
    on_path = shutil.which(f"python{version}")
    if on_path is not None:
        candidates.append(Path(on_path))
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates.extend(sorted((pyenv_root / "versions").glob(f"{version}*/bin/python{version}")))
    probe = "import sys; print('%d.%d' % sys.version_info[:2])"
    for candidate in candidates:
        try:
            result = subprocess.run(
                [str(candidate), "-c", probe],
                capture_output=True,
                text=True,
                check=False,
                timeout=30,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if result.returncode == 0 and result.stdout.strip() == version:
            return candidate
    return None


def _uv_env(cache_dir: Path | None, link_mode: str | None) -> dict[str, str]:
    env = {
        "UV_NO_PROGRESS": "1",
        "UV_NO_CONFIG": "1",  # ignore uv.toml / [tool.uv] from the user or repo
        "UV_PYTHON_DOWNLOADS": "never",
    }
    cache = cache_dir if cache_dir is not None else os.environ.get(UV_CACHE_ENV)
    if cache:
        env[UV_CACHE_ENV] = str(cache)
    if link_mode is not None:
        env["UV_LINK_MODE"] = link_mode
    return env


# --------------------------------------------------------------------------
# Virtual environments
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Venv:
    """A real virtual environment, as reported by its own interpreter."""

    prefix: Path
    python: Path
    site_packages: Path
    bin: Path

    def dist_info(self, name: str) -> Path:
        """Return the single installed ``*.dist-info`` dir for distribution *name*.

        Matching is by canonicalised name, so ``Foo.Bar`` finds ``foo_bar-1.0.dist-info``.
        """
        wanted = canonicalize_name(name)
        found = [
            p
            for p in self.site_packages.glob("*.dist-info")
            if canonicalize_name(p.name[: -len(".dist-info")].rpartition("-")[0]) == wanted
        ]
        if len(found) != 1:
            raise LookupError(f"expected one dist-info for {name!r} in {self.site_packages}, got {found}")
        return found[0]


def _query_venv(prefix: Path, python: Path) -> Venv:
    code = "import json, sysconfig; print(json.dumps(sysconfig.get_paths()))"
    paths = json.loads(run_checked([python, "-c", code]).stdout)
    return Venv(
        prefix=prefix,
        python=python,
        site_packages=Path(paths["purelib"]),
        bin=Path(paths["scripts"]),
    )


def make_venv(
    path: Path,
    python: str | Path = sys.executable,
    *,
    uv_bin: Path | None = None,
    cache_dir: Path | None = None,
) -> Venv:
    """Create a virtual environment at *path* with ``uv venv`` (no pip inside).

    *python* is anything ``uv venv --python`` accepts (an interpreter path or a
    version request such as ``"3.12"``); Python downloads are disabled.
    """
    uv = uv_bin if uv_bin is not None else find_uv()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    run_checked(
        [uv, "venv", "--quiet", "--python", str(python), path],
        env=_uv_env(cache_dir, None),
        cwd=path.parent,
    )
    bin_dir = path / ("Scripts" if sys.platform == "win32" else "bin")
    exe = "python.exe" if sys.platform == "win32" else "python"
    return _query_venv(path, bin_dir / exe)


def copy_venv(template: Venv, to: Path) -> Venv:
    """A copy of ``template`` at ``to``, for a test that changes what it holds.

    The same files with their modes and mtimes (so installed ``.pyc`` files stay current),
    symbolic links kept as links (``bin/python`` still names the base interpreter), hence
    the same RECORDs and relative layout; ctimes and inodes are new, as after an install.
    Building an environment once per session and copying it per test is much cheaper than
    installing it per test. Console scripts keep the template's shebang: run the copy's
    ``python``, not its scripts.
    """
    shutil.copytree(template.prefix, to, symlinks=True)
    return Venv(
        prefix=to,
        python=to / template.python.relative_to(template.prefix),
        site_packages=to / template.site_packages.relative_to(template.prefix),
        bin=to / template.bin.relative_to(template.prefix),
    )


# --------------------------------------------------------------------------
# Installers
# --------------------------------------------------------------------------


def _current_pip_version() -> tuple[int, ...]:
    from importlib.metadata import PackageNotFoundError, version

    try:
        raw = version("pip")
    except PackageNotFoundError as exc:
        raise RuntimeError(f"pip is not installed in the test interpreter {sys.executable}") from exc
    return Version(raw).release


def pip_install(venv: Venv, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run the *current* interpreter's pip against *venv*: ``pip --python <venv> install *args``.

    Nothing is added to *args*: pass ``--no-index``/``--no-deps`` etc. yourself.
    The target environment does not need pip. Requires pip >= 22.3 in the
    test interpreter. Raises :class:`CommandFailed` (with output) on failure.
    """
    pip_version = _current_pip_version()
    if pip_version < _PIP_PYTHON_OPTION_MIN:
        raise RuntimeError(f"pip --python needs pip >= 22.3, test interpreter has {pip_version}")
    cmd: list[str | Path] = [sys.executable, "-m", "pip", "--python", venv.python, "install", *args]
    return run_checked(cmd, env={"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"})


def uv_install(
    venv: Venv,
    *args: str | Path,
    uv_bin: Path | None = None,
    cache_dir: Path | None = None,
    link_mode: str | None = "copy",
) -> subprocess.CompletedProcess[str]:
    """Run ``uv pip install --python <venv> *args``.

    Args:
        venv: Target environment.
        args: Passed through unchanged (wheel paths, ``--no-deps``, ...).
        uv_bin: uv binary (default: :func:`find_uv`).
        cache_dir: ``UV_CACHE_DIR`` (default: the ``UV_CACHE_DIR`` environment
            variable, which ``tests/conftest.py`` sets to a per-session dir).
        link_mode: ``UV_LINK_MODE``. Defaults to ``"copy"``: uv's Linux default
            is ``hardlink`` from its cache, so a test that corrupts an installed
            file in place would also corrupt the cache (and every other venv
            installed from it). Pass ``None`` to use uv's default.

    Raises:
        CommandFailed: uv exited non-zero (the message includes its output).

    """
    uv = uv_bin if uv_bin is not None else find_uv()
    cmd: list[str | Path] = [uv, "pip", "install", "--python", venv.python, *args]
    return run_checked(cmd, env=_uv_env(cache_dir, link_mode))


_EDITABLE_BACKEND = """\
import os
import shutil

WHEEL = {wheel!r}


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    shutil.copy(WHEEL, wheel_directory)
    return os.path.basename(WHEEL)


build_wheel = build_editable
"""


def uv_install_editable(
    venv: Venv, wheel: Path, project: Path, uv_bin: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Install ``wheel`` as the editable wheel of a project in ``project``: ``uv pip install -e``.

    The project's in-tree PEP 660 backend hands uv that very wheel, as a build backend hands
    over the editable wheel it writes (hooks, redirect modules); uv then records the install
    as editable in ``direct_url.json``, exactly as for a real project. Offline: nothing to build.
    """
    project.mkdir(parents=True, exist_ok=True)
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n', encoding="utf-8"
    )
    (project / "backend.py").write_text(_EDITABLE_BACKEND.format(wheel=str(wheel)), encoding="utf-8")
    return uv_install(venv, "--no-deps", "--offline", "-e", project, uv_bin=uv_bin)


# --------------------------------------------------------------------------
# Fixture call signatures (for annotating tests)
# --------------------------------------------------------------------------


class VenvFactory(Protocol):
    """Type of the ``venv_factory`` fixture."""

    def __call__(self, name: str = "venv", python: str | Path = sys.executable) -> Venv:
        """Create a fresh venv at ``tmp_path / name``."""
        ...


class WheelFactory(Protocol):
    """Type of the ``wheel_factory`` fixture: :func:`build_wheel` minus *directory*."""

    def __call__(
        self,
        name: str,
        version: str,
        files: Mapping[str, bytes],
        *,
        requires: Sequence[str] = (),
        requires_python: str | None = None,
        extras: Mapping[str, Sequence[str]] = {},
        console_scripts: Mapping[str, str] = {},
        tag: str = "py3-none-any",
        record_override: Callable[[list[list[str]]], list[list[str]]] | None = None,
        metadata_name: str | None = None,
    ) -> Path:
        """Build a wheel into ``tmp_path / "wheels"``."""
        ...


def run_cli(
    *args: str | Path, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m wheeldoctor ARGS`` as users run it, output captured; never hangs the suite."""
    return subprocess.run(
        [sys.executable, "-m", "wheeldoctor", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


def cli_json(*args: str | Path) -> tuple[int, dict[str, Any]]:
    """``wheeldoctor ARGS --json``: the exit code (0 or 1, never an error) and the document."""
    done = run_cli(*args, "--json")
    assert done.returncode in (0, 1), done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, document


# --------------------------------------------------------------------------
# Threads
# --------------------------------------------------------------------------


def os_threads() -> int:
    """Threads of this process as the kernel counts them (the gate's are raw ``_thread`` ones)."""
    return len(os.listdir("/proc/self/task"))


def settled_threads(expected: int) -> int:
    """The OS thread count once it is ``expected`` or a second has passed: exiting takes a moment."""
    deadline = time.monotonic() + 1
    while os_threads() != expected and time.monotonic() < deadline:
        time.sleep(0.001)
    return os_threads()


def fail_in_children(monkeypatch: Any, owner: object, name: str) -> None:
    """Make ``owner.name`` raise in any forked child of this process, and work as ever in it."""
    parent = os.getpid()
    real = getattr(owner, name)

    def failing(*args: Any, **kwargs: Any) -> Any:
        if os.getpid() != parent:
            raise OSError(f"{name} fails in a forked child")
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, failing)


def offline(wheels: Path) -> dict[str, str]:
    """pip and uv, as ``fix`` runs them (those beside this interpreter), find wheels in ``wheels`` only;
    the machine's pip and uv config is ignored."""
    return {
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "UV_NO_CONFIG": "1",
        "UV_OFFLINE": "1",
        "UV_FIND_LINKS": str(wheels),
        "UV_PYTHON_DOWNLOADS": "never",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }

"""Lock files: ``pylock.toml``/``pylock.NAME.toml`` (PEP 751) and ``uv.lock``, read and selected.

Pure but for reading the file: the lock's text and a :class:`LockTarget` give the
packages the lock installs there, each with its wheels and the one an installer would
pick. A lock that cannot be used is one :class:`LockError` line naming the key.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import Any

from wheeldoctor.formats.lock_model import Lock, LockedPackage, LockedWheel, LockError, LockTarget

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

__all__ = ["Lock", "LockError", "LockTarget", "LockedPackage", "LockedWheel", "is_lock_path", "read_lock"]

_LOCK_LIMIT = 64 << 20
#: A project's pyproject.toml, read beside a uv.lock for its default groups.
_PYPROJECT_LIMIT = 1 << 20
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def is_lock_path(path: str) -> str | None:
    """``pylock``, ``uv.lock`` or ``pip-report`` (``*.json``) by the file name (PEP 751 names), else None."""
    base = os.path.basename(path)
    if base == "uv.lock":
        return "uv.lock"
    if base == "pylock.toml" or (base.startswith("pylock.") and base.endswith(".toml") and base.count(".") == 2):
        return "pylock"
    if base.endswith(".json"):
        return "pip-report"
    return None


def read_lock(path: str, target: LockTarget) -> Lock:
    """Read the lock at ``path`` and select what it installs for ``target``."""
    kind = is_lock_path(path)
    if kind is None:
        raise LockError(f"{path}: not a lock file name (pylock.toml, pylock.NAME.toml, uv.lock, or a pip report .json)")
    data = _read_regular(path, _LOCK_LIMIT)
    if data is None:
        raise LockError(f"{path}: cannot be read (No such file or directory)")
    base = os.path.dirname(os.path.abspath(path))
    if kind == "pip-report":
        from wheeldoctor.formats.pip_report import select_pip_report

        packages, listed = select_pip_report(parse_json(path, data), base)
        return Lock(path=path, kind=kind, packages=packages, listed=listed)
    document = parse_toml(path, data)
    if kind == "uv.lock":
        from wheeldoctor.formats.uv_lock import select_uv_lock, uv_default_groups

        defaults = None
        if target.groups is None:
            project = os.path.join(base, "pyproject.toml")
            text = _read_regular(project, _PYPROJECT_LIMIT)
            defaults = uv_default_groups(parse_toml(project, text) if text is not None else None)
        packages, listed = select_uv_lock(document, target, base, defaults)
        return Lock(path=path, kind=kind, packages=packages, listed=listed)
    from wheeldoctor.formats.pylock import select_pylock

    packages, listed = select_pylock(document, target, base)
    return Lock(path=path, kind=kind, packages=packages, listed=listed)


def _read_regular(path: str, limit: int) -> bytes | None:
    """The bytes of the regular file ``path``, at most ``limit``; None when it does not exist.

    Checked to be a regular file before it is opened (a device is never opened), and opened
    without blocking, so that a FIFO in its place is one LockError line, never a hang.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise LockError(f"{path}: not a regular file")
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise LockError(f"{path}: cannot be read ({e.strerror or e})") from e
    chunks: list[bytes] = []
    total = 0
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise LockError(f"{path}: not a regular file")
        while total <= limit and (chunk := os.read(fd, min(limit + 1 - total, 1 << 20))):
            chunks.append(chunk)
            total += len(chunk)
    except OSError as e:
        raise LockError(f"{path}: cannot be read ({e.strerror or e})") from e
    finally:
        os.close(fd)
    if total > limit:
        raise LockError(f"{path}: larger than {limit >> 20} MiB")
    return b"".join(chunks)


def parse_toml(path: str, data: bytes) -> dict[str, Any]:
    """TOML bytes as a dict; bad UTF-8 or TOML is a LockError."""
    try:
        document: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise LockError(f"{path}: not UTF-8 (byte {e.start})") from e
    except tomllib.TOMLDecodeError as e:
        raise LockError(f"{path}: not valid TOML ({e})") from e
    except RecursionError:
        raise LockError(f"{path}: not valid TOML (nested too deeply)") from None
    return document


def parse_json(path: str, data: bytes) -> dict[str, Any]:
    """A JSON object from bytes; anything else is a LockError."""
    import json

    try:
        document = json.loads(data)
    except ValueError as e:
        raise LockError(f"{path}: not valid JSON ({e})") from e
    except RecursionError:
        raise LockError(f"{path}: not valid JSON (nested too deeply)") from None
    if not isinstance(document, dict):
        raise LockError(f"{path}: not a JSON object")
    return document

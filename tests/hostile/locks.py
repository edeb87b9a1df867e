"""Hand-written pylock.toml files for the lock attacks: each wheel's url, path, hash and size as the attacker likes."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import parse_wheel_filename


@dataclass(frozen=True)
class Entry:
    """One locked wheel: the file it stands for, and what the lock says of it."""

    wheel: Path
    url: str | None = None
    path: str | None = None
    size: bool | int = True
    """True: the wheel's real size; False: no ``size`` key; an int: that size."""
    sha256: str | None = None
    """None: the wheel's real sha256."""


def write_pylock(lock: Path, *entries: Entry) -> Path:
    """``lock`` as a pylock.toml with one package per entry (name and version from its file name)."""
    text = 'lock-version = "1.0"\ncreated-by = "hostile"\n'
    for entry in entries:
        name, version, _, _ = parse_wheel_filename(entry.wheel.name)
        needs_bytes = entry.size is True or entry.sha256 is None  # never read a FIFO or a sparse 50 GiB
        data = entry.wheel.read_bytes() if needs_bytes and entry.wheel.is_file() else b""
        fields = {"name": entry.wheel.name}
        if entry.url is not None:
            fields["url"] = entry.url
        if entry.path is not None:
            fields["path"] = entry.path
        inline = ", ".join(f"{k} = {json.dumps(v)}" for k, v in fields.items())
        if entry.size is not False:
            inline += f", size = {len(data) if entry.size is True else entry.size}"
        sha256 = entry.sha256 or hashlib.sha256(data).hexdigest()
        inline += f', hashes = {{ sha256 = "{sha256}" }}'
        text += f'\n[[packages]]\nname = "{name}"\nversion = "{version}"\nwheels = [{{ {inline} }}]\n'
    lock.write_text(text)
    return lock

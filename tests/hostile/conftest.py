"""The hostile suite: every attack of issue #28 rebuilt in a real venv, and every one that held.

Fixtures here install real wheels (uv and pip) and then play the attacker: rewrite
METADATA, RECORD or files in place, as anyone who can write site-packages could.
"""

from __future__ import annotations

import csv
import io
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import Venv, build_wheel, copy_venv, make_venv, pip_install, record_hash, uv_install

ALPHA = {
    "alpha/__init__.py": b"def main() -> None:\n    print('alpha')\n",
    "alpha/core.py": b"ANSWER = 42\n",
}
BETA = {"beta/__init__.py": b"BETA = True\n"}
ESC = "\x1b"


@dataclass(frozen=True)
class Planted:
    """A venv with alpha (uv) and beta (pip) installed, for an attack to rewrite."""

    venv: Venv

    @property
    def site(self) -> Path:
        return self.venv.site_packages

    def record(self, name: str) -> Path:
        return self.venv.dist_info(name) / "RECORD"

    def rows(self, name: str) -> list[list[str]]:
        return [r for r in csv.reader(io.StringIO(self.record(name).read_text(encoding="utf-8"))) if r]

    def write_rows(self, name: str, rows: list[list[str]]) -> None:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(rows)
        self.record(name).write_text(buf.getvalue(), encoding="utf-8")

    def rewrite(self, name: str, relative: str, data: bytes) -> None:
        """Write a file of ``name``'s dist-info and re-record it, as a careful attacker would."""
        info = self.venv.dist_info(name)
        (info / relative).write_bytes(data)
        wanted = f"{info.name}/{relative}"
        rows = self.rows(name)
        fixed = [[p, record_hash(data), str(len(data))] if p == wanted else [p, h, s] for p, h, s in rows]
        if wanted not in {r[0] for r in rows}:
            fixed.insert(0, [wanted, record_hash(data), str(len(data))])
        self.write_rows(name, fixed)

    def set_metadata(self, name: str, *, new_name: str | None = None, new_version: str | None = None) -> None:
        """Rewrite ``Name``/``Version`` of ``name``'s METADATA, RECORD kept consistent."""
        info = self.venv.dist_info(name)
        lines = (info / "METADATA").read_text(encoding="utf-8").splitlines()
        out = []
        for line in lines:
            if new_name is not None and line.startswith("Name:"):
                out.append(f"Name: {new_name}")
            elif new_version is not None and line.startswith("Version:"):
                out.append(f"Version: {new_version}")
            else:
                out.append(line)
        self.rewrite(name, "METADATA", ("\n".join(out) + "\n").encode("utf-8"))


@pytest.fixture(scope="session")
def planted_template(tmp_path_factory: pytest.TempPathFactory, uv_bin: Path, uv_cache: Path) -> Venv:
    """alpha installed by uv, beta by pip: built once, never changed (each attack gets a copy)."""
    root = tmp_path_factory.mktemp("planted")
    venv = make_venv(root / "venv", uv_bin=uv_bin, cache_dir=uv_cache)
    alpha = build_wheel(root / "wheels", "alpha", "1.0", ALPHA, console_scripts={"alpha": "alpha:main"})
    uv_install(venv, "--no-deps", alpha, uv_bin=uv_bin, cache_dir=uv_cache)
    pip_install(venv, "--no-index", "--no-deps", build_wheel(root / "wheels", "beta", "1.0", BETA))
    return venv


@pytest.fixture
def planted(planted_template: Venv, tmp_path: Path) -> Planted:
    """A fresh venv per attack (a copy of the template): alpha installed by uv, beta by pip."""
    return Planted(copy_venv(planted_template, tmp_path / "venv"))


def no_traceback(done: subprocess.CompletedProcess[str] | subprocess.CompletedProcess[bytes]) -> None:
    """Nothing a user sees may be a traceback or an internal error."""
    out = done.stdout + done.stderr
    text = out.decode("utf-8", "replace") if isinstance(out, bytes) else out
    assert "Traceback" not in text
    assert "internal error" not in text


Check = Callable[..., subprocess.CompletedProcess[str]]


def run_bytes(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """``python -m wheeldoctor ARGS`` with stdout and stderr as raw bytes (to judge their encoding)."""
    import os
    import sys

    return subprocess.run(
        [sys.executable, "-m", "wheeldoctor", *map(str, args)],
        capture_output=True,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )

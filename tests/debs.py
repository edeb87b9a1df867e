"""Real Debian packages for tests: built by dpkg-deb, installed by dpkg into a throwaway root.

Never the machine's own dpkg database: every install names ``--root`` and ``--admindir``
inside a test's temporary directory, as a mounted image would be inspected.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

needs_dpkg = pytest.mark.skipif(
    shutil.which("dpkg") is None or shutil.which("dpkg-deb") is None, reason="needs dpkg and dpkg-deb"
)


def build_deb(directory: Path, package: str, version: str, files: Mapping[str, bytes]) -> Path:
    """Build ``PACKAGE_VERSION_all.deb`` shipping ``files`` (paths relative to the root), md5sums computed."""
    tree = directory / f"{package}-tree"
    if tree.exists():
        shutil.rmtree(tree)
    (tree / "DEBIAN").mkdir(parents=True)
    for path, data in files.items():
        target = tree / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    control = f"Package: {package}\nVersion: {version}\nArchitecture: all\nMaintainer: t <t@example.org>\n"
    (tree / "DEBIAN" / "control").write_text(control + "Description: a test package\n")
    sums = "".join(f"{hashlib.md5(data).hexdigest()}  {path}\n" for path, data in files.items())
    (tree / "DEBIAN" / "md5sums").write_text(sums)
    deb = directory / f"{package}_{version}_all.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-b", tree, deb], check=True, capture_output=True)
    return deb


def admindir(root: Path) -> Path:
    """The admin directory of a throwaway dpkg root, created empty on first use."""
    admin = root / "var" / "lib" / "dpkg"
    if not (admin / "status").exists():
        (admin / "info").mkdir(parents=True, exist_ok=True)
        (admin / "updates").mkdir(exist_ok=True)
        (admin / "status").write_text("")
    return admin


def install_deb(root: Path, deb: Path, *, path_exclude: Sequence[str] = ()) -> None:
    """``dpkg -i`` into ``root`` with its own admin directory; never the machine's database."""
    admin = admindir(root)
    command = [
        "dpkg",
        "--force-not-root",
        "--force-script-chrootless",
        f"--root={root}",
        f"--admindir={admin}",
        "--log=/dev/null",
        *(f"--path-exclude={p}" for p in path_exclude),
        "-i",
        str(deb),
    ]
    subprocess.run(command, check=True, capture_output=True)

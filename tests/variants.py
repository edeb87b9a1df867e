"""A base wheel and an overlay that ship some of the same paths, as cutlass-dsl's libs do.

A few shared paths hold identical bytes, many hold different bytes (some of equal
size, so only the hash can tell), and each wheel has files of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from helpers import build_wheel

BASE = "demo-libs-base"
OVERLAY = "demo-libs-cu13"
VERSION = "4.5.0"
N_DIFFERENT = 24


def _variant_files(variant: str) -> dict[str, bytes]:
    files = {
        "demo_dsl/__init__.py": b"# shared namespace, identical in both\n",
        "demo_dsl/lib/README.txt": b"same bytes in both wheels\n",
        f"demo_dsl/{variant}_only.py": f"VARIANT = {variant!r}\n".encode(),
    }
    for i in range(N_DIFFERENT):
        if i % 2:
            # Equal sizes: only the hash separates the variants.
            files[f"demo_dsl/lib/lib{i:02d}.so"] = (variant[:4].upper() * 2048)[:8192].encode()
        else:
            files[f"demo_dsl/lib/lib{i:02d}.so"] = (f"{variant}-{i}-" * (300 + 40 * i)).encode()
    return files


FILES = {BASE: _variant_files("base"), OVERLAY: _variant_files("cu13")}
DIFFERING = sorted(p for p in FILES[BASE] if p in FILES[OVERLAY] and FILES[BASE][p] != FILES[OVERLAY][p])
IDENTICAL = sorted(p for p in FILES[BASE] if p in FILES[OVERLAY] and FILES[BASE][p] == FILES[OVERLAY][p])


@dataclass(frozen=True)
class Wheels:
    base: Path
    overlay: Path


def build_variant_wheels(out: Path) -> Wheels:
    """Build the base and the overlay wheel into ``out``."""
    return Wheels(
        build_wheel(out, BASE, VERSION, FILES[BASE]),
        # The overlay requires its base, as a CUDA variant layered over generic files does.
        build_wheel(out, OVERLAY, VERSION, FILES[OVERLAY], requires=[BASE]),
    )

"""A small CUDA-like stack of real objects, built by gcc, in real wheels with computed RECORDs.

Its libraries have the names the real ones have (``libcudart.so.12``, ``libcudart.so.13``)
and lie where the nvidia wheels put theirs; its extension modules find them by RUNPATH as
torch's do (``$ORIGIN/../nvidia/cu13/lib``). Every object appends its name to ``marker``
when anything loads it.
"""

from __future__ import annotations

import sysconfig
from dataclasses import dataclass
from pathlib import Path

from helpers import build_wheel
from native_objects import build_object, elf_bytes

EXT = sysconfig.get_config_var("EXT_SUFFIX") or ".cpython-311-x86_64-linux-gnu.so"


@dataclass(frozen=True)
class Stack:
    """The wheels, by what they stand for, and the marker file their objects write when loaded."""

    runtime12: Path
    """``wd-cuda-runtime-cu12`` 12.8.90: ``nvidia/cuda_runtime/lib/libcudart.so.12``."""
    runtime13: Path
    """``wd-cuda-runtime`` 13.0.96: ``nvidia/cu13/lib/libcudart.so.13`` (and cuSPARSE's ``.so.12``)."""
    torch13: Path
    """``wdtorch``: an extension needing libcudart.so.13 and libcusparse.so.12, by RUNPATH."""
    nixl12: Path
    """``wdnixl``: an extension needing libcudart.so.12, by RUNPATH into the cu12 wheel's directory."""
    app13: Path
    """``wdapp13``: an extension needing libcudart.so.13 alone, by RUNPATH into the cu13 wheel's directory."""
    plugins: Path
    """``wdplugins``: a plugin nothing needs, needing a library found nowhere; a foreign-arch
    object; a truncated ELF object; and an auditwheel-style extension whose grafted library
    finds its own dependency through the extension's RPATH."""
    marker: Path
    objects: dict[str, Path]
    """Every object built, by file name, as compiled (to load one on purpose)."""


def build_stack(root: Path) -> Stack:
    """Compile the objects under ``root/build`` and wrap them in wheels under ``root/wheels``."""
    marker = root / "loaded"
    build = root / "build"
    o: dict[str, Path] = {}
    o["libcudart.so.12"] = build_object(build / "12", "libcudart.so.12", marker=marker, soname="libcudart.so.12")
    o["libcudart.so.13"] = build_object(build / "13", "libcudart.so.13", marker=marker, soname="libcudart.so.13")
    o["libcusparse.so.12"] = build_object(
        build / "13",
        "libcusparse.so.12",
        marker=marker,
        soname="libcusparse.so.12",
        needs=[o["libcudart.so.13"]],
        runpath="$ORIGIN",
    )
    o["torch_C"] = build_object(
        build / "torch",
        f"_C{EXT}",
        marker=marker,
        needs=[o["libcudart.so.13"], o["libcusparse.so.12"]],
        runpath="$ORIGIN/../nvidia/cu13/lib",
    )
    o["nixl_ep"] = build_object(
        build / "nixl",
        f"_ep{EXT}",
        marker=marker,
        needs=[o["libcudart.so.12"]],
        runpath="$ORIGIN/../nvidia/cuda_runtime/lib",
    )
    o["app13"] = build_object(
        build / "app13",
        f"_app{EXT}",
        marker=marker,
        needs=[o["libcudart.so.13"]],
        runpath="$ORIGIN/../nvidia/cu13/lib",
    )
    o["libwdgone.so.1"] = build_object(build / "gone", "libwdgone.so.1", marker=marker, soname="libwdgone.so.1")
    o["plugin"] = build_object(
        build / "plugins",
        "libwd_transport.so.3",
        marker=marker,
        soname="libwd_transport.so.3",
        needs=[o["libwdgone.so.1"]],
    )
    o["libwdb.so.1"] = build_object(
        build / "libs", "libwdb-1a2b3c4d.so.1", marker=marker, soname="libwdb-1a2b3c4d.so.1"
    )
    o["libwda.so.1"] = build_object(
        build / "libs", "libwda-5e6f7a8b.so.1", marker=marker, soname="libwda-5e6f7a8b.so.1", needs=[o["libwdb.so.1"]]
    )
    o["audited"] = build_object(
        build / "audited", f"_audited{EXT}", marker=marker, needs=[o["libwda.so.1"]], rpath="$ORIGIN/../wdplugins.libs"
    )
    wheels = root / "wheels"
    read = {name: path.read_bytes() for name, path in o.items()}
    return Stack(
        runtime12=build_wheel(
            wheels,
            "wd-cuda-runtime-cu12",
            "12.8.90",
            {"nvidia/cuda_runtime/lib/libcudart.so.12": read["libcudart.so.12"]},
        ),
        runtime13=build_wheel(
            wheels,
            "wd-cuda-runtime",
            "13.0.96",
            {
                "nvidia/cu13/lib/libcudart.so.13": read["libcudart.so.13"],
                "nvidia/cu13/lib/libcusparse.so.12": read["libcusparse.so.12"],
            },
        ),
        torch13=build_wheel(
            wheels,
            "wdtorch",
            "1.0",
            {"wdtorch/__init__.py": b"", f"wdtorch/_C{EXT}": read["torch_C"]},
            requires=["wd-cuda-runtime"],
        ),
        nixl12=build_wheel(wheels, "wdnixl", "1.0", {"wdnixl/__init__.py": b"", f"wdnixl/_ep{EXT}": read["nixl_ep"]}),
        app13=build_wheel(wheels, "wdapp13", "1.0", {"wdapp13/__init__.py": b"", f"wdapp13/_app{EXT}": read["app13"]}),
        plugins=build_wheel(
            wheels,
            "wdplugins",
            "1.0",
            {
                "wdplugins/__init__.py": b"",
                "wdplugins/lib/libwd_transport.so.3": read["plugin"],
                "wdplugins/lib/libwd_arm64.so": elf_bytes(machine=183, needed=[b"libwdnowhere.so.9"]),
                "wdplugins/lib/libwd_cut.so.1": read["libwdgone.so.1"][:300],
                f"wdplugins/_audited{EXT}": read["audited"],
                "wdplugins.libs/libwda-5e6f7a8b.so.1": read["libwda.so.1"],
                "wdplugins.libs/libwdb-1a2b3c4d.so.1": read["libwdb.so.1"],
            },
        ),
        marker=marker,
        objects=o,
    )

"""The ``--python`` probe: the target interpreter, started with ``-I -S``, asked for its own paths.

Stdlib only and light to import: the command line starts the probe before it imports
anything else (see :mod:`wheeldoctor.cli`), so that the probe's start-up runs while the
rest of wheeldoctor is imported. :mod:`wheeldoctor.where.target` reads its answer.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys

# Runs inside the target interpreter, started with -I -S: stdlib only, valid on any Python 3.
# It runs no startup code of the environment: -S keeps site.main() from running (importing
# site under -S defines its functions and runs nothing), -I keeps PYTHONPATH, the user site
# and the working directory off sys.path. It reports the facts site.main() starts from; the
# .pth files are read by wheeldoctor itself (where/startup.py).
PROBE = r"""
import sys
sys.path[:] = [p for p in sys.path if p]
interpreter = list(sys.path)
import json, os, platform, site
impl = sys.implementation
iver = "{0.major}.{0.minor}.{0.micro}".format(impl.version)
if impl.version.releaselevel != "final":
    iver += impl.version.releaselevel[0] + str(impl.version.serial)
markers = {
    "implementation_name": impl.name,
    "implementation_version": iver,
    "os_name": os.name,
    "platform_machine": platform.machine(),
    "platform_release": platform.release(),
    "platform_system": platform.system(),
    "platform_version": platform.version(),
    "python_full_version": platform.python_version(),
    "platform_python_implementation": platform.python_implementation(),
    "python_version": ".".join(platform.python_version_tuple()[:2]),
    "sys_platform": sys.platform,
}
# site.venv(), without its addsitepackages(): a pyvenv.cfg beside the executable or one
# level up makes that directory the prefix.
prefixes = [sys.prefix, sys.exec_prefix]
site_dirs = []
enable_user = None
exe_dir = os.path.dirname(os.path.abspath(sys.executable))
site_prefix = os.path.dirname(exe_dir)
for conf in (os.path.join(exe_dir, "pyvenv.cfg"), os.path.join(site_prefix, "pyvenv.cfg")):
    if os.path.isfile(conf):
        system_site = "true"
        with open(conf, encoding="utf-8") as f:
            for line in f:
                if "=" in line:
                    key, _, value = line.partition("=")
                    if key.strip().lower() == "include-system-site-packages":
                        system_site = value.strip().lower()
        sys.prefix = sys.exec_prefix = site_prefix
        site_dirs += [[d, False] for d in site.getsitepackages([site_prefix])]
        if system_site == "true":
            prefixes.insert(0, site_prefix)
        else:
            prefixes = [site_prefix]
            enable_user = False
        break
# site.check_enableusersite(), with the flag a normal start would have (argv[1]).
if enable_user is None:
    enable_user = sys.argv[1] != "1"
    if hasattr(os, "getuid") and hasattr(os, "geteuid") and os.geteuid() != os.getuid():
        enable_user = False
    if hasattr(os, "getgid") and hasattr(os, "getegid") and os.getegid() != os.getgid():
        enable_user = False
user_site = site.getusersitepackages()
if enable_user:
    site_dirs.append([user_site, True])
site_dirs += [[d, False] for d in site.getsitepackages(prefixes)]
tags = None
if len(sys.argv) > 3 and sys.argv[2] == "--tags":
    # Only now, with sys.path captured above: our packaging computes the target's tags.
    sys.path.insert(0, sys.argv[3])
    try:
        from packaging.tags import sys_tags
        tags = [str(t) for t in sys_tags()]
    except Exception:  # too old a Python for our packaging: the tags stay unknown
        tags = None
import sysconfig
print(json.dumps({
    "executable": sys.executable,
    "version": list(sys.version_info[:2]),
    "user_site": bool(enable_user),
    "interpreter": interpreter,
    "site_dirs": site_dirs,
    "stdlib": sysconfig.get_path("stdlib"),
    "venv": sys.prefix != getattr(sys, "base_prefix", sys.prefix),
    "prefixes": [p for p in (sys.prefix, sys.exec_prefix, getattr(sys, "base_prefix", ""),
                 getattr(sys, "base_exec_prefix", ""), site.getuserbase()) if p],
    "markers": markers,
    "tags": tags,
}))
"""


#: Probes started ahead (see :func:`start`), by interpreter and whether tags were asked for.
started: dict[tuple[str, bool], subprocess.Popen[str]] = {}


def start(python: str, with_tags: bool = False) -> None:
    """Start the probe of ``python`` now, for ``target.load_target`` to collect.

    The probe is a new process: started ahead, it runs while the command imports what it needs. Nothing is started
    where the interpreter cannot be run (``load_target`` then says why).
    """
    python = resolved(python)
    if runnable(python) and (python, with_tags) not in started:
        with contextlib.suppress(OSError):
            started[(python, with_tags)] = spawn(python, with_tags and not own_build(python))


def own_build(python: str) -> bool:
    """Whether ``python`` is the very file this process runs (links followed: a venv's ``bin/python``
    is one); its wheel tags are then this process's own, once its answer agrees (see ``target``)."""
    try:
        return bool(sys.executable) and os.path.samefile(python, sys.executable)
    except (OSError, ValueError):
        return False


def resolved(python: str) -> str:
    """``--python`` as given, or a bare name looked up on PATH."""
    if not os.path.exists(python) and os.sep not in python:
        import shutil

        return shutil.which(python) or python
    return python


def runnable(python: str) -> bool:
    """Whether ``python`` is a file this process may execute."""
    return os.path.isfile(python) and os.access(python, os.X_OK)


def spawn(python: str, with_tags: bool) -> subprocess.Popen[str]:
    """The probe of ``python``, running; its answer is one JSON line on stdout."""
    # -I hides PYTHONNOUSERSITE from the probe's sys.flags; site would have read it.
    # -B: the target imports our packaging, and must not leave its byte-code in our install.
    no_user_site = "1" if os.environ.get("PYTHONNOUSERSITE") else "0"
    return subprocess.Popen(
        [python, "-I", "-S", "-B", "-c", PROBE, no_user_site, *(["--tags", _packaging_dir()] if with_tags else [])],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _packaging_dir() -> str:
    """The directory that holds our ``packaging``, for the probe to import it from."""
    import packaging

    return os.path.dirname(os.path.dirname(os.path.abspath(packaging.__file__)))

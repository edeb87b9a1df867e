"""The registry of common, benign start-up hooks: data, matched by file name and by content.

A hook is ``known`` only when both its file name and every line of code it runs match an
entry: naming a file ``distutils-precedence.pth`` is not enough to pass as setuptools'
shim. Path lines are never code and are not matched. To add an entry, give the file name
pattern (``fnmatch``), one regular expression that each executing line must match whole,
and where the hook is documented. Known hooks are reported as information and fail nothing.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

# Python identifiers as installers spell generated module names.
_ID = r"[A-Za-z_][A-Za-z0-9_]*"
# One quoted package name, as repr() writes it.
_PKG = r"'[A-Za-z_][A-Za-z0-9_.]*'"


@dataclass(frozen=True, slots=True)
class KnownHook:
    """One benign hook: which files, which code, and who documents it."""

    name: str
    """What the JSON ``known`` field says."""
    files: str
    """``fnmatch`` pattern for the file name."""
    code: str
    """Regular expression every executing line (or, for a module, its whole text) must match."""
    source: str


def _nspkg() -> str:
    # setuptools' namespace-package template (setuptools/namespaces.py, _nspkg_tmpl and
    # _nspkg_tmpl_multi): statements joined with ';', the package names as repr() writes them.
    parts = (
        r"import sys, types, os",
        r"has_mfs = sys\.version_info > \(3, 5\)",
        rf"p = os\.path\.join\(sys\._getframe\(1\)\.f_locals\['sitedir'\], \*\({_PKG}(, {_PKG})*,?\)\)",
        r"importlib = has_mfs and __import__\('importlib\.util'\)",
        r"has_mfs and __import__\('importlib\.machinery'\)",
        rf"m = has_mfs and sys\.modules\.setdefault\({_PKG}, importlib\.util\.module_from_spec\("
        rf"importlib\.machinery\.PathFinder\.find_spec\({_PKG}, \[os\.path\.dirname\(p\)\]\)\)\)",
        rf"m = m or sys\.modules\.setdefault\({_PKG}, types\.ModuleType\({_PKG}\)\)",
        r"mp = \(m or \[\]\) and m\.__dict__\.setdefault\('__path__',\[\]\)",
        r"\(p not in mp\) and mp\.append\(p\)",
    )
    return ";".join(parts) + rf"(;m and setattr\(sys\.modules\[{_PKG}\], {_PKG}, m\))?"


KNOWN_HOOKS: tuple[KnownHook, ...] = (
    KnownHook(
        "setuptools distutils shim",
        "distutils-precedence.pth",
        r"import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os\.environ\.get\(var, '(local|stdlib)'\) == "
        r"'local'; enabled and __import__\('_distutils_hack'\)\.add_shim\(\); ?",
        "setuptools: _distutils_hack (pypa/setuptools, setup.py's distutils-precedence.pth)",
    ),
    KnownHook(
        "setuptools editable finder",
        "__editable__.*.pth",
        rf"import (__editable___{_ID}_finder); \1\.install\(\)",
        "setuptools: PEP 660 editable installs (setuptools/command/editable_wheel.py)",
    ),
    KnownHook(
        "editables redirector",
        "*.pth",
        rf"import _editable_impl_{_ID}",
        "editables (hatchling's dev-mode-exact): EditableProject.pth_file()",
    ),
    KnownHook(
        "setuptools namespace package",
        "*-nspkg.pth",
        _nspkg(),
        "setuptools: namespace_packages= (setuptools/namespaces.py)",
    ),
    KnownHook(
        "virtualenv",
        "_virtualenv.pth",
        r"import _virtualenv",
        "virtualenv: the _virtualenv.pth/_virtualenv.py pair it writes into every environment",
    ),
    KnownHook(
        "coverage subprocess measurement",
        "*.pth",
        r"import coverage; coverage\.process_startup\(\)",
        "coverage.py: 'Measuring subprocesses' (its docs, and subcover.pth of [run] patch = subprocess)",
    ),
    KnownHook(
        "coverage start-up hook",
        "a1_coverage.pth",
        # Shipped in coverage's own wheels (7.16.2 as measured): it measures only when
        # COVERAGE_PROCESS_START or COVERAGE_PROCESS_CONFIG is set, and does nothing otherwise.
        re.escape(
            "import sys; exec('import os\\n\\n"
            'if os.getenv("COVERAGE_PROCESS_START") or os.getenv("COVERAGE_PROCESS_CONFIG"):\\n'
            " try:\\n  import coverage\\n except:\\n  pass\\n else:\\n"
            """  coverage.process_startup(slug="pth")')"""
        ),
        "coverage.py: 'Measuring subprocesses'; a1_coverage.pth in its wheels",
    ),
    KnownHook(
        "Debian apport hook",
        "sitecustomize.py",
        r"# install the apport exception handler if available\ntry:\n    import apport_python_hook\n"
        r"except ImportError:\n    pass\nelse:\n    apport_python_hook\.install\(\)\n?",
        "Debian/Ubuntu: /etc/python3.X/sitecustomize.py of libpython3.X-minimal",
    ),
)


def known_pth(file_name: str, executing: tuple[str, ...]) -> KnownHook | None:
    """The entry a .pth file matches: its name, and every line it runs; None if none does."""
    if not executing:
        return None
    for hook in KNOWN_HOOKS:
        if fnmatch.fnmatchcase(file_name, hook.files) and all(re.fullmatch(hook.code, line) for line in executing):
            return hook
    return None


def known_module(file_name: str, text: str) -> KnownHook | None:
    """The entry a ``sitecustomize``/``usercustomize`` module matches, by name and whole text."""
    for hook in KNOWN_HOOKS:
        if fnmatch.fnmatchcase(file_name, hook.files) and re.fullmatch(hook.code, text):
            return hook
    return None

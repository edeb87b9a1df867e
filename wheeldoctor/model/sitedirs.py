"""Site-directory rules shared by the gate and the inventory: names, roots, containment.

Path algebra on strings, but for :func:`locations` and :func:`prefix_forms`, which resolve
symlinks. Stdlib ``os`` and ``sys`` only, and no ``re``: the gate imports this on its warm
path, where every module imported counts.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing costs the gate's warm path to import
if TYPE_CHECKING:
    from collections.abc import Iterable


def lookup_key(name: str) -> str:
    """Normalise a name for matching metadata directories, exactly as importlib.metadata does.

    That rule (runs of ``-_.`` to one ``_``, lower case) is the stdlib's own lookup rule;
    the gate does not import packaging for it. Tests hold it equal to
    both ``importlib.metadata.Prepared.normalize`` and packaging's canonical form.
    """
    key = name.lower().replace("-", "_").replace(".", "_")
    while "__" in key:
        key = key.replace("__", "_")
    return key


def is_within(path: str, root: str) -> bool:
    """Whether normalised absolute ``path`` is ``root`` or below it."""
    if root == os.sep:
        return path.startswith(os.sep)
    return path == root or path.startswith(root + os.sep)


def plain_prefix(location: str, root: str) -> str | None:
    """``location`` and a separator, for joining plain paths (see :func:`is_plain`) by concatenation.

    None unless ``location`` is already normal and inside ``root``: only then is a plain
    relative path below it normal and inside too, with no ``normpath`` per path.
    """
    prefix = location.rstrip(os.sep) + os.sep
    if os.sep == "/" and os.path.normpath(prefix) + os.sep == prefix and is_within(prefix[:-1] or os.sep, root):
        return prefix
    return None


def is_plain(relative: str) -> bool:
    """Whether a RECORD path is plainly relative: no ``.`` or ``..`` part, no leading, doubled or trailing slash."""
    return not (relative[:1] in "./" or "/." in relative or "//" in relative or relative[-1:] == "/")


def root_for(location: str, prefixes: Iterable[str]) -> str:
    """The environment root of a site directory: the deepest prefix that holds it.

    Without a matching prefix, a ``PREFIX/lib/pythonX.Y/site-packages`` layout gives
    PREFIX; anything else is its own root.
    """
    best = ""
    for prefix in prefixes:
        if is_within(location, prefix) and len(prefix) > len(best):
            best = prefix
    if best:
        return best
    head, leaf = os.path.split(location)
    if leaf in ("site-packages", "dist-packages"):
        lib, pyver = os.path.split(head)
        prefix, libname = os.path.split(lib)
        if pyver.startswith("python") and libname in ("lib", "lib64"):
            return prefix
        if os.path.basename(head).lower() == "lib":  # Windows: PREFIX\Lib\site-packages
            return os.path.dirname(head)
    return location


def dir_prefix(location: str) -> str:
    """``location`` with one trailing separator: what a recorded relative path is appended to."""
    return location.rstrip(os.sep) + os.sep


def resolve_recorded(text: str, prefix: str, location: str, root: str) -> str | None:
    """Where RECORD's path ``text`` of a distribution in ``location`` (``prefix``: its
    :func:`dir_prefix`) lands; None when that is outside ``root``. Concatenation rather than
    ``os.path.join``: this runs once per recorded file that is not plain.
    """
    normpath, isabs = os.path.normpath, os.path.isabs
    path = resolved(text, prefix)
    if not is_within(path, root) and root == location and not isabs(text):
        # `pip install --target DIR` installs through a staging --home whose purelib is
        # HOME/lib/python, so its RECORD says ../../bin/x for what lands in DIR/bin/x.
        staged = normpath(prefix + "lib/python/" + text)
        if is_within(staged, root):
            path = staged
    return path if is_within(path, root) else None


def resolved(text: str, prefix: str) -> str:
    """RECORD's path ``text`` made absolute against ``prefix`` (a :func:`dir_prefix`) and normalised."""
    return os.path.normpath(text if os.path.isabs(text) else prefix + text)


def below(path: str, directory: str) -> str:
    """``path`` relative to ``directory``, as RECORD names a file below its site directory."""
    return os.path.relpath(path, directory)


def is_site_packages(path: str) -> bool:
    """Whether ``path`` is named as a site directory is (``site-packages``, ``dist-packages``)."""
    return os.path.basename(path) in ("site-packages", "dist-packages")


def install_target(target: str, site: str, scripts: str) -> str | None:
    """Where a wheel member installs: ``<scripts>/x`` below ``scripts``, a plain path below ``site``;
    None for headers and data, which land under the prefix in scheme-specific places."""
    if target.startswith("<scripts>/"):
        return os.path.normpath(os.path.join(scripts, target.removeprefix("<scripts>/")))
    if target.startswith("<"):
        return None
    return os.path.normpath(os.path.join(site, target))


def scripts_dir(root: str) -> str:
    """The directory console scripts of the environment rooted at ``root`` go to."""
    return os.path.join(root, "bin")


def locations(paths: Iterable[str]) -> list[str]:
    """Each directory of ``paths`` once, as given (absolute), not resolved: the first spelling of each real path.

    Installers write RECORD's "../../../bin" paths from the name Python uses, and through a
    symlinked site-packages the two differ; the resolved form only tells two spellings apart.
    """
    by_real: dict[str, str] = {}
    for path in paths:
        if path:
            by_real.setdefault(os.path.realpath(path), os.path.abspath(path))
    return list(by_real.values())


def prefix_forms(prefixes: Iterable[str]) -> list[str]:
    """Each prefix both as given and with symlinks resolved, so either spelling of a site dir matches."""
    forms: dict[str, None] = {}
    for prefix in prefixes:
        if prefix:
            forms[os.path.abspath(prefix)] = None
            forms[os.path.realpath(prefix)] = None
    return list(forms)


def current_prefixes() -> list[str]:
    """The prefixes of the running interpreter, the user base included."""
    site = sys.modules.get("site")
    user_base = getattr(site, "USER_BASE", None) if site is not None else None
    return [p for p in (sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix, user_base) if p]

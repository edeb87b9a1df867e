"""The registry of common, benign start-up hooks, matched by owner, file name and every line run.

The registry is data: ``wheeldoctor/model/known_hooks.toml`` as shipped, plus the
``[[tool.wheeldoctor.known-hook]]`` entries of the config. A hook is ``known`` only when
its owner is one the entry names, its file name matches and every line of code it runs
(each import line of a ``.pth``, each entry point of a ``.start``, the whole text of a
``sitecustomize``) is an instance of one of the entry's templates
(:mod:`wheeldoctor.formats.hook_template`). Naming a file ``distutils-precedence.pth``
is not enough to pass as setuptools' shim, and neither is a copy of the shim that some
other distribution ships. The hooks build backends write into editable wheels are known
only for an owner installed editable (``editable = true``), and their file name must
name the module their line imports. Known hooks are reported as information and fail nothing.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterable, Sequence

from wheeldoctor.formats.hook_template import KnownHook, hook_from

#: The shipped registry's file, beside the model it belongs to.
REGISTRY = ("wheeldoctor.model", "known_hooks.toml")


def registry_text() -> bytes:
    """The shipped registry's bytes, read by the package's own loader (a folder or a zip alike).

    ``importlib.resources`` would do the same, at the cost of importing ``pathlib``,
    ``zipfile``, ``tempfile`` and ``urllib.parse`` on every run that meets a hook.
    """
    import pkgutil

    data = pkgutil.get_data(*REGISTRY)
    if data is None:  # a loader that cannot read files
        raise FileNotFoundError(f"{'/'.join(REGISTRY)}: the package's loader cannot read it")
    return data


def parse_registry(data: bytes) -> tuple[KnownHook, ...]:
    """The registry's entries from its TOML bytes, each validated (:func:`hook_from`)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

    entries = tomllib.loads(data.decode("utf-8"))["hook"]
    return tuple(hook_from(e, f"known_hooks.toml hook[{i}]") for i, e in enumerate(entries))


@functools.cache
def shipped() -> tuple[KnownHook, ...]:
    """The registry wheeldoctor ships (``model/known_hooks.toml``), read once a process, where a hook runs code."""
    return parse_registry(registry_text())


def find_known(
    kind: str,
    file_name: str,
    owner: str | None,
    lines: Sequence[str],
    extra: Iterable[KnownHook] = (),
    registry: Sequence[KnownHook] | None = None,
    *,
    editable: bool | None = False,
) -> KnownHook | None:
    """The first entry (the config's, then ``registry``, by default the shipped one) that a hook matches.

    None if none does; a hook that runs no line matches none, and the registry is then not read.
    ``editable``: whether ``owner`` is installed editable (:mod:`wheeldoctor.where.hooks` says how
    that is told); the entries that need it match nothing without it. None matches on the file
    alone, as if it were: a caller must ask for that.
    """
    if not lines:
        return None
    for hook in (*extra, *(shipped() if registry is None else registry)):
        if hook.matches(kind, file_name, owner, lines, editable=editable):
            return hook
    return None


def known_pth(
    file_name: str,
    executing: Sequence[str],
    owner: str | None,
    extra: Iterable[KnownHook] = (),
    registry: Sequence[KnownHook] | None = None,
    *,
    editable: bool | None = False,
) -> KnownHook | None:
    """The entry a .pth file matches: its owner, its name and every import line; None if none does."""
    return find_known("pth", file_name, owner, executing, extra, registry, editable=editable)


def known_start(
    file_name: str,
    entry_points: Sequence[str],
    owner: str | None,
    extra: Iterable[KnownHook] = (),
    registry: Sequence[KnownHook] | None = None,
    *,
    editable: bool | None = False,
) -> KnownHook | None:
    """The entry a PEP 829 .start file matches: its owner, its name and every entry point line."""
    return find_known("start", file_name, owner, entry_points, extra, registry, editable=editable)


def known_module(
    file_name: str,
    text: str,
    owner: str | None,
    extra: Iterable[KnownHook] = (),
    registry: Sequence[KnownHook] | None = None,
    *,
    editable: bool | None = False,
) -> KnownHook | None:
    """The entry a ``sitecustomize``/``usercustomize`` module matches, by owner, name and whole text."""
    return find_known("module", file_name, owner, (text,), extra, registry, editable=editable)

"""Symbolic links below the environment's directories, and where they resolve.

RECORD's paths are judged lexically (``../`` and absolute paths are refused); a link on
disk can still take a recorded path elsewhere. This module finds the recorded paths that
pass through one, unfollowed, and resolves them; :mod:`wheeldoctor.judge.links` decides
which leave the environment.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from wheeldoctor.where.fingerprint import Read

#: uv's cache keeps unpacked wheels under this folder; its root holds CACHEDIR.TAG.
_UV_ARCHIVE = "archive-v0"


def through_links(
    paths: Sequence[str],
    base: str,
    unproven: Iterable[str] = (),
    *,
    directories: bool = True,
    read: Read | None = None,
) -> dict[str, str]:
    """For each of ``paths`` below ``base`` that a symbolic link takes elsewhere: path -> where it resolves.

    A path leaves only if it, or a directory between ``base`` and it, is a link. Each
    distinct directory is ``lstat``-ed once (far fewer than files); a file itself only
    if it is in ``unproven``: the others were seen as regular files by an ``lstat``
    already (the workers' proofs, the cache's verdict). Only the links found are
    resolved (a loop or a dangling link as far as ``realpath`` gets).

    ``directories=False``: the caller knows no directory on the way is a link (a kept
    memo), so only ``unproven`` is looked at.
    ``read`` notes, before each directory is ``lstat``-ed, the fingerprint of the
    directory holding it: while those are unchanged, so is the kind of every entry
    they list (see :class:`wheeldoctor.engine.store.Memo`).
    """
    prefix = base.rstrip(os.sep) + os.sep
    linked: dict[str, bool] = {prefix[:-1]: False}
    found: dict[str, str] = {}
    sep, top = os.sep, prefix[:-1]
    below = (
        {head for head in {path.rpartition(sep)[0] for path in paths} if head.startswith(prefix) or head == top}
        if directories
        else ()
    )
    if any(_below_link(head, linked, read) for head in below):  # else no directory is a link: the common case
        for path in paths:
            head = path.rpartition(sep)[0]
            if head in below and _below_link(head, linked, read):
                found[path] = os.path.realpath(path)
    for path in unproven:
        if path not in found and path.startswith(prefix) and _is_link(path):
            found[path] = os.path.realpath(path)
    return found


def _below_link(directory: str, linked: dict[str, bool], read: Read | None = None) -> bool:
    """Whether ``directory`` or one of its parents up to the base (``linked``'s seed) is a link; memoised.

    With ``read``, each directory's parent is noted before the directory is ``lstat``-ed.
    """
    known = linked.get(directory)
    if known is not None:
        return known
    climb = [directory]
    parent = os.path.dirname(directory)
    while (known := linked.get(parent)) is None and parent != climb[-1]:
        climb.append(parent)
        parent = os.path.dirname(parent)
    answer = bool(known)
    for here in reversed(climb):  # from the top down: below a link is linked
        if not answer and read is not None:
            read.note(os.path.dirname(here))
        answer = answer or _is_link(here)
        linked[here] = answer
    return answer


def _is_link(path: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def real_roots(roots: Iterable[str]) -> tuple[str, ...]:
    """The roots as given and as their links resolve (a venv under a linked /home is still itself)."""
    return tuple(dict.fromkeys(p for root in roots for p in (os.path.abspath(root), os.path.realpath(root))))


def in_uv_cache(target: str) -> bool:
    """Whether ``target`` lies in a uv cache's unpacked wheels (uv's symlink link mode points there)."""
    parts = target.split(os.sep)
    if _UV_ARCHIVE not in parts:
        return False
    cache_root = os.sep.join(parts[: parts.index(_UV_ARCHIVE)])
    return os.path.isfile(os.path.join(cache_root, "CACHEDIR.TAG"))

"""Symbolic links below the environment's directories, and where they resolve.

RECORD's paths are judged lexically (``../`` and absolute paths are refused); a link on
disk can still take a recorded path elsewhere. This module finds the links, unfollowed,
and resolves them; :mod:`wheeldoctor.judge.links` decides which leave the environment.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

#: uv's cache keeps unpacked wheels under this folder; its root holds CACHEDIR.TAG.
_UV_ARCHIVE = "archive-v0"


def links_below(directories: Iterable[str]) -> dict[str, str]:
    """Every symbolic link under ``directories`` (walked, links never followed): link -> resolved target.

    Also the directories' own entries in ``bin``/``Scripts`` beside them are the caller's
    to name. A loop or a dangling link resolves as far as ``realpath`` gets.
    """
    found: dict[str, str] = {}
    stack = [d for d in dict.fromkeys(directories) if os.path.isdir(d)]
    while stack:
        here = stack.pop()
        try:
            entries = os.scandir(here)
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    if entry.is_symlink():
                        found[entry.path] = os.path.realpath(entry.path)
                    elif entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                except OSError:
                    continue
    return found


def real_roots(roots: Iterable[str]) -> tuple[str, ...]:
    """The roots as given and as their links resolve (a venv under a linked /home is still itself)."""
    return tuple(dict.fromkeys(p for root in roots for p in (os.path.abspath(root), os.path.realpath(root))))


def through_links(paths: Iterable[str], links: Mapping[str, str]) -> dict[str, str]:
    """For each of ``paths`` that is a link in ``links`` or lies below one: path -> where it resolves."""
    if not links:
        return {}
    found: dict[str, str] = {}
    for path in paths:
        probe = path
        while True:
            if probe in links:
                found[path] = os.path.realpath(path) if probe != path else links[probe]
                break
            parent = os.path.dirname(probe)
            if parent == probe:
                break
            probe = parent
    return found


def in_uv_cache(target: str) -> bool:
    """Whether ``target`` lies in a uv cache's unpacked wheels (uv's symlink link mode points there)."""
    parts = target.split(os.sep)
    if _UV_ARCHIVE not in parts:
        return False
    cache_root = os.sep.join(parts[: parts.index(_UV_ARCHIVE)])
    return os.path.isfile(os.path.join(cache_root, "CACHEDIR.TAG"))

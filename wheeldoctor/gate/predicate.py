"""The runtime gate: ``is_intact(name)``, for code that must pick a fallback kernel.

Importing this module costs almost nothing: it binds a lock and a dict. The first call
for a name finds the distribution exactly as ``importlib.metadata`` would on the current
``sys.path``. If the persistent cache (:mod:`wheeldoctor.engine.cache`) holds an intact verdict
for its RECORD and every recorded file still has the fingerprint it had when verified,
the answer is True at the cost of one stat per file and no heavy import. Otherwise every
recorded file is checked: by :mod:`wheeldoctor.gate.quick`, with the standard library alone,
when RECORD is plain (nearly always), else by the full verifier; either writes back what
matched. A False answer is never cached across processes: a repaired install is seen at
once. Answers are also kept per process, per name and per ``sys.path``: a path changed
after a warm-up (a site dir added, a venv activated) is another environment and gets its
own answer.
"""

from __future__ import annotations

import _thread
import os
import sys

from wheeldoctor.model.sitedirs import current_prefixes, lookup_key, prefix_forms, root_for


class IntactGate:
    """``is_intact(name) -> bool``: True only if every file the distribution recorded is intact.

    False when the distribution is not installed, has no RECORD, or any recorded file is
    missing, modified or unreadable. Thread-safe: concurrent callers asking about one
    name wait for a single computation. No output, no threads left, and nothing written
    outside the cache directory (see :mod:`wheeldoctor.engine.cache`).
    """

    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()
        self._answers: dict[tuple[str, tuple[str, ...], str], bool] = {}
        self._pending: dict[tuple[str, tuple[str, ...], str], _thread.LockType] = {}
        self._generation = 0
        self._fork_safe = False

    def __call__(self, name: str) -> bool:
        """Whether distribution ``name`` is installed and every recorded file matches."""
        if not isinstance(name, str):
            raise TypeError(f"is_intact() wants a distribution name, not {type(name).__name__}")
        search_path = tuple(sys.path)
        key = (lookup_key(name), search_path, _cwd_if_relative(search_path))
        with self._lock:
            answer = self._answers.get(key)
            if answer is not None:
                return answer
            if not self._fork_safe:
                # A fork while another thread holds a lock would leave the child stuck.
                os.register_at_fork(after_in_child=self._after_fork)
                self._fork_safe = True
            pending = self._pending.setdefault(key, _thread.allocate_lock())
        with pending:
            with self._lock:
                answer = self._answers.get(key)
                generation = self._generation
            if answer is None:
                answer = _check(key[0], search_path)
                with self._lock:
                    # A cache_clear() during the check makes this answer stale: return it, keep it not.
                    if generation == self._generation:
                        self._answers[key] = answer
                    self._pending.pop(key, None)
        return answer

    def cache_clear(self) -> None:
        """Forget every answer; the next call checks the files again."""
        with self._lock:
            self._answers.clear()
            self._generation += 1

    def _after_fork(self) -> None:
        self._lock = _thread.allocate_lock()
        self._pending = {}


def _cwd_if_relative(search_path: tuple[str, ...]) -> str:
    """The working directory when ``sys.path`` has relative entries ('' included), else ''."""
    if all(os.path.isabs(entry) for entry in search_path):
        return ""
    try:
        return os.getcwd()
    except OSError:  # deleted under us: relative entries then find nothing anyway
        return ""


def _check(key: str, search_path: tuple[str, ...]) -> bool:
    found = locate(key, search_path)
    if found is None:
        return False
    location, dist_path = found
    root = root_for(location, prefix_forms(current_prefixes()))
    from wheeldoctor.engine import cache, store

    cache_dir = store.directory()
    if cache_dir is not None and cache.verdict_holds(cache_dir, dist_path, root):
        return True
    return _verify(key, location, dist_path, root, cache_dir)


def _verify(key: str, location: str, dist_path: str, root: str, cache_dir: str | None) -> bool:
    """The cold path: the standard library alone for a plain RECORD, else the full verifier."""
    from wheeldoctor.gate import quick

    answer = quick.check(dist_path, location, root, cache_dir)
    if answer is not None:
        return answer
    from wheeldoctor.engine.verify import verify
    from wheeldoctor.judge.files import Status
    from wheeldoctor.model.environment import MetadataDir
    from wheeldoctor.where.environment import load_distribution

    dist = load_distribution(MetadataDir(dist_path, location, key), root, read_metadata=False)
    return verify([dist], cache_dir=cache_dir)[0].status is Status.INTACT


def locate(key: str, search_path: tuple[str, ...]) -> tuple[str, str] | None:
    """(site directory, metadata directory) of the first distribution ``key`` on ``search_path``.

    The first in ``sys.path`` order, then in directory order, exactly as
    ``importlib.metadata`` and ``environment.scan_location`` see them.
    """
    for entry in search_path:
        # importlib.metadata reads '' as the current directory.
        try:
            with os.scandir(entry or ".") as entries:
                names = [e.name for e in entries]
        except (OSError, ValueError):
            continue
        for name in names:
            if (
                name.lower().endswith((".dist-info", ".egg-info"))
                and lookup_key(name.rpartition(".")[0].partition("-")[0]) == key
            ):
                # As given, not resolved: installers write RECORD's ../ paths from this name.
                location = os.path.abspath(entry or ".")
                return location, os.path.join(location, name)
    return None


is_intact = IntactGate()

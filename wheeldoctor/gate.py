"""The runtime gate: ``is_intact(name)``, for code that must pick a fallback kernel.

Importing this module costs almost nothing: it binds a lock and a dict. The first call
for a name imports the verifier, finds the distribution exactly as ``importlib.metadata``
would on the current ``sys.path``, and checks every recorded file. Answers are cached
per process, per name and per ``sys.path``: a path changed after a warm-up (a site dir
added, a venv activated) is another environment and gets its own answer.
"""

from __future__ import annotations

import _thread
import os
import sys


class IntactGate:
    """``is_intact(name) -> bool``: True only if every file the distribution recorded is intact.

    False when the distribution is not installed, has no RECORD, or any recorded file is
    missing, modified or unreadable. Thread-safe: concurrent callers asking about one
    name wait for a single computation. No output, no files written, no threads left.
    """

    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()
        self._answers: dict[tuple[str, tuple[str, ...]], bool] = {}
        self._pending: dict[tuple[str, tuple[str, ...]], _thread.LockType] = {}
        self._fork_safe = False

    def __call__(self, name: str) -> bool:
        """Whether distribution ``name`` is installed and every recorded file matches."""
        if not isinstance(name, str):
            raise TypeError(f"is_intact() wants a distribution name, not {type(name).__name__}")
        from wheeldoctor.environment import lookup_key

        key = (lookup_key(name), tuple(sys.path))
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
            if answer is None:
                answer = _check(key[0], key[1])
                with self._lock:
                    self._answers[key] = answer
                    self._pending.pop(key, None)
        return answer

    def cache_clear(self) -> None:
        """Forget every answer; the next call checks the files again."""
        with self._lock:
            self._answers.clear()

    def _after_fork(self) -> None:
        self._lock = _thread.allocate_lock()
        self._pending = {}


def _check(key: str, search_path: tuple[str, ...]) -> bool:
    from wheeldoctor.environment import current_prefixes, load_distribution, root_for, scan_location
    from wheeldoctor.verify import Status, verify

    prefixes = [os.path.realpath(p) for p in current_prefixes()]
    for entry in search_path:
        # importlib.metadata reads '' as the current directory.
        location = os.path.realpath(entry or ".")
        for found in scan_location(location):
            if found.key == key:
                dist = load_distribution(found, root_for(location, prefixes), read_metadata=False)
                return verify([dist])[0].status is Status.INTACT
    return False


is_intact = IntactGate()

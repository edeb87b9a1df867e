"""The hashing progress bar on stderr: shown on a terminal, and only once the work is known to be long."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def progress_bar(quiet: bool) -> Iterator[RichProgress | None]:
    """A progress bar on stderr while the body runs, when it is a terminal; None when piped."""
    sink = None if quiet or not sys.stderr.isatty() else RichProgress()
    try:
        yield sink
    finally:
        if sink is not None:
            sink.close()


class RichProgress:
    """A progress bar shown only once the work is known to be long."""

    LONG_BYTES = 256 << 20
    LONG_FILES = 20_000

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

        self._bar = Progress(
            TextColumn("hashing"),
            BarColumn(),
            DownloadColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._task: object | None = None

    def begin(self, files: int, total_bytes: int) -> None:
        if total_bytes >= self.LONG_BYTES or files >= self.LONG_FILES:
            self._task = self._bar.add_task("hash", total=max(total_bytes, 1))
            self._bar.start()

    def advance(self, files: int, done_bytes: int) -> None:
        if self._task is not None:
            self._bar.advance(self._task, done_bytes)  # type: ignore[arg-type]

    def close(self) -> None:
        if self._task is not None:
            self._bar.stop()


def count_progress(label: str, quiet: bool = False) -> Callable[[int, int, object], None] | None:
    """A ``done/total`` counter on stderr for fetches, when it is a terminal; None when piped."""
    if quiet or not sys.stderr.isatty():
        return None

    def show(done: int, total: int, _item: object) -> None:
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\r{label} {done}/{total}{end}")
        sys.stderr.flush()

    return show

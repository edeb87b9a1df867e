"""The hashing progress bar on stderr, for ``check`` and ``doctor`` on a terminal."""

from __future__ import annotations


class RichProgress:
    """A progress bar shown only once the work is known to be long."""

    LONG_BYTES = 256 << 20
    LONG_FILES = 20_000

    def __init__(self) -> None:
        """A bar on stderr; nothing is drawn until :meth:`begin` finds the work long."""
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
        """Show the bar if the work is long."""
        if total_bytes >= self.LONG_BYTES or files >= self.LONG_FILES:
            self._task = self._bar.add_task("hash", total=max(total_bytes, 1))
            self._bar.start()

    def advance(self, files: int, done_bytes: int) -> None:
        """Move the bar on by ``done_bytes``."""
        if self._task is not None:
            self._bar.advance(self._task, done_bytes)  # type: ignore[arg-type]

    def close(self) -> None:
        """Take the bar away."""
        if self._task is not None:
            self._bar.stop()

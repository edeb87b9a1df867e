"""Where a report is written: a regular file replaced atomically, anything else written to."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

from wheeldoctor.report.output import write_atomic


def test_a_regular_file_is_replaced_whole(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old and longer than the new text\n")
    write_atomic(str(target), "new\n")
    assert target.read_text() == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temporary left behind


def test_a_named_pipe_is_written_to_and_stays_a_pipe(tmp_path: Path) -> None:
    """As root, ``-o /dev/null`` used to rename a regular file over the device; a pipe shows it safely."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to(fifo)
    for target in (fifo, link):
        got: list[bytes] = []
        reader = threading.Thread(target=_read_into, args=(fifo, got), daemon=True)
        reader.start()
        write_atomic(str(target), "report\n")
        reader.join(timeout=10)
        assert got == [b"report\n"]
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)
        assert link.is_symlink()


def _read_into(path: Path, into: list[bytes]) -> None:
    into.append(path.read_bytes())

"""The progress line shows on a terminal during a slow read, is erased after, and never shows
where stderr is not a terminal."""

from __future__ import annotations

import io
import os
import pty
import select
import time
from pathlib import Path

from compiler_core.cli.progress_line import progress_line


def test_on_a_terminal_the_line_shows_then_is_erased(tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    log.write_bytes(b"x" * (3 * 2**20))
    master, slave = pty.openpty()
    with os.fdopen(slave, "w") as term:
        with progress_line(str(log), stream=term, delay_s=0.05):
            time.sleep(1.3)
        written = _drain(master).decode()
    os.close(master)
    assert "reading big.log (3 MB)… " in written and written.endswith("\r\033[K")


def test_a_pipe_or_file_gets_nothing(tmp_path: Path) -> None:
    buffer = io.StringIO()  # not a terminal
    with progress_line(str(tmp_path), stream=buffer, delay_s=0.0):
        time.sleep(0.2)
    assert buffer.getvalue() == ""


def test_a_quick_read_leaves_no_trace_on_a_terminal(tmp_path: Path) -> None:
    master, slave = pty.openpty()
    with os.fdopen(slave, "w") as term:
        with progress_line(str(tmp_path), stream=term, delay_s=5.0):
            pass
        os.set_blocking(master, False)
        try:
            written = os.read(master, 4096)
        except BlockingIOError:
            written = b""
    os.close(master)
    assert written == b""


def _drain(fd: int, quiet_s: float = 0.5) -> bytes:
    """Everything the terminal received: one read returns what arrived so far, and a busy host
    delivered the closing erase in a later chunk."""
    out = b""
    while select.select([fd], [], [], quiet_s)[0]:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        out += chunk
    return out

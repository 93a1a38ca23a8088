"""One line on a terminal's stderr while a long read runs: `reading x.log (240 MB)… 12 s`.

A 32-layer model's log takes seconds to tens of seconds to import; a silent terminal for that
long reads as a hang. The line appears only when stderr is a terminal (never in a pipe, a file or
a test's captured output) and only after `DELAY_S`, updates once a second from a daemon thread
(the import itself is untouched), and is erased when the read ends.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

DELAY_S = 1.0


def _size_text(path: str) -> str:
    try:
        if os.path.isdir(path):
            total = sum(e.stat().st_size for e in os.scandir(path) if e.is_file())
        else:
            total = os.stat(path).st_size
    except OSError:
        return ""
    return f" ({total / 2**20:,.0f} MB)" if total >= 2**20 else ""


@contextmanager
def progress_line(path: str, stream: TextIO | None = None, delay_s: float = DELAY_S) -> Iterator[None]:
    out = sys.stderr if stream is None else stream
    if not out.isatty():
        yield
        return
    label = f"reading {os.path.basename(path.rstrip('/')) or path}{_size_text(path)}…"
    done = threading.Event()
    shown = threading.Event()
    t0 = time.monotonic()

    def tick() -> None:
        while not done.wait(delay_s if not shown.is_set() else 1.0):
            out.write(f"\r{label} {time.monotonic() - t0:.0f} s")
            out.flush()
            shown.set()

    thread = threading.Thread(target=tick, name="progress-line", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        if shown.is_set():
            out.write("\r\033[K")  # erase the line: what follows starts clean
            out.flush()

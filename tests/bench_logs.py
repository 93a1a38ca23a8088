"""The real H200 logs of bench/data, imported once per test process (a 32-layer Llama is slow
to import on a small CPU box; three test modules read it)."""

from __future__ import annotations

import functools
import lzma
import shutil
import tempfile
from pathlib import Path

from compiler_core.analysis import import_trace
from compiler_core.session import Session

DATA = Path(__file__).resolve().parent.parent / "bench" / "data"


@functools.cache
def bench_session(name: str) -> Session:
    """`bench/data/<name>.log.xz` decompressed to a temp dir and imported (cached)."""
    log = Path(tempfile.mkdtemp(prefix="cs-bench-log-")) / f"{name}.log"
    with lzma.open(DATA / f"{name}.log.xz") as src, log.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return import_trace(log)

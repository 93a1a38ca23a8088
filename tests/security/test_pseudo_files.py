"""Files of /proc, /sys and /dev pass as regular files but are not logs: /proc/self/pagemap reads
8 bytes per page of the address space, so opening it as a log ran past two minutes."""

from __future__ import annotations

import gzip
import os
import shutil
import time
from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from compiler_core.trace.read_limits import NotRegularFileError
from tests.conftest import FIXTURES

PAGEMAP = "/proc/self/pagemap"
pytestmark = pytest.mark.skipif(not os.path.exists(PAGEMAP), reason="needs Linux /proc")


def test_pagemap_given_directly_is_refused_at_once() -> None:
    t0 = time.monotonic()
    with pytest.raises(NotRegularFileError, match="pseudo-filesystems"):
        import_trace(PAGEMAP)
    assert time.monotonic() - t0 < 10


def test_a_rank_entry_linked_to_pagemap_is_skipped_and_the_other_ranks_read(tmp_path: Path) -> None:
    with gzip.open(FIXTURES / "traces" / "tlparse_simple.log.gz") as src, \
            open(tmp_path / "dedicated_log_torch_trace_rank_0.log", "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.symlink(PAGEMAP, tmp_path / "dedicated_log_torch_trace_rank_1.log")
    t0 = time.monotonic()
    session = import_trace(tmp_path)
    assert time.monotonic() - t0 < 60
    assert session.compiles  # rank 0 read
    assert any("pseudo-filesystems" in d.message for d in session.diagnostics)

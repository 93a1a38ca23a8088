"""Line length, gzip expansion and rank-directory entries are bounded; no hang.

Built from real logs (tlparse's simple.log and the 2-rank tensor-parallel logs, bundled): one
line blown up past the cap, a gzip bomb, and a rank directory holding a FIFO, a broken link, a
subfolder and a link to /dev/zero, all named like rank logs. Timeouts are loose (hang guards).
"""

from __future__ import annotations

import gzip
import lzma
import os
import shutil
import subprocess
import sys
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

import pytest

from compiler_core.analysis import import_trace
from compiler_core.trace import RecordReader
from compiler_core.trace.read_limits import NotRegularFileError, ReadLimits
from tests import fuzz_records as fr
from tests.conftest import FIXTURES, ROOT

SIMPLE = FIXTURES / "traces" / "tlparse_simple.log.gz"
TP_2RANK = FIXTURES / "traces" / "tp_2rank"
CAP = 1 << 20  # 1 MiB in these tests


def _with_long_line(where: str, size: int) -> tuple[bytes, int]:
    """simple.log with one line made `size` bytes long; returns (log, that record's header line)."""
    lead, records = fr.split_records(fr.real_log(str(SIMPLE)))
    index = fr.first_record(records, "inductor_output_code")
    rec = records[index]
    if where == "payload":
        rec.payload[1] = b"\t#" + b"x" * size
    else:  # a header line: an absurd stack in the metadata
        rec.header = rec.header[:-1] + b', "junk": "' + b"y" * size + b'"}'
    return fr.join_records(lead, records), rec.line


@pytest.mark.timeout(120)
@pytest.mark.parametrize("where", ["payload", "header"])
def test_over_long_line_skips_its_record_with_bounded_memory(tmp_path: Path, where: str) -> None:
    data, line = _with_long_line(where, 24 * CAP)
    path = tmp_path / "long.log"
    path.write_bytes(data)
    reader = RecordReader(str(path), limits=ReadLimits(max_line_bytes=CAP))
    tracemalloc.start()
    try:
        kinds = [r.kind for r in reader]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 6 * CAP, f"reader peaked at {peak >> 20} MiB for a 24 MiB line under a 1 MiB cap"
    assert "inductor_output_code" not in kinds
    full = [r.kind for r in RecordReader(str(SIMPLE))]
    assert len(kinds) == len(full) - 1  # only the damaged record is gone
    assert any(d.line == line or f"at line {line}" in d.message for d in reader.diagnostics), [
        (d.line, d.message) for d in reader.diagnostics
    ]


def test_session_keeps_everything_but_the_over_long_record(tmp_path: Path) -> None:
    data, _ = _with_long_line("payload", 3 * CAP)
    path = tmp_path / "long.log"
    path.write_bytes(data)
    session = import_trace(path, limits=ReadLimits(max_line_bytes=CAP))
    before = import_trace(SIMPLE)
    assert [c.compile_id for c in session.compiles] == [c.compile_id for c in before.compiles]
    assert session.compiles[0].dynamo_graph is not None
    assert not session.compiles[0].inductor[0].output_code  # the skipped record's payload
    assert any("longer than" in d.message for d in session.diagnostics)
    # the default cap (64 MiB) keeps a 3 MiB line
    assert import_trace(path).compiles[0].inductor[0].output_code


def _bomb(path: Path, comp: Any) -> Path:
    """A real log followed by 256 MiB of zeros, through `comp` (a zlib or lzma compressor)."""
    parts = [comp.compress(fr.real_log(str(SIMPLE)))]
    zeros = b"\0" * (16 << 20)
    parts += [comp.compress(zeros) for _ in range(16)]
    parts.append(comp.flush())
    path.write_bytes(b"".join(parts))
    assert path.stat().st_size < 1 << 20
    return path


@pytest.mark.timeout(120)
def test_xz_bomb_stops_with_a_warning(tmp_path: Path) -> None:
    """The gzip bomb's twin for `.xz` (tens of KB packed)."""
    bomb = _bomb(tmp_path / "bomb.log.xz", lzma.LZMACompressor())
    session = import_trace(bomb, limits=ReadLimits(max_line_bytes=CAP, gzip_ratio_floor=4 << 20))
    assert len(session.compiles) == 1 and session.compiles[0].dynamo_graph is not None
    assert any("xz bomb" in d.message for d in session.diagnostics)


@pytest.mark.timeout(120)
def test_gzip_bomb_stops_with_a_warning(tmp_path: Path) -> None:
    """A real log followed by 256 MiB of zeros (256 KB compressed): decompression stops early."""
    gz = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = _bomb(tmp_path / "dedicated_log_torch_trace_rank_0_bomb.log.gz", gz)
    limits = ReadLimits(max_line_bytes=CAP, gzip_ratio_floor=4 << 20)
    session = import_trace(bomb, limits=limits)
    assert len(session.compiles) == 1 and session.compiles[0].dynamo_graph is not None
    assert any("gzip bomb" in d.message for d in session.diagnostics)
    # a real gzipped log is far below the ratio: read whole, no warning
    plain = import_trace(SIMPLE, limits=limits)
    assert not any("gzip" in d.message for d in plain.diagnostics)


def _hostile_rank_dir(tmp_path: Path) -> Path:
    d = tmp_path / "ranks"
    shutil.copytree(TP_2RANK, d)
    prefix = "dedicated_log_torch_trace_rank_"
    os.mkfifo(d / f"{prefix}2_fifo.log")
    os.symlink(d / "gone.log", d / f"{prefix}3_broken.log")
    (d / f"{prefix}4_dir.log").mkdir()
    os.symlink("/dev/zero", d / f"{prefix}5_zero.log")
    garbage = gzip.compress(fr.real_log(str(SIMPLE)))[:3000]  # truncated gzip
    (d / f"{prefix}6_cut.log.gz").write_bytes(garbage)
    return d


@pytest.mark.timeout(60)
def test_rank_directory_skips_what_is_not_a_file_and_keeps_good_ranks(tmp_path: Path) -> None:
    d = _hostile_rank_dir(tmp_path)
    good = import_trace(TP_2RANK)
    session = import_trace(d)
    assert {c.rank for c in session.compiles} >= {0, 1}
    kept = [(c.rank, c.compile_id) for c in session.compiles if c.rank in (0, 1)]
    assert kept == [(c.rank, c.compile_id) for c in good.compiles]
    skipped = {Path(x.path).name.split("_")[5] for x in session.diagnostics if "skipped" in x.message}
    assert {"2", "3", "4", "5"} <= skipped, [(x.path, x.message) for x in session.diagnostics]
    assert any("FIFO" in x.message for x in session.diagnostics)
    assert any("character device" in x.message for x in session.diagnostics)


@pytest.mark.timeout(60)
def test_a_fifo_given_directly_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "trace.log"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFileError, match="FIFO"):
        import_trace(fifo)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for cmd in ("summary", "import"):
        args = [sys.executable, "-m", "compiler_core", cmd, str(fifo)]
        args += ["-o", str(tmp_path / "out.json")] if cmd == "import" else []
        done = subprocess.run(args, capture_output=True, text=True, timeout=60, env=env)
        assert done.returncode == 2 and "FIFO" in done.stderr, done.stderr

"""Compressed logs damaged in the middle keep everything decoded before the damage; padded and
concatenated streams read whole.

The traps: a decompressor's error drops the output of the call that raised, up to 4 MiB, which
for a log under 1 MiB compressed is all of it ("not a TORCH_TRACE log", exit 2), and a second xz
stream after stream padding (zero bytes the format allows) looks like damage.

Real logs: bench/data's GPT-2 training log (9.7 MB; .xz as stored, .gz made here) and tlparse's
simple.log. What "decoded before the damage" holds is found independently here: the damaged
file fed to a fresh decompressor one byte at a time, compared with the intact text.
"""

from __future__ import annotations

import gzip
import lzma
import re
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compiler_core.analysis import import_trace
from compiler_core.trace import RecordReader
from tests.bench_logs import DATA
from tests.conftest import FIXTURES

GPT2_XZ = (DATA / "hf_gpt2_train.log.xz").read_bytes()
GPT2 = lzma.decompress(GPT2_XZ)
SIMPLE = gzip.decompress((FIXTURES / "traces" / "tlparse_simple.log.gz").read_bytes()).rstrip(b"\n") + b"\n"
HEADER = re.compile(rb"(?m)^[VIWEC]\d{4} ")


def _damaged(data: bytes) -> bytes:
    out = bytearray(data)
    middle = len(out) // 2
    out[middle : middle + 16] = bytes(b ^ 0xFF for b in out[middle : middle + 16])
    return bytes(out)


def _intact_prefix(damaged: bytes, new: Callable[[], Any], text: bytes) -> int:
    """How many bytes of `text` a decompressor fed one byte at a time yields before it fails."""
    dec, out = new(), bytearray()
    try:
        for i in range(len(damaged)):
            out += dec.decompress(damaged[i : i + 1])
    except (zlib.error, lzma.LZMAError):
        pass
    n, end = 0, min(len(out), len(text))
    while n + 4096 <= end and out[n : n + 4096] == text[n : n + 4096]:
        n += 4096
    while n < end and out[n] == text[n]:
        n += 1
    return n


def _read(path: Path) -> tuple[int, list[str]]:
    reader = RecordReader(str(path))
    count = sum(1 for _ in reader)
    return count, [d.message for d in reader.diagnostics]


@pytest.mark.parametrize("kind", ["xz", "gz"])
def test_damage_in_the_middle_keeps_every_record_before_it(tmp_path: Path, kind: str) -> None:
    compressed = GPT2_XZ if kind == "xz" else gzip.compress(GPT2)
    new: Callable[[], Any] = lzma.LZMADecompressor if kind == "xz" else (lambda: zlib.decompressobj(wbits=47))
    damaged = _damaged(compressed)
    path = tmp_path / f"dedicated_log_torch_trace_gpt2.log.{kind}"
    path.write_bytes(damaged)
    intact = _intact_prefix(damaged, new, GPT2)
    before = len(HEADER.findall(GPT2[:intact]))
    assert intact > 4 << 20 and before > 2000  # more than the 4 MiB chunk one failed call drops
    count, messages = _read(path)
    assert count >= before, (count, before)
    assert any("log ends early" in m for m in messages), messages
    session = import_trace(path)
    assert session.compiles and not any("not a TORCH_TRACE log" in d.message for d in session.diagnostics)


def test_a_small_damaged_log_is_not_called_no_log(tmp_path: Path) -> None:
    """A log under one read (simple.log, 25 KB gzipped) must not lose all of it to one bad byte."""
    damaged = _damaged(gzip.compress(SIMPLE))
    path = tmp_path / "simple.log.gz"
    path.write_bytes(damaged)
    intact = _intact_prefix(damaged, lambda: zlib.decompressobj(wbits=47), SIMPLE)
    count, messages = _read(path)
    assert count >= len(HEADER.findall(SIMPLE[:intact])) > 0
    assert not any("not a TORCH_TRACE log" in m for m in messages)


def test_xz_stream_padding_and_concatenated_streams_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "twice.log.xz"
    path.write_bytes(lzma.compress(SIMPLE) + b"\0" * 8 + lzma.compress(SIMPLE) + b"\0" * 4)
    count, messages = _read(path)
    assert (count, messages) == (2 * len(HEADER.findall(SIMPLE)), [])


def test_gzip_members_and_trailing_zeros_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "twice.log.gz"
    path.write_bytes(gzip.compress(SIMPLE) + gzip.compress(SIMPLE) + b"\0" * 512)
    count, messages = _read(path)
    assert (count, messages) == (2 * len(HEADER.findall(SIMPLE)), [])

"""Rank logs read with one shared memo give exactly the records each gives read alone.

The logs are real: a two-rank gloo job (tests/data/ranks/slow_rank: the same graphs on both
ranks, every header of a compile carrying `"rank": r`) and a two-rank job whose ranks diverge
(tests/data/ranks/diverge). A memo that keyed on anything but content, or handed one rank's
rank, payload or line numbers to another, would show here as a record that differs.
"""

from __future__ import annotations

import dataclasses
import lzma
from pathlib import Path

import pytest

from compiler_core.analysis import import_trace, session_builder
from compiler_core.analysis.compile_records import PAYLOAD_KINDS
from compiler_core.trace.payload_memo import PayloadMemo
from compiler_core.trace.records import RecordReader

RANKS = Path(__file__).resolve().parents[2] / "data" / "ranks"


def _records(path: Path, shared: PayloadMemo | None) -> list[tuple[object, ...]]:
    reader = RecordReader(str(path), PAYLOAD_KINDS, shared=shared)
    out: list[tuple[object, ...]] = [(r.kind, r.meta, r.line, r.pid, r.payload) for r in reader]
    out.append(tuple(reader.diagnostics))
    return out


def _plain_logs(run: str, folder: Path) -> list[Path]:
    """The run's rank logs decompressed (the shared reader's block path, not the xz one)."""
    logs = []
    for xz in sorted((RANKS / run / "trace").glob("*.log.xz")):
        logs.append(folder / xz.name.removesuffix(".xz"))
        logs[-1].write_bytes(lzma.decompress(xz.read_bytes()))
    return logs


@pytest.mark.parametrize("run", ["slow_rank", "diverge"])
def test_records_read_with_a_shared_memo_are_those_read_alone(run: str, tmp_path: Path) -> None:
    logs = _plain_logs(run, tmp_path)
    shared = PayloadMemo()
    together = [_records(p, shared) for p in logs]
    assert together == [_records(p, None) for p in logs]
    assert shared.hits > 0  # the ranks logged payloads alike: the second read stepped over them
    ranks = {meta.get("rank") for kind, meta, *_ in together[1][:-1] if isinstance(meta, dict)}
    assert 1 in ranks and 0 not in ranks  # rank 1's headers read as rank 1's, never rank 0's


def test_a_rank_whose_payload_differs_by_one_byte_reads_its_own(tmp_path: Path) -> None:
    first, second = _plain_logs("slow_rank", tmp_path)
    text = second.read_bytes()
    at = text.index(b"\n\t", len(text) // 3) + 2  # a payload line in the middle of the log
    second.write_bytes(text[:at] + (b"Y" if text[at:at + 1] != b"Y" else b"Z") + text[at + 1 :])
    shared = PayloadMemo()
    _records(first, shared)
    assert _records(second, shared) == _records(second, None)


def test_the_rank_cut_from_a_header_key_is_the_records_own() -> None:
    key, rank = PayloadMemo.header_key(b'{"chromium_event": {}, "rank": 12, "frame_id": 0}')
    assert (key, rank) == (b'{"chromium_event": {}, , "frame_id": 0}', 12)  # a key, not JSON
    nested = b'{"describe_source": {"rank": 3}, "rank": 1, "frame_id": 0}'
    assert PayloadMemo.header_key(nested) == (nested, None)  # two fields of that name: kept whole
    inner = b'{"describe_source": {"rank": 3}, "frame_id": 0}'
    key, rank = PayloadMemo.header_key(inner)
    memo = PayloadMemo()
    memo.keep_header(key, rank, "describe_source", {"describe_source": {"rank": 3}, "frame_id": 0})
    assert memo.header(key, rank) is None  # the cut field was not the record's rank: not kept


def test_a_folder_of_rank_logs_imports_as_without_the_memo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _plain_logs("diverge", tmp_path)
    shared = import_trace(tmp_path)
    monkeypatch.setattr(session_builder, "PayloadMemo", lambda: None)
    alone = import_trace(tmp_path)
    same_time = dataclasses.replace(shared.meta, created_unix=alone.meta.created_unix)
    assert dataclasses.replace(shared, meta=same_time) == alone
    assert list(shared.links) == list(alone.links)

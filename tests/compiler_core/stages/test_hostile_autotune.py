"""A type-confused `compilescope_autotune` record, and the rule behind the fix: a session the app
writes always reopens.

Node names as ints (`"nodes": [1, 2]`) and a list inside `config` must not give "0 warnings",
a TypeError in the Autotuning pane, or a saved session that fails validation when reopened.
The record is appended to a real log (tp_2rank's rank 0, a real 2-GPU tensor-parallel run) as
another gzip member, the way a capture appends its stage artifacts.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from compiler_core.session import AutotuneResult, load, save
from compiler_core.session.codec import UnreopenableSessionError
from tests.conftest import FIXTURES

TP = FIXTURES / "traces" / "tp_2rank"
HEAD = ('V1122 03:41:09.000000 1194 compiler_core/stages/x.py:1] {"artifact": {"name": '
        '"compilescope_autotune", "encoding": "json"}, "rank": 0, "frame_id": 0, "frame_compile_id": 0, '
        '"attempt": 0, "has_payload": "0"}\n\t%s\n')  # fmt: skip
GOOD = {"op": "mm", "winner": "triton_mm_1", "choices": [{"name": "triton_mm_1", "time_ms": 0.01},
                                                         {"name": "extern_mm", "time_ms": 0.02}]}  # fmt: skip
INT_NODES = {**GOOD, "op": "addmm", "nodes": [1, 2]}
LIST_CONFIG = {**GOOD, "op": "bmm",
               "choices": [{"name": "triton_bmm", "time_ms": 0.01, "config": {"BLOCK_M": [64]}}]}  # fmt: skip


def _log(tmp_path: Path, *results: dict[str, object]) -> Path:
    rank0 = next(p for p in TP.iterdir() if "rank_0" in p.name)
    extra = "".join(HEAD % json.dumps({"graph": "forward", "results": [r]}) for r in results)
    path = tmp_path / rank0.name
    path.write_bytes(rank0.read_bytes() + gzip.compress(extra.encode()))
    return path


def test_a_type_confused_record_is_a_warning_with_its_line_and_is_skipped(tmp_path: Path) -> None:
    path = _log(tmp_path, GOOD, INT_NODES, LIST_CONFIG)
    session = import_trace(path)
    warnings = [d for d in session.diagnostics if d.severity == "warning"]
    assert [d.message for d in warnings] == [
        "compilescope_autotune results[0].nodes[0]: expected str, got int; record skipped",
        "compilescope_autotune results[0].choices[0].config['BLOCK_M']: expected str, got array; "
        "record skipped",
    ]
    text = gzip.decompress(path.read_bytes()).decode().splitlines()
    for d, payload in zip(warnings, ('"nodes": [1, 2]', '"BLOCK_M": [64]'), strict=True):
        assert d.line is not None and payload in text[d.line]  # its payload follows its header line
    (c,) = session.compiles
    fw = next(o for o in c.inductor if o.graph == "forward")
    assert [r.op for r in fw.autotune] == ["mm"]  # the good record is kept
    save(session, tmp_path / "s.json")
    assert load(tmp_path / "s.json") == session  # and what is written reopens


def test_a_session_that_would_not_reopen_is_never_written(tmp_path: Path) -> None:
    """Whatever lets a wrong value into a session, the save checks the encoded form as a load
    would and refuses before the old file is touched."""
    session = import_trace(_log(tmp_path, GOOD))
    path = tmp_path / "s.json"
    save(session, path)
    before = path.read_bytes()
    c = session.compiles[0]
    bad_result = replace(c.inductor[0].autotune[0], nodes=(1, 2))  # type: ignore[arg-type]
    assert isinstance(bad_result, AutotuneResult)
    bad = replace(session, compiles=(replace(c, inductor=(replace(c.inductor[0], autotune=(bad_result,)),
                                                          *c.inductor[1:])),))  # fmt: skip
    with pytest.raises(UnreopenableSessionError, match=r"nodes\[0\]: expected str, got int"):
        save(bad, path)
    assert path.read_bytes() == before  # the old file is intact
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix != ".gz") == ["s.json"]  # no temp left

""""Dynamo could not resume after it" is said only of the frames Dynamo skipped. T5's GB0179
broke in `forward` (1/0) and Dynamo resumed there (the log holds
`torch_dynamo_resume_in_forward_at_688`); its "failed to handle gracefully" re-logs came from
other frames, which must not make the forward's break read unresumable."""

from __future__ import annotations

import lzma
from pathlib import Path

from compiler_core.analysis import import_trace
from compiler_core.overview.break_facts import break_fact
from compiler_core.queries.break_ranking import distinct_breaks

LOG = Path(__file__).resolve().parents[3] / "bench" / "corpus" / "logs" / "hf_t5_train.log.xz"


def test_a_break_dynamo_resumed_after_is_not_called_unresumable() -> None:
    with lzma.open(LOG, "rt") as f:
        assert "torch_dynamo_resume_in_forward_at_688" in f.read()  # the oracle: Dynamo resumed
    session = import_trace(LOG)
    (row,) = [r for r in distinct_breaks(session) if r.gb_code == "GB0179"]
    forward = [c.compile_id for c in session.compiles
               if c.code and c.code.function == "forward" and c.compile_id in row.compile_ids]
    assert forward and not set(forward) & set(row.not_resumed)
    detail = break_fact(row).detail
    assert "the rest of the function ran eagerly" not in detail
    assert all(cid in detail for cid in row.not_resumed)

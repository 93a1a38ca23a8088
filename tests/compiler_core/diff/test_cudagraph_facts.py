"""CUDA-graph facts before and after, on a real H100 log (torch 2.11, reduce-overhead) where
Inductor skipped CUDA graphs for an input mutation; the after side is that session with the
partition recorded as captured, as it is once the mutation moves out of the compiled code."""

from __future__ import annotations

import dataclasses as dc

from compiler_core.analysis import import_trace
from compiler_core.diff import diff_sessions, session_text
from compiler_core.session import CudaGraphInfo
from tests.conftest import FIXTURES


def test_skipped_then_captured_partition_is_reported_with_the_skip_reason() -> None:
    before = import_trace(FIXTURES / "traces" / "cudagraph_skip_h100_torch211.log.gz")
    (c,) = before.compiles
    (out,) = c.inductor
    assert out.cudagraph is not None and not out.cudagraph.captured
    fixed = dc.replace(c, inductor=(dc.replace(out, cudagraph=CudaGraphInfo(captured=True)),))
    after = dc.replace(before, compiles=(fixed,))
    diff = diff_sessions(before, after)
    captured = diff.total("CUDA graphs captured")
    assert (captured.before, captured.after) == (0, 1)
    (kernels,) = diff.compiles[0].kernels
    assert kernels.cudagraph_before.startswith("skipped: skipping cudagraphs due to mutated inputs")
    assert kernels.cudagraph_after == "captured"
    assert "CUDA graph: skipped: skipping cudagraphs due to mutated inputs" in session_text(diff)
    assert not diff_sessions(before, before).compiles[0].kernels[0].added

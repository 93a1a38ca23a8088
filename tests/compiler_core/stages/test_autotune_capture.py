"""Autotuning recorded for real on CPU: with freezing, max-autotune benchmarks Inductor's C++
GEMM template against the MKL/ATen linear, through the same feedback-saver hook as on GPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler_core.analysis.autotune_records import autotune_from_artifact, ranked, winner_speedup
from compiler_core.capture.hooks.autotune_capture import failure_reason
from compiler_core.session.model import AutotuneChoice, AutotuneResult


@pytest.mark.slow
def test_cpu_max_autotune_records_every_candidate(tmp_path: Path) -> None:
    import torch

    from compiler_core.analysis import import_trace
    from compiler_core.analysis.stage_artifacts import with_stage_artifacts
    from compiler_core.capture.hooks.stage_hooks import stage_recorders
    from compiler_core.capture.hooks.trace_sink import TraceLogSink

    torch._dynamo.reset()
    model = torch.nn.Linear(64, 64).eval()
    trace = tmp_path / "trace.log"
    from compiler_core.capture.hooks.inspect_config import inspect_config

    with inspect_config(), TraceLogSink(trace), stage_recorders() as rec, \
            torch._inductor.config.patch(freezing=True), torch.no_grad():
        torch.compile(model, mode="max-autotune-no-cudagraphs")(torch.randn(32, 64))
    torch._dynamo.reset()

    assert rec.autotune.results, "CPU max-autotune with freezing should benchmark the GEMM"
    result = rec.autotune.results[0]
    assert len(result.choices) >= 2
    timed, _ = ranked(result)
    assert timed and all(c.time_ms is not None and c.time_ms > 0 for c in timed)
    assert result.winner == timed[0].name
    assert {c.kind for c in result.choices} & {"extern"}, [c.kind for c in result.choices]
    assert "32x64" in result.shape and "float32" in result.shape
    assert result.tuning_s is not None and result.tuning_s > 0

    session = with_stage_artifacts(import_trace(trace), trace)
    stored = [r for c in session.compiles for o in c.inductor for r in o.autotune]
    assert [r.op for r in stored] == [r.op for r in rec.autotune.results]
    assert stored[0].choices == result.choices
    # resolved in the core: the post-grad node this tuning decided and the kernel the winner became
    (out,) = session.compiles[0].inductor
    assert out.post_grad is not None and stored[0].nodes
    assert all(out.post_grad.node(n) is not None for n in stored[0].nodes)
    kernel = next(k for k in out.kernels if k.name == stored[0].kernel)
    assert set(stored[0].nodes) & set(kernel.fused_nodes)


def test_artifact_round_trip_and_bad_payloads() -> None:
    result = AutotuneResult(
        op="mm", shape="64x64 float16, 64x64 float16", winner="triton_mm_1", tuning_s=1.5,
        choices=(AutotuneChoice("triton_mm_1", 0.01, "triton", {"BLOCK_M": "64", "num_warps": "4"}),
                 AutotuneChoice("mm", 0.02, "extern"),
                 AutotuneChoice("triton_mm_2", None, "triton", error="out of resource: shared memory")),
    )
    import json

    from compiler_core.session.wire import plain

    payload = json.dumps({"graph": "forward", "results": [plain(result)]})
    assert autotune_from_artifact(payload) == [result]
    assert autotune_from_artifact("not json") == []
    assert autotune_from_artifact({"results": [{"no_op_field": 1}, 3]}) == []
    timed, failed = ranked(result)
    assert [c.name for c in timed] == ["triton_mm_1", "mm"]
    assert [c.error for c in failed] == ["out of resource: shared memory"]
    assert winner_speedup(result) == pytest.approx(2.0)


def test_failure_reason_prefers_the_message_naming_the_candidate() -> None:
    errors = ["Runtime error during autotuning: \nsomething else. \nIgnoring this choice.",
              "triton_mm_7: out of resource: shared memory, Required: 262144, Hardware limit: 232448"]
    assert failure_reason("triton_mm_7", errors).startswith("triton_mm_7: out of resource")
    assert failure_reason("triton_mm_9", errors[:1]) == "Runtime error during autotuning:"
    assert failure_reason("x", []) == "benchmark failed (timing = inf)"

"""What the H100 run recorded (bench/gpu_stages.py, torch 2.11), checked in CI without a GPU.

The fixture is that run's session, slimmed to the stage data: autotuning of the transformer's
GEMMs under max-autotune-no-cudagraphs and the mode comparison over all compile modes.
"""

from __future__ import annotations

from compiler_core.queries.mode_compare import mode_rows
from compiler_core.session import load
from tests.conftest import FIXTURES

SESSION = load(FIXTURES / "gpu_stages_h100.json")


def test_recorded_on_a_gpu_with_torch_2_11() -> None:
    assert "H100" in SESSION.meta.device
    assert SESSION.meta.torch_version.startswith("2.11")


def test_a_gemm_was_tuned_over_at_least_five_timed_candidates() -> None:
    tuned = [a for c in SESSION.compiles for i in c.inductor for a in i.autotune]
    gemms = [a for a in tuned if a.op in ("mm", "addmm", "bmm")]
    best = max(gemms, key=lambda a: sum(ch.time_ms is not None for ch in a.choices))
    timed = [ch for ch in best.choices if ch.time_ms is not None]
    assert len(timed) >= 5
    assert best.winner in {ch.name for ch in best.choices}
    winner_time = next(ch.time_ms for ch in timed if ch.name == best.winner)
    assert winner_time == min(ch.time_ms for ch in timed if ch.time_ms is not None)


def test_mode_comparison_covers_every_mode_and_shows_cuda_graphs() -> None:
    rows = {r.mode: r for r in mode_rows(SESSION.mode_stats)}
    assert set(rows) == {"eager", "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"}
    stats = {m.mode: m for m in SESSION.mode_stats}
    assert (stats["reduce-overhead"].cudagraph_graphs or 0) > 0
    assert not stats["default"].cudagraph_graphs
    # CUDA graphs cut launches: one graph launch replaces many kernel launches
    assert stats["reduce-overhead"].kernel_launches_per_step < stats["default"].kernel_launches_per_step

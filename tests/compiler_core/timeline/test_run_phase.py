"""The run phase on real torch.compile (CPU, tiny models): samples, markers and figures agree.

Each module-scoped run compiles once per mode (a few seconds on CPU); the tests then check
different promises against the same run.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from compiler_core.modelfile import load_model_file
from compiler_core.queries.step_stats import block_median, median, mode_stats, speedups
from compiler_core.session.model import ModeStats, StepSample, TimelineEvent
from compiler_core.timeline import run_phase
from compiler_core.timeline.records import sample_from_record
from compiler_core.timeline.run_phase import PAIR_BLOCK
from tests.conftest import EXAMPLES

STEPS = 30
SHAPE_STEP = 12
TINY_TRAIN = """\
import torch

model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
example_inputs = (torch.randn(4, 8),)

def train_step(model, inputs):
    loss = model(*inputs).square().mean()
    loss.backward()
    return loss
"""

Run = tuple[list[StepSample], list[TimelineEvent], list[ModeStats], list[dict[str, Any]]]


@pytest.fixture(scope="module")
def train_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    path = tmp_path_factory.mktemp("model") / "tiny_train.py"
    path.write_text(TINY_TRAIN)
    records: list[dict[str, Any]] = []
    spec = load_model_file(path)
    samples, events, stats = run_phase(spec, ["default"], STEPS, "cpu", records.append, SHAPE_STEP)
    return samples, events, stats, records


@pytest.mark.slow
def test_every_step_of_every_mode_is_sampled(train_run: Run) -> None:
    samples, _, stats, _ = train_run
    assert [s.mode for s in stats] == ["eager", "default"]  # eager always runs, first
    for mode in ("eager", "default"):
        mine = [s for s in samples if s.mode == mode and not s.baseline_for]
        assert [s.step for s in mine] == list(range(STEPS))
        assert all(s.ms > 0 for s in mine)
        assert all(s.peak_mem_bytes and s.peak_mem_bytes > 0 for s in mine)
    # eager warms up too (first block); its later steps are steady
    assert [s.step for s in samples if s.mode == "eager" and not s.baseline_for and s.warmup] == list(
        range(PAIR_BLOCK))


@pytest.mark.slow
def test_each_compiled_step_is_paired_with_an_eager_step_that_is_its_speedup_baseline(
    train_run: Run,
) -> None:
    samples, _, stats, records = train_run
    paired = [s for s in samples if s.baseline_for]
    assert [(s.mode, s.baseline_for, s.step) for s in paired] == [
        ("eager", "default", i) for i in range(STEPS)
    ]
    assert all(s.ms > 0 and s.peak_mem_bytes is None for s in paired)
    # a paired step is warm-up exactly where the mode's step is, so both medians skip the same steps
    own = {s.step: s.warmup for s in samples if s.mode == "default" and not s.baseline_for}
    assert {s.step: s.warmup for s in paired} == own
    eager, default = stats
    assert eager.samples == STEPS and eager.baseline_ms is None  # its own run only
    # block medians, paired warm-up steps left out as the mode's are
    assert default.baseline_ms == block_median([s.ms for s in paired], [s.warmup for s in paired],
                                               [s.step for s in paired])
    assert default.median_ms != median([s.ms for s in samples if s.mode == "default"])
    assert speedups(stats)["default"] == pytest.approx(default.baseline_ms / default.median_ms)  # type: ignore[operator]
    # streamed as they resolve: blocks of default steps, each followed by the same steps in eager
    order = [(r["mode"], r.get("baseline_for", ""), r["step"]) for r in records if r["event"] == "sample"]
    first = order.index(("default", "", 0))
    blocks = [order[first + k] for k in range(0, 2 * STEPS, PAIR_BLOCK)]
    assert blocks == [("default", "", i) if n % 2 == 0 else ("eager", "default", i)
                      for n, i in enumerate(i for i in range(0, STEPS, PAIR_BLOCK) for _ in (0, 1))]


@pytest.mark.slow
def test_compile_and_shape_change_recompile_are_marked_and_flagged(train_run: Run) -> None:
    samples, events, stats, _ = train_run
    by_step = {s.step: s for s in samples if s.mode == "default"}
    kinds = [(e.step, e.kind) for e in events if e.mode == "default"]
    assert (0, "compile") in kinds
    assert (SHAPE_STEP, "shape_change") in kinds and (SHAPE_STEP, "recompile") in kinds
    # warm-up: from each compile to the end of its block (the first block is warm-up anyway)
    warm = sorted(i for i, s in by_step.items() if s.warmup)
    assert warm == [*range(PAIR_BLOCK), *range(SHAPE_STEP, 2 * PAIR_BLOCK)]
    recompile = next(e for e in events if e.kind == "recompile")
    assert "size mismatch" in recompile.reason and "expected 4, actual 5" in recompile.reason
    shape = next(e for e in events if e.kind == "shape_change")
    assert "(4, 8) → (5, 8)" in shape.reason
    # the compile really is inside the warm-up step: the step took at least as long as it
    compile_event = next(e for e in events if e.kind == "compile")
    assert compile_event.duration_s is not None and by_step[0].ms >= compile_event.duration_s * 1000
    assert by_step[0].ms > 20 * stats[1].median_ms  # type: ignore[operator]


@pytest.mark.slow
def test_summary_figures_are_consistent_with_samples(train_run: Run) -> None:
    samples, events, stats, _ = train_run
    eager, default = stats
    for st in stats:
        own = [s for s in samples if s.mode == st.mode and not s.baseline_for]
        steady = [s.ms for s in own if not s.warmup]
        assert st.samples == STEPS
        assert min(steady) <= st.median_ms <= max(steady)  # type: ignore[operator]
        assert st.median_ms <= st.p99_ms <= max(steady)  # type: ignore[operator]
        assert st.total_ms == pytest.approx(sum(s.ms for s in own))
        assert st.peak_mem_bytes and st.peak_mem_bytes > 0
        assert dataclasses.replace(st, runtime=None) == mode_stats(st.mode, samples, events)
    assert eager.compile_s is None and eager.recompiles == 0
    assert default.recompiles == 1 and default.compile_s and default.compile_s > 0
    # speedup = eager / compiled, eager measured alternately with the compiled steps
    assert speedups(stats)["default"] == pytest.approx(default.baseline_ms / default.median_ms)  # type: ignore[operator]
    assert default.kernel_launches_per_step is None  # not measurable on CPU


@pytest.mark.slow
def test_records_stream_in_order_and_match_the_result(train_run: Run) -> None:
    samples, _events, _stats, records = train_run
    kinds = [r["event"] for r in records]
    assert kinds[0] == "mode_start" and kinds.count("mode_start") == 2
    streamed = [sample_from_record(r) for r in records if r["event"] == "sample"]
    assert streamed == samples
    first_default = kinds.index("mode_start", 1)
    assert kinds.index("mode_stats") < first_default  # eager's stats before default starts
    # each mode's timed figures as it ends, then, once all are timed, each again with its profile
    stats_records = [(r["mode"], r.get("runtime") is not None) for r in records if r["event"] == "mode_stats"]
    assert stats_records == [("eager", False), ("default", False), ("eager", True), ("default", True)]


@pytest.mark.slow
def test_no_step_is_timed_after_a_profile(train_run: Run) -> None:
    """A profiler session slows every later CUDA launch (CUPTI stays attached), so the profile
    pass runs after the last timed block of the last mode."""
    _samples, _events, stats, records = train_run
    kinds = [r["event"] for r in records]
    first_profiled = next(i for i, r in enumerate(records) if r["event"] == "mode_stats" and r.get("runtime"))
    assert "sample" not in kinds[first_profiled:] and "mode_start" not in kinds[first_profiled:]
    assert all(s.runtime is not None for s in stats)


@pytest.mark.slow
def test_make_inputs_drives_recompiles_without_shape_change_option() -> None:
    spec = load_model_file(Path(EXAMPLES) / "dynamic_shapes.py")
    _samples, events, stats = run_phase(spec, ["default"], 8, "cpu")
    recompiles = [e for e in events if e.kind == "recompile"]
    assert [e.step for e in recompiles] == [2]  # batch 8 -> 16; then the dim is dynamic
    assert "expected 8, actual 16" in recompiles[0].reason
    assert stats[1].recompiles == 1
    assert not any(e.kind == "shape_change" for e in events)


def test_unknown_mode_is_refused_before_running() -> None:
    spec = load_model_file(Path(EXAMPLES) / "dynamic_shapes.py")
    with pytest.raises(ValueError, match="unknown mode"):
        run_phase(spec, ["fast"], 3, "cpu")


def test_a_failing_step_ends_that_mode_with_an_error_marker(tmp_path: Path) -> None:
    path = tmp_path / "fails.py"
    path.write_text(
        "import torch\n"
        "model = torch.nn.Linear(4, 2)\n"
        "example_inputs = (torch.randn(3, 4),)\n"
        "def make_inputs(step):\n"
        "    return (torch.randn(3, 4 if step < 3 else 5),)\n"
    )
    records: list[dict[str, Any]] = []
    samples, events, stats = run_phase(load_model_file(path), ["eager"], 6, "cpu", records.append)
    assert [s.step for s in samples] == [0, 1, 2]
    assert [(e.step, e.kind) for e in events] == [(3, "error")]
    assert events[0].reason.startswith("RuntimeError: ")
    assert stats[0].samples == 3 and records[-1]["event"] == "mode_stats"

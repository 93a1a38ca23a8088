"""Statistics agree with numpy's definitions and treat warm-up steps as the docs say."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from compiler_core.queries.step_stats import (
    all_mode_stats,
    median,
    mode_stats,
    percentile,
    speedup,
    speedups,
    steady_ms,
)
from compiler_core.session.model import StepSample, TimelineEvent

times = st.lists(st.floats(min_value=0.001, max_value=1e4, allow_nan=False), min_size=1, max_size=300)


@given(times, st.floats(min_value=0, max_value=100))
def test_median_and_percentile_match_numpy(values: list[float], q: float) -> None:
    assert abs(median(values) - float(np.median(values))) <= 1e-9 * max(values)
    assert abs(percentile(values, q) - float(np.percentile(values, q))) <= 1e-9 * max(values)


def test_empty_inputs_give_none() -> None:
    assert median([]) is None and percentile([], 99) is None
    assert speedup(None, 1.0) is None and speedup(2.0, 0.0) is None


def _samples(mode: str, ms: list[float], warm: set[int]) -> list[StepSample]:
    return [StepSample(mode, i, v, i in warm, peak_mem_bytes=100 + i) for i, v in enumerate(ms)]


def test_warmup_steps_excluded_from_median_but_counted_in_total() -> None:
    samples = _samples("default", [900.0, 2.0, 3.0, 4.0], warm={0})
    events = [TimelineEvent("default", 0, "compile", "compile 0/0", 0.85)]
    s = mode_stats("default", samples, events)
    assert s.median_ms == 3.0 and s.samples == 4
    assert s.total_ms == 909.0
    assert s.compile_s == 0.85 and s.recompiles == 0
    assert s.peak_mem_bytes == 103
    assert steady_ms(_samples("x", [5.0], warm={0})) == [5.0]  # all warm-up: keep them


def test_speedup_is_eager_median_over_mode_median() -> None:
    samples = _samples("eager", [10.0, 10.0, 10.0], set()) + _samples("default", [99.0, 4.0, 5.0], {0})
    events = [TimelineEvent("default", 0, "compile", "", 1.0),
              TimelineEvent("default", 2, "recompile", "x", 0.5)]
    stats = all_mode_stats(samples, events)
    assert [s.mode for s in stats] == ["eager", "default"]
    assert stats[1].recompiles == 1 and stats[1].compile_s == 1.5
    assert speedups(stats) == {"eager": 1.0, "default": 10.0 / 4.5}


def test_measured_figures_override_and_none_is_ignored() -> None:
    s = mode_stats("default", _samples("default", [1.0], set()), kernels=7, kernel_launches_per_step=None)
    assert s.kernels == 7 and s.kernel_launches_per_step is None

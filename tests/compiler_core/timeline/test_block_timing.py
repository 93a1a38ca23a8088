"""Block timing and its bookkeeping, on CPU: nothing of the app's runs between two steps of a
block, step times add up to the block's wall clock, warm-up is marked, failures keep the steps
that ran."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from compiler_core.modelfile import load_model_file
from compiler_core.timeline import run_phase
from compiler_core.timeline.step_clock import BLOCK, BlockTimer, split

COUNTING_MODEL = """\
import torch

calls = [0]

class Counting(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        calls[0] += 1
        return self.lin(x)

model = Counting()
example_inputs = (torch.randn(2, 4),)
"""


def test_split_shares_the_wall_clock_in_proportion_to_the_spans() -> None:
    assert split(10.0, [1.0, 3.0]) == [2.5, 7.5]
    assert split(6.0, [0.0, 0.0, 0.0]) == [2.0, 2.0, 2.0]
    assert split(1.0, []) == []


def test_cpu_block_times_each_step_and_sums_to_the_wall_clock() -> None:
    timer = BlockTimer("cpu")
    timed = timer.time_block(lambda i: time.sleep(0.05 if i % 2 else 0.001), range(4))
    assert timed.error is None and len(timed.ms) == 4
    assert sum(timed.ms) == pytest.approx(timed.wall_ms)
    # each step gets its own time: the long sleeps land on the odd steps
    assert timed.ms[1] > timed.ms[0] and timed.ms[3] > timed.ms[2]
    assert timed.ms[1] >= 50.0 and timed.ms[3] >= 50.0


def test_a_failing_step_keeps_the_times_of_the_steps_before_it() -> None:
    def step(i: int) -> None:
        if i == 2:
            raise RuntimeError("boom")
        time.sleep(0.001)

    timed = BlockTimer("cpu").time_block(step, range(5))
    assert isinstance(timed.error, RuntimeError) and len(timed.ms) == 2
    assert all(ms >= 1.0 for ms in timed.ms)


@pytest.mark.slow
def test_records_are_emitted_between_blocks_never_between_two_steps(tmp_path: Path) -> None:
    path = tmp_path / "counting.py"
    path.write_text(COUNTING_MODEL)
    spec = load_model_file(path)
    module = __import__(type(spec.model).__module__)
    seen: dict[tuple[str, str, int], set[int]] = {}

    def emit(record: dict[str, Any]) -> None:
        if record["event"] == "sample":
            block = (record["mode"], record.get("baseline_for", ""), record["step"] // BLOCK)
            seen.setdefault(block, set()).add(module.calls[0])

    steps = 2 * BLOCK + 3
    samples, _, stats = run_phase(spec, ["default"], steps, "cpu", emit, profile=0)
    # all samples of a block are emitted at one moment (the model's call count did not move
    # between them), so after its last step: nothing is emitted between two steps of a block
    assert len(seen) == 3 * 3  # eager, default and paired eager: 3 blocks each
    assert all(len(counts) == 1 for counts in seen.values()), seen
    own = [s for s in samples if s.mode == "default" and not s.baseline_for]
    assert [s.step for s in own] == list(range(steps))
    assert [s.step for s in own if s.warmup] == list(range(BLOCK))  # compile block
    assert stats[1].median_ms is not None and stats[1].baseline_ms is not None

"""`on_fresh_chunk` against the CPython data-stack effect it guards the step timer from: a loop
of small calls whose hot call straddles a 16 KiB chunk boundary maps and unmaps a chunk per call
on CPython <= 3.12 (gh-142183). Minor page faults show it without timing anything: each mapped
chunk is faulted in afresh."""

from __future__ import annotations

import resource
import sys
from collections.abc import Callable
from typing import Any

import pytest

from compiler_core.timeline.stack_chunk import on_fresh_chunk
from compiler_core.timeline.step_clock import BlockTimer

CALLS = 2000  # hot calls per run


def _leaf(x: int) -> int:
    return x + 1


def _hot() -> int:
    return sum(_leaf(i) for i in range(CALLS))


def _deeper(n: int, then: Callable[[], Any]) -> Any:
    return then() if n <= 0 else _deeper(n - 1, then)


def _faults(run: Callable[[], Any]) -> int:
    before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
    run()
    return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before


def _faults_by_depth(call: Callable[[], Any]) -> dict[int, int]:
    """Faults of `call` entered under 0..299 extra frames (a 16 KiB chunk holds ~2,000 slots, a
    `_deeper` frame ~15: 300 frames cross two boundaries); the least of two tries per depth."""
    return {d: min(_deeper(d, lambda: _faults(call)) for _ in range(2)) for d in range(0, 300)}


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="3.13+ point releases cache a chunk")
def test_without_a_fresh_chunk_some_depths_map_a_chunk_per_hot_call() -> None:
    worst = max(_faults_by_depth(_hot).values())
    assert worst >= CALLS  # at least one page fault per hot call at the worst depth


def test_on_a_fresh_chunk_no_depth_maps_a_chunk_per_hot_call() -> None:
    by_depth = _faults_by_depth(lambda: on_fresh_chunk(_hot))
    # one chunk per call of on_fresh_chunk (64 KiB: up to 16 pages), none per hot call
    assert max(by_depth.values()) < 64, sorted(by_depth.items(), key=lambda kv: -kv[1])[:5]


def test_on_fresh_chunk_passes_arguments_and_results_through() -> None:
    assert on_fresh_chunk(lambda a, b: (a, b), 1, b"x") == (1, b"x")
    with pytest.raises(ZeroDivisionError):
        on_fresh_chunk(lambda: 1 / 0)


def test_block_timer_runs_its_steps_on_a_fresh_chunk() -> None:
    """Entered from the depth where a bare loop faults most, the timer's blocks do not."""
    def block() -> None:
        for _ in range(5):
            _hot()

    bare = _faults_by_depth(block)
    worst = max(bare, key=lambda d: bare[d])
    timer = BlockTimer("cpu")
    timed = _deeper(worst, lambda: [_faults(lambda: timer.time_block(lambda i: _hot(), range(5)))
                                    for _ in range(2)])
    assert min(timed) < 64
    if sys.version_info < (3, 13):
        assert bare[worst] >= 5 * CALLS

"""Block timing: a block of steps timed as one, with nothing of the app's between two steps.

Measured on an H200 (bench/step_time_diag.py, HF Llama 32 layers, batch-1 inference): the
earlier per-step clock recorded two CUDA events per step, queried them after every step, reset
and read the allocator's peak (`max_memory_allocated` builds the whole stats dict: 90 µs) and
wrote records down a pipe (22 µs each), all between two timed steps. On a launch-bound loop the
GPU idles through every microsecond of that. Now a block of `BLOCK` steps runs between two
synchronisations, with `perf_counter` read at both ends; inside it the app only records one
CUDA event at each step boundary (from a pool made before the block, so no event is created
inside it) and never queries one until the block has ended. Probes, records and pipe writes
happen after the block.

A step's time is its share of the block's wall time, split in proportion to the event spans:
the spans say how the block divides between steps (a compile, a recompile, a CUDA-graph record
stand out), the wall clock says what the block cost a user's loop, synchronisations included.
This is the same figure an independent "10 steps between two `torch.cuda.synchronize()`"
measurement gives, which is what users check the app against.

Where on the Python stack a block runs is chosen too (`BlockTimer.choose_depth`). CPython up to
3.12 keeps frames in 16 KiB data-stack chunks and frees a chunk as soon as the frame that opened
it returns (CPython gh-142183, fixed in 3.13/3.14 point releases by caching one chunk): a loop
whose hot calls straddle a chunk boundary mmaps and munmaps a chunk per call, and specialised
calls deoptimise there. Measured on an H200, Python 3.12.3 (bench/host_time_diag.py), the same
launch-bound compiled HF Llama step read 8.4 to 16.3 ms depending only on how many frames lay
below the timing loop (200-400 page faults per step at the bad depths), which is why a plain
loop in one file and the app's loop in another disagreed by up to 30 % between runs. A user's
loop sits at whatever depth their script gives it; the model's cost does not depend on that, so
the timer probes a few depths once per mode and times every block at the fastest, keeping the
probe times (`ModeStats.depth_probe_ms`) so the spread is shown, not hidden.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

BLOCK = 10
# Extra frames of `_descend` (about 15 slots each) under the timing loop: 8 depths 20 frames
# apart span more than one 2048-slot chunk, so at least one lies clear of every boundary.
DEPTHS = tuple(range(0, 160, 20))
PROBE_BUDGET_MS = 2000.0  # probing stops short of this, and is skipped for steps too slow for it


@dataclass
class TimedBlock:
    """Per-step milliseconds of the steps that completed (summing to `wall_ms` unless `error`,
    the exception that stopped the block early: then the raw spans, and its step has no time);
    `probes` when the block chose the timer's depth first."""

    ms: list[float]
    wall_ms: float
    error: BaseException | None = None
    probes: list[float] = field(default_factory=list)  # ms of one step at each of DEPTHS


class BlockTimer:
    """Times blocks of steps on one device: CUDA events at step boundaries, else perf_counter."""

    def __init__(self, device: str, block: int = BLOCK) -> None:
        self.cuda = device.startswith("cuda")
        self.device = device
        self.depth = 0  # extra frames under the timing loop (choose_depth)
        self._events: list[Any] = []
        if self.cuda:
            import torch

            self._torch = torch
            self._events = [torch.cuda.Event(enable_timing=True) for _ in range(block + 1)]

    def sync(self) -> None:
        if self.cuda:
            self._torch.cuda.synchronize(self.device)

    def time_block(self, step: Callable[[int], Any], indices: Sequence[int],
                   probe_ms: float | None = None) -> TimedBlock:
        """Run `step(i)` for each index between two synchronisations, `depth` frames further
        down the stack; never raises (see error).

        With `probe_ms` (about how long a step lasts) the depth is chosen first: one-step
        probes of the block's first index at each of `DEPTHS`, in rounds alternating in
        direction (a still-warming step then favours no depth), the fastest kept; each depth's
        fastest probe lands in `TimedBlock.probes`. The probes run from this very frame, as the
        block does, so they stand where the block will. Skipped when the steps are too slow to
        probe within `PROBE_BUDGET_MS` (a host effect of a few ms is then below the noise)."""
        probes: list[float] = []
        rounds = 0 if probe_ms is None else min(6, int(PROBE_BUDGET_MS / (max(probe_ms, 1e-3) * len(DEPTHS))))
        if rounds >= 1 and indices:
            probes = [float("inf")] * len(DEPTHS)
            first = indices[:1]
            for r in range(rounds):
                for k in (range(len(DEPTHS)) if r % 2 == 0 else reversed(range(len(DEPTHS)))):
                    timed = _descend(DEPTHS[k], lambda: self._time_block(step, first))
                    if timed.error is not None:
                        return timed
                    probes[k] = min(probes[k], timed.wall_ms)
            self.depth = DEPTHS[probes.index(min(probes))]
        timed = _descend(self.depth, lambda: self._time_block(step, indices))
        timed.probes = probes
        return timed

    def _time_block(self, step: Callable[[int], Any], indices: Sequence[int]) -> TimedBlock:
        if self.cuda and len(indices) + 1 > len(self._events):
            self._events += [self._torch.cuda.Event(enable_timing=True)
                             for _ in range(len(indices) + 1 - len(self._events))]
        marks: list[Any] = []
        mark = self._cuda_mark if self.cuda else _cpu_mark
        error: BaseException | None = None
        self.sync()
        t0 = time.perf_counter()
        try:
            for i in indices:
                marks.append(mark(len(marks)))
                step(i)
        except Exception as exc:  # the steps before it keep their times
            error = exc
        if error is None:
            marks.append(mark(len(marks)))  # else the failed step's start ends the last good one
        try:
            self.sync()
        except Exception as exc:  # an asynchronous CUDA error surfaces here
            error = error or exc
            return TimedBlock([], (time.perf_counter() - t0) * 1000.0, error)
        wall = (time.perf_counter() - t0) * 1000.0
        spans = [self._span(a, b) for a, b in itertools.pairwise(marks)]
        return TimedBlock(split(wall, spans) if error is None else spans, wall, error)

    def _cuda_mark(self, k: int) -> Any:
        event = self._events[k]
        event.record()
        return event

    def _span(self, a: Any, b: Any) -> float:
        return float(a.elapsed_time(b)) if self.cuda else (b - a) * 1000.0


def _descend(n: int, then: Callable[[], TimedBlock]) -> TimedBlock:
    """`then()` called `n` frames deeper: moves the timing loop's place in the data stack."""
    return then() if n <= 0 else _descend(n - 1, then)


def _cpu_mark(k: int) -> float:
    return time.perf_counter()


def split(wall_ms: float, spans: Sequence[float]) -> list[float]:
    """`wall_ms` divided among steps in proportion to their spans (evenly if all are zero)."""
    if not spans:
        return []
    total = sum(spans)
    if total <= 0:
        return [wall_ms / len(spans)] * len(spans)
    return [wall_ms * s / total for s in spans]

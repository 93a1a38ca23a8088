"""Block timing: a block of steps timed as one, with nothing of the app's between two steps.

Anything the app does between two timed steps (querying CUDA events, reading the allocator's
peak: `max_memory_allocated` builds the whole stats dict, writing records down a pipe) is time
the GPU idles through on a launch-bound loop, and bench/step_time_diag.py shows how much a
per-step clock adds. So a block of `BLOCK` steps runs between two
synchronisations, with `perf_counter` read at both ends; inside it the app only records one
CUDA event at each step boundary (from a pool made before the block, so no event is created
inside it) and never queries one until the block has ended. Probes, records and pipe writes
happen after the block.

A step's time is its share of the block's wall time, split in proportion to the event spans:
the spans say how the block divides between steps (a compile, a recompile, a CUDA-graph record
stand out), the wall clock says what the block cost a user's loop, synchronisations included.
This is the same figure an independent "10 steps between two `torch.cuda.synchronize()`"
measurement gives, which is what users check the app against.

Where on the Python stack a block runs must not matter either, and on CPython up to 3.12 it
does: frames live in 16 KiB data-stack chunks and a chunk is freed as soon as the frame that
opened it returns (CPython gh-142183), so a loop whose hot calls straddle a chunk boundary mmaps
and munmaps a chunk per call. The same launch-bound step then takes a very different time
depending only on how many frames lie below the timing loop (bench/host_time_diag.py), so a
plain loop in one file and the app's loop in another would disagree. Probing for the fastest
depth does not work (probes do not predict blocks), and rotating blocks through depths that
tile one chunk leaves each block's time depending on its depth, so medians still move. So every
block runs at the start of a fresh chunk (`stack_chunk.on_fresh_chunk`), with ~31 KiB of room
before the next boundary: no block's hot calls straddle one, whatever the caller's depth.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from compiler_core.queries.step_stats import BLOCK
from compiler_core.timeline.stack_chunk import on_fresh_chunk


@dataclass
class TimedBlock:
    """Per-step milliseconds of the steps that completed (summing to `wall_ms` unless `error`,
    the exception that stopped the block early: then the raw spans, and its step has no time).
    `start` is the block's `perf_counter` reading, taken after the first synchronisation."""

    ms: list[float]
    wall_ms: float
    error: BaseException | None = None
    start: float = 0.0

    def starts_ms(self, origin: float) -> list[float]:
        """Each step's start in ms after `origin` (a `perf_counter` reading): the block's start
        plus the earlier steps' ms, so steps of one block lie end to end and the next block,
        started after this one's closing synchronisation, begins after its last step ends."""
        at = (self.start - origin) * 1000.0
        out = []
        for ms in self.ms:
            out.append(at)
            at += ms
        return out


class BlockTimer:
    """Times blocks of steps on one device: CUDA events at step boundaries, else perf_counter."""

    def __init__(self, device: str, block: int = BLOCK) -> None:
        self.cuda = device.startswith("cuda")
        self.device = device
        self._events: list[Any] = []
        if self.cuda:
            import torch

            self._torch = torch
            self._events = [torch.cuda.Event(enable_timing=True) for _ in range(block + 1)]

    def sync(self) -> None:
        if self.cuda:
            self._torch.cuda.synchronize(self.device)

    def time_block(self, step: Callable[[int], Any], indices: Sequence[int]) -> TimedBlock:
        """Run `step(i)` for each index between two synchronisations, at the start of a fresh
        data-stack chunk; never raises (see error)."""
        timed: TimedBlock = on_fresh_chunk(self._time_block, step, indices)
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
            return TimedBlock([], (time.perf_counter() - t0) * 1000.0, error, t0)
        wall = (time.perf_counter() - t0) * 1000.0
        spans = [self._span(a, b) for a, b in itertools.pairwise(marks)]
        return TimedBlock(split(wall, spans) if error is None else spans, wall, error, t0)

    def _cuda_mark(self, k: int) -> Any:
        event = self._events[k]
        event.record()
        return event

    def _span(self, a: Any, b: Any) -> float:
        return float(a.elapsed_time(b)) if self.cuda else (b - a) * 1000.0


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

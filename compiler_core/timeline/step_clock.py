"""Per-step timers: wall clock on CPU, CUDA events on GPU, both resolved without stalling.

A CUDA step is bracketed by two events recorded on the current stream; reading the elapsed time
needs the end event to have completed, so instead of synchronising after every step (which
would serialise host and device and change what we measure) the clock keeps the pairs pending
and `ready()` returns only those the GPU has already passed, checked with a non-blocking query.
`ready(wait=True)` drains the rest at the end of a mode. Events are pooled and reused.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any, Protocol


class StepClock(Protocol):
    def start(self) -> None: ...

    def stop(self, step: int) -> None: ...

    def ready(self, wait: bool = False) -> list[tuple[int, float]]:
        """(step, milliseconds) of the steps resolved since the last call, in step order."""
        ...


class CpuStepClock:
    """perf_counter around the step: on CPU the step's work is done when the call returns."""

    def __init__(self) -> None:
        self._t0 = 0.0
        self._done: list[tuple[int, float]] = []

    def start(self) -> None:
        self._t0 = time.perf_counter()

    def stop(self, step: int) -> None:
        self._done.append((step, (time.perf_counter() - self._t0) * 1000.0))

    def ready(self, wait: bool = False) -> list[tuple[int, float]]:
        done, self._done = self._done, []
        return done


class CudaStepClock:
    """CUDA events around the step; resolved lazily, in batches, as the GPU gets through them."""

    def __init__(self) -> None:
        import torch

        self._torch = torch
        self._pool: list[Any] = []
        self._start: Any = None
        self._pending: deque[tuple[int, Any, Any]] = deque()

    def _event(self) -> Any:
        return self._pool.pop() if self._pool else self._torch.cuda.Event(enable_timing=True)

    def start(self) -> None:
        self._start = self._event()
        self._start.record()

    def stop(self, step: int) -> None:
        end = self._event()
        end.record()
        self._pending.append((step, self._start, end))

    def ready(self, wait: bool = False) -> list[tuple[int, float]]:
        out: list[tuple[int, float]] = []
        while self._pending:
            step, begin, end = self._pending[0]
            if not wait and not end.query():
                break
            end.synchronize()
            out.append((step, float(begin.elapsed_time(end))))
            self._pending.popleft()
            self._pool += [begin, end]
        return out


def clock_for(device: str) -> StepClock:
    return CudaStepClock() if device.startswith("cuda") else CpuStepClock()

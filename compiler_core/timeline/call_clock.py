"""Per-call timers for loops the app does not run: wall clock on CPU, CUDA events on GPU,
resolved without stalling.

The run phase times its own loop in blocks (step_clock.py). A user's script (compiler_core/run/
step_timer.py) runs its own loop, so the app can only mark the calls of each compiled callable:
on CUDA, events recorded at each call boundary on the current stream give the call's span on the
device timeline (see CudaStepClock for why boundaries, not brackets); reading an elapsed time
needs the later event to have completed, so instead of synchronising after every call (which
would serialise host and device and change what we measure) the clock keeps the pairs pending
and `ready()` returns only those the GPU has already passed, checked with a non-blocking query.
`ready(wait=True)` drains the rest at the end. Its costs between two calls are measured in
docs/benchmarks.md.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Hashable
from typing import Any, Protocol

Key = Hashable  # names a step: the run loop passes (run, index) so one clock can serve two runs


class StepClock(Protocol):
    def start(self) -> None: ...

    def stop(self, key: Key) -> None: ...

    def ready(self, wait: bool = False) -> list[tuple[Key, float]]:
        """(key, milliseconds) of the steps resolved since the last call, in the order run."""
        ...


class CpuStepClock:
    """perf_counter around the step: on CPU the step's work is done when the call returns."""

    def __init__(self) -> None:
        self._t0 = 0.0
        self._done: list[tuple[Key, float]] = []

    def start(self) -> None:
        self._t0 = time.perf_counter()

    def stop(self, key: Key) -> None:
        self._done.append((key, (time.perf_counter() - self._t0) * 1000.0))

    def ready(self, wait: bool = False) -> list[tuple[Key, float]]:
        done, self._done = self._done, []
        return done


class CudaStepClock:
    """CUDA events at step boundaries; resolved lazily, in batches, as the GPU gets through them.

    Step i lasts from its own start boundary to step i+1's start boundary, so host work between
    steps counts: bracketing only the step call reads far below what the loop really takes per
    step wherever the host, not the GPU, is the bottleneck (reduce-overhead training steps).
    Steps of two runs may alternate on one clock (a mode and its paired
    eager baseline): each step then ends where the other run's next step starts. The last step
    ends at its own `stop`.
    """

    def __init__(self) -> None:
        import torch

        self._torch = torch
        self._begin: Any = None
        self._open: tuple[Key, Any, Any] | None = None  # last stopped step, awaiting next start
        self._pending: deque[tuple[Key, Any, Any]] = deque()

    def _event(self) -> Any:
        event = self._torch.cuda.Event(enable_timing=True)
        event.record()
        return event

    def start(self) -> None:
        self._begin = self._event()
        if self._open is not None:
            key, begin, _ = self._open
            self._pending.append((key, begin, self._begin))
            self._open = None

    def stop(self, key: Key) -> None:
        self._open = (key, self._begin, self._event())

    def ready(self, wait: bool = False) -> list[tuple[Key, float]]:
        if wait and self._open is not None:
            self._pending.append(self._open)
            self._open = None
        out: list[tuple[Key, float]] = []
        while self._pending:
            key, begin, end = self._pending[0]
            if not wait and not end.query():
                break
            end.synchronize()
            out.append((key, float(begin.elapsed_time(end))))
            self._pending.popleft()
        return out


def clock_for(device: str) -> StepClock:
    return CudaStepClock() if device.startswith("cuda") else CpuStepClock()

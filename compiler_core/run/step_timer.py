"""Step times from the user's own loop: every call of every compiled callable, timed.

`StepTimer.wrap` is the `on_compiled` of `CompileHook`: a compiled function comes back wrapped
(`functools.wraps`, so its attributes survive), a compiled module (`OptimizedModule`) comes back
itself with its instance `forward` wrapped, so `state_dict()`, `parameters()`, `_orig_mod` and
`isinstance` checks in the script keep working. Each callable gets a name (`Net`, `train_step`,
deduplicated with `#2`) that is its "mode" on the timeline, and its own clock from
compiler_core.timeline.call_clock, with the timeline run's rules: on CPU the call is bracketed
with perf_counter; on CUDA events mark call boundaries (a step lasts until the callable's next
call, so the loop's host work counts) and are read only once the GPU has passed them, without
synchronising; the rest is drained at the end of the run. The per-call cost is two
`perf_counter`s or one CUDA event record, a non-blocking query and, every `EMIT_EVERY` calls or
when a compile happened, one line on the events channel.

Compiles, recompiles (with Dynamo's guard-failure reasons) and CUDA-graph recordings come from
`CompileWatch` (Dynamo's compile callbacks) and are attributed to the call in progress, so they
mark the step they slowed down. `max_steps` and `request_stop` end the run at the next call of
a compiled callable by raising `StopRun`, a BaseException the script's own `except Exception`
does not swallow.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from compiler_core.capture.hooks.compile_watch import WARMUP_KINDS, CompileWatch
from compiler_core.queries.step_stats import mode_stats
from compiler_core.session.model import ModeStats, StepSample, TimelineEvent
from compiler_core.timeline.call_clock import StepClock, clock_for
from compiler_core.timeline.records import MODE_START, to_record

DAY_MS = 86_400_000.0
EMIT_EVERY = 8  # calls between batches of resolved samples when nothing else happened
AUTO = "auto"  # the clock of each callable follows the device of its first call's tensors
Emit = Callable[[dict[str, Any]], None]


class StopRun(BaseException):
    """Raised at a compiled call once the run should end (max steps, Stop): a clean end."""


class _Series:
    """One compiled callable's clock, call count and results."""

    def __init__(self, label: str, clock: StepClock | None) -> None:
        self.label = label
        self.clock = clock  # None until the first call when the device is "auto"
        self.calls = 0
        self.unsent = 0  # calls since this callable's step times were last published
        self.warmup: dict[int, bool] = {}
        self.starts: dict[int, float] = {}  # call -> its host start (StepTimer.day_start_ms)
        self.samples: list[StepSample] = []
        self.events: list[TimelineEvent] = []


class StepTimer:
    """Times compiled callables for one process; `finish()` returns samples, events, stats."""

    def __init__(self, device: str, emit: Emit, max_steps: int | None = None, prefix: str = "") -> None:
        self.device = device
        self._emit = emit
        self.max_steps = max_steps
        self.prefix = prefix  # "r1:" on rank 1 of a multi-process run
        self.series: dict[str, _Series] = {}
        self.stop_reason = ""
        self._watch = CompileWatch("")
        self._stack: list[tuple[str, int]] = []
        self._installed = False
        self.clock_devices: dict[str, str] = {}  # label -> clock chosen for it (device "auto")
        # Each call's host start is kept in ms since midnight UTC of the day the run started:
        # the wall clock every rank of a host shares and torch's chromium events use, so a
        # multi-rank trace lines ranks and compiles up; counted from the Unix epoch instead,
        # the times lose their nanoseconds as floats and a trace's steps would overlap
        self.day_start_ms = time.time() * 1000.0 // DAY_MS * DAY_MS

    # -- wrapping ----------------------------------------------------------------------------

    def wrap(self, compiled: Any, original: Any) -> Any:
        """What the script gets back from torch.compile: `compiled`, timed."""
        series = self._new_series(callable_label(original))
        inner = getattr(compiled, "forward", None) if _is_module(compiled) else compiled
        if inner is None or not callable(inner):
            return compiled
        timed = self._timed(series, inner, compiled if _is_module(compiled) else None)
        if _is_module(compiled):
            compiled.forward = timed
            return compiled
        return timed

    def _timed(self, series: _Series, fn: Callable[..., Any], module: Any = None) -> Callable[..., Any]:
        from torch.compiler import is_compiling

        owner = os.getpid()

        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            # traced as part of an enclosing compiled callable, or in a child the script forked
            # (it shares our events channel: its calls are not the run's steps)
            if is_compiling() or os.getpid() != owner:
                return fn(*args, **kwargs)
            if series.clock is None:
                self._pick_clock(series, module, args, kwargs)
            self._before(series)
            try:
                return fn(*args, **kwargs)
            finally:
                self._after(series)

        return timed

    def _pick_clock(self, series: _Series, module: Any, args: tuple[Any, ...],
                    kwargs: dict[str, Any]) -> None:
        """With device "auto", the clock follows what the callable is really called with: CUDA
        events when a CUDA tensor is among its arguments or its module's parameters, else the
        wall clock. Said once per callable (stderr and `clock_devices`, which the session keeps)."""
        device = _cuda_device(module, args, kwargs) or "cpu"
        series.clock = clock_for(device)
        why = "CUDA tensors in its calls" if device != "cpu" else "no CUDA tensor in its calls"
        self.clock_devices[series.label] = f"{device} ({why})"
        print(f"[compilescope] {series.label}: step times on the {device} clock ({why})",
              file=sys.stderr, flush=True)

    def _new_series(self, name: str) -> _Series:
        label, n = self.prefix + name, 2
        while label in self.series:
            label, n = f"{self.prefix}{name}#{n}", n + 1
        series = _Series(label, None if self.device == AUTO else clock_for(self.device))
        self.series[label] = series
        self._emit({"event": MODE_START, "mode": label, "steps": self.max_steps or 0})
        return series

    # -- per call ----------------------------------------------------------------------------

    def request_stop(self, reason: str = "stopped") -> None:
        """Called from a signal handler: the next compiled call ends the run."""
        self.stop_reason = self.stop_reason or reason

    def _before(self, series: _Series) -> None:
        if not self.stop_reason and self.max_steps is not None and series.calls >= self.max_steps:
            self.stop_reason = f"--max-steps {self.max_steps} reached ({series.label})"
        if self.stop_reason:
            raise StopRun(self.stop_reason)
        self._ensure_watch()
        self._route(self._watch.take())  # the enclosing call's so far; outside any call: dropped
        self._stack.append((series.label, series.calls))
        self._watch.mode, self._watch.step = series.label, series.calls
        assert series.clock is not None  # picked before the first call
        series.starts[series.calls] = round(time.time() * 1000.0 - self.day_start_ms, 3)
        series.clock.start()

    def _after(self, series: _Series) -> None:
        step = series.calls
        assert series.clock is not None
        series.clock.stop(step)
        series.calls += 1
        self._stack.pop()
        marks = self._watch.take()
        if self._stack:  # back inside an enclosing timed call: its step again
            self._watch.mode, self._watch.step = self._stack[-1]
        else:
            self._watch.mode = ""  # compiles between calls belong to no step
        series.warmup.setdefault(step, False)
        self._route(marks)
        series.unsent += 1
        if marks or series.unsent >= EMIT_EVERY:
            self._publish(series, wait=False)

    def _route(self, marks: list[TimelineEvent]) -> None:
        """Each compile marker to the callable whose call it happened in (nested calls: the
        innermost), flagging that step as warm-up."""
        for event in marks:
            target = self.series.get(event.mode)
            if target is None:
                continue
            target.events.append(event)
            if event.kind in WARMUP_KINDS:
                target.warmup[event.step] = True
            self._emit(to_record(event))

    def _publish(self, series: _Series, wait: bool) -> None:
        series.unsent = 0
        if series.clock is None:  # never called
            return
        for key, ms in series.clock.ready(wait=wait):
            step = int(key)  # type: ignore[call-overload]  # our own keys: call indices
            sample = StepSample(series.label, step, round(ms, 4), series.warmup.pop(step, False),
                                start_ms=series.starts.pop(step, None))
            series.samples.append(sample)
            self._emit(to_record(sample))

    def _ensure_watch(self) -> None:
        """(Re)install Dynamo's compile callbacks; the script's own `torch._dynamo.reset()`
        clears them."""
        if not self._installed or not self._watch.is_installed():
            self._watch.install()
            self._installed = True

    # -- end ---------------------------------------------------------------------------------

    def finish(self) -> tuple[list[StepSample], list[TimelineEvent], list[ModeStats]]:
        """Drain every clock (this synchronises the GPU, once) and emit each callable's figures."""
        samples: list[StepSample] = []
        events: list[TimelineEvent] = []
        stats: list[ModeStats] = []
        for series in self.series.values():
            with contextlib.suppress(Exception):  # a dead CUDA context cannot time its last steps
                self._publish(series, wait=True)
            figures = mode_stats(series.label, series.samples, series.events)
            self._emit(to_record(figures))
            samples += series.samples
            events += series.events
            stats.append(figures)
        if self._installed:
            self._watch.remove()
            self._installed = False
        return samples, events, stats


def callable_label(original: Any) -> str:
    """A short name for what the script compiled: the module's class, the function's name."""
    owner = getattr(original, "__self__", None)
    if owner is not None and _is_module(owner):  # nn.Module.compile(): torch.compile(self._call_impl)
        return type(owner).__name__
    if _is_module(original):
        return type(original).__name__
    name = getattr(original, "__qualname__", None) or getattr(original, "__name__", None)
    return str(name or type(original).__name__).replace(".<locals>", "")


def _cuda_device(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """The first CUDA device among the call's tensors (one level into lists, tuples and dicts)
    and the compiled module's parameters."""
    import torch

    values: list[Any] = [*args, *kwargs.values()]
    for value in list(values):
        if isinstance(value, list | tuple):
            values += list(value)
        elif isinstance(value, dict):
            values += list(value.values())
    if _is_module(module):
        values += [next(module.parameters(), None)]
    for value in values:
        if isinstance(value, torch.Tensor) and value.is_cuda:
            return str(value.device)
    return None


def _is_module(value: Any) -> bool:
    import torch

    return isinstance(value, torch.nn.Module)

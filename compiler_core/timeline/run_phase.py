"""The run phase: time N steps of the model in eager and under each compile mode, live.

Runs inside the worker process after capture (it needs torch and the user's model). For every
mode it resets Dynamo, compiles afresh, and runs `steps` steps of the model file's `train_step`
(or a forward under `no_grad`), streaming each step's time through `emit` as soon as it is
known. The compile is not hidden: it happens inside the first step, which is kept and flagged
`warmup=True`, like any later step that recompiled or recorded a CUDA graph. Eager always runs
first: its own curve, memory and launches.

Speedups are not taken against that first eager run, though. Every block of `PAIR_BLOCK`
compiled steps is followed by the same steps run eagerly, on the same inputs and the same clock
(`PairedEager`), and the mode's speedup divides by the median of those (`ModeStats.baseline_ms`).
A host-bound GPU loop's speed drifts by 10-30 % within a minute on a shared host (seen on an
H100: one compiled function read 10.2 and 12.8 ms per step a few seconds apart), so figures
taken minutes apart disagree by more than the speedup being measured; alternating puts both
under the same conditions. Blocks, not single steps: on CPU, the OpenMP threads of one kind of
step still spin when the other starts. It costs one eager step per compiled step;
`paired=False` turns it off.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

from compiler_core.modelfile import ModelSpec
from compiler_core.session.model import ModeStats, StepSample, TimelineEvent
from compiler_core.timeline.compile_watch import WARMUP_KINDS, CompileWatch
from compiler_core.timeline.probes import MemoryProbe, count_launches
from compiler_core.timeline.records import MODE_START, to_record
from compiler_core.timeline.stats import EAGER, mode_stats
from compiler_core.timeline.step_clock import StepClock, clock_for
from compiler_core.timeline.step_inputs import StepInputs

PAIR_BLOCK = 10
MODES = ("eager", "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
DEFAULT_STEPS = 200
CUDAGRAPH_MODES = ("reduce-overhead", "max-autotune")

Emit = Callable[[dict[str, Any]], None]
RunResult = tuple[list[StepSample], list[TimelineEvent], list[ModeStats]]


def run_phase(
    spec: ModelSpec,
    modes: list[str],
    steps: int = DEFAULT_STEPS,
    device: str = "cpu",
    emit: Emit | None = None,
    shape_change_step: int | None = None,
    paired: bool = True,
) -> RunResult:
    """Time `steps` steps per mode; returns all samples, markers and per-mode statistics.

    `emit` receives, in order: `mode_start`, then `sample` and `timeline_event` records as they
    happen, then the mode's `mode_stats` (see records.py for their shape).
    """
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise ValueError(f"unknown mode(s) {', '.join(unknown)}; choose from {', '.join(MODES)}")
    send = emit or (lambda record: None)
    ordered = list(dict.fromkeys([EAGER, *modes]))
    if hasattr(spec.model, "to"):
        spec.model.to(device)
    samples: list[StepSample] = []
    events: list[TimelineEvent] = []
    stats: list[ModeStats] = []
    for mode in ordered:
        pair = paired and mode != EAGER
        result = ModeRun(spec, mode, steps, device, send, shape_change_step, paired=pair).run()
        samples += result[0]
        events += result[1]
        stats.append(result[2])
    return samples, events, stats


def compile_model(spec: ModelSpec, mode: str) -> Any:
    """The model under `mode` ("eager": the model itself); the file's compile_options apply."""
    import torch

    if mode == EAGER:
        return spec.model
    options = {k: v for k, v in spec.compile_options.items() if k != "mode"}
    if "options" in options:  # torch.compile refuses mode= together with options=
        mode_opts = torch._inductor.list_mode_options(mode) if mode != "default" else {}
        options["options"] = {**mode_opts, **options["options"]}
        return torch.compile(spec.model, **options)
    return torch.compile(spec.model, mode=None if mode == "default" else mode, **options)


def step_function(spec: ModelSpec, model: Any) -> Callable[[tuple[Any, ...]], Any]:
    """One training step when the file defines `train_step`, else a forward under no_grad."""
    import torch

    train_step = spec.train_step
    if train_step is not None:
        return lambda inputs: train_step(model, inputs)

    def forward(inputs: tuple[Any, ...]) -> Any:
        with torch.no_grad():
            return model(*inputs)

    return forward


class ModeRun:
    """One mode's loop; holds the per-step bookkeeping so the loop body stays readable."""

    def __init__(self, spec: ModelSpec, mode: str, steps: int, device: str, emit: Emit,
                 shape_change_step: int | None, paired: bool = False) -> None:
        self.spec, self.mode, self.steps, self.device, self.emit = spec, mode, steps, device, emit
        self.inputs = StepInputs(spec, device, shape_change_step)
        self.watch = CompileWatch(mode)
        self.clock = clock_for(device)
        self.memory = MemoryProbe(device)
        self.events: list[TimelineEvent] = []
        self._meta: dict[int, tuple[bool, int | None]] = {}
        self._step_fn: Callable[[tuple[Any, ...]], Any] = lambda inputs: None
        self._mark_step: Callable[[], None] = lambda: None
        self._failed = False
        self.samples: list[StepSample] = []  # own and paired samples, as they resolved
        self.baseline = PairedEager(spec, mode, self.clock, self._add) if paired else None

    def run(self) -> tuple[list[StepSample], list[TimelineEvent], ModeStats]:
        """prepare, every step, finish; a failing step ends the mode with an `error` marker."""
        self.prepare()
        try:
            for i in range(self.steps):
                self.step(i)
        except Exception as exc:
            self.fail(exc)
        return self.finish()

    def prepare(self) -> None:
        """Fresh Dynamo state, the compiled model and the compile watch (nothing runs yet)."""
        import torch

        torch._dynamo.reset()
        model = compile_model(self.spec, self.mode)
        self._step_fn = step_function(self.spec, model)
        self._mark_step = self._cudagraph_step_marker()
        self.emit({"event": MODE_START, "mode": self.mode, "steps": self.steps})
        self.watch.install()

    def step(self, i: int) -> None:
        """Run and time step `i`; publishes whatever step times the device has resolved."""
        inputs = self.inputs(i)
        if self.inputs.changes_shape_at(i):
            self._record(TimelineEvent(self.mode, i, "shape_change", self.inputs.shape_change_reason(i)))
        self.watch.step = i
        self.memory.reset()
        self._mark_step()
        self.clock.start()
        self._step_fn(inputs)
        self.clock.stop((self, i))
        marks = self.watch.take()
        self._meta[i] = (any(e.kind in WARMUP_KINDS for e in marks), self.memory.peak())
        for e in marks:
            self._record(e)
        if self.baseline is not None:
            self.baseline.follow(i, inputs, last=i + 1 == self.steps)
        _publish(self.clock.ready())

    def fail(self, exc: BaseException) -> None:
        done = sum(1 for s in self.samples if not s.baseline_for)
        self._record(TimelineEvent(self.mode, done, "error", _one_line(exc)))
        self._failed = True

    def finish(self) -> tuple[list[StepSample], list[TimelineEvent], ModeStats]:
        """Drain pending step times, count launches, emit and return the mode's figures."""
        launches = kernels = None
        try:
            _publish(self.clock.ready(wait=True))
            if not self._failed:
                launches, kernels = self._count_launches()
        except Exception as exc:
            self.fail(exc)
        finally:
            self.watch.remove()
        cudagraphs = self.watch.cudagraph_records if self.device.startswith("cuda") else None
        stats = mode_stats(self.mode, self.samples, self.events, kernel_launches_per_step=launches,
                           kernels=kernels, cudagraph_graphs=cudagraphs)
        self.emit(to_record(stats))
        self._step_fn = lambda inputs: None  # drop the compiled model before the next mode
        _release_memory(self.device)
        return self.samples, self.events, stats

    def _record(self, event: TimelineEvent) -> None:
        self.events.append(event)
        self.emit(to_record(event))

    def accept(self, i: int, ms: float) -> None:
        """Step `i`'s time, once the clock has resolved it."""
        warmup, peak = self._meta.pop(i)
        self._add(StepSample(self.mode, i, ms, warmup, peak))

    def _add(self, sample: StepSample) -> None:
        self.samples.append(sample)
        self.emit(to_record(sample))

    def _cudagraph_step_marker(self) -> Callable[[], None]:
        """cudagraph trees reuse output memory between replays; marking each step keeps a
        caller that holds last step's loss from reading overwritten memory."""
        if self.mode in CUDAGRAPH_MODES and self.device.startswith("cuda"):
            import torch

            return torch.compiler.cudagraph_mark_step_begin
        return lambda: None

    def _count_launches(self) -> tuple[int | None, int | None]:
        inputs = self.inputs(max(self.steps - 1, 0))

        def one() -> None:
            self._mark_step()
            self._step_fn(inputs)

        return count_launches(one, self.device)


class PairedEager:
    """The eager steps interleaved with a compiled mode's: the baseline of that mode's speedup.

    Same inputs as the mode's step, same clock, no compile watch and no memory probe (the
    mode's own figures must not see them); samples carry `baseline_for=mode`.
    """

    def __init__(self, spec: ModelSpec, mode: str, clock: StepClock,
                 add: Callable[[StepSample], None]) -> None:
        self.mode, self.clock, self._add = mode, clock, add
        self._step_fn = step_function(spec, spec.model)
        self._block: list[tuple[int, tuple[Any, ...]]] = []

    def follow(self, i: int, inputs: tuple[Any, ...], last: bool = False) -> None:
        """The mode ran step `i`; after a full block (or its last step) run the block eagerly."""
        self._block.append((i, inputs))
        if len(self._block) < PAIR_BLOCK and not last:
            return
        for j, block_inputs in self._block:
            self.clock.start()
            self._step_fn(block_inputs)
            self.clock.stop((self, j))
        self._block = []

    def accept(self, i: int, ms: float) -> None:
        self._add(StepSample(EAGER, i, ms, baseline_for=self.mode))


def _publish(resolved: list[tuple[Any, float]]) -> None:
    """Hand each resolved step time to the run that stepped it (keys are (run, index))."""
    for (run, i), ms in resolved:
        run.accept(i, ms)


def _release_memory(device: str) -> None:
    import torch

    gc.collect()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        torch.cuda.empty_cache()


def _one_line(exc: BaseException) -> str:
    from compiler_core.capture.user_errors import safe_str

    text = safe_str(exc)[:2000].strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"

"""The run phase: time N steps of the model in eager and under each compile mode, live.

Runs inside the worker process after capture (it needs torch and the user's model). For every
mode it resets Dynamo, compiles afresh, and runs `steps` steps of the model file's `train_step`
(or a forward under `no_grad`) in blocks of `BLOCK` steps (step_clock.py): between two steps of
a block the app does nothing but record one CUDA event, so a launch-bound loop runs exactly as
a user's loop does; probes, compile markers and records are handled after each block, and each
block's records are emitted then (live, ten steps at a time). Each sample's `start_ms` is its
block's start (the `perf_counter` reading the block takes anyway, before its first step) plus
the earlier steps' ms of that block, counted from one origin taken when `run_phase` starts: every
mode and every paired eager block on one clock (a trace export places steps by it), and nothing
added between two timed steps.

Warm-up is marked, not hidden: the steps from a compile, recompile or CUDA-graph record to the
end of its block, and every mode's first block (eager's first steps too: they pay for lazy
initialisation), are `warmup=True` and kept out of median and p99. Steps stay slow for a while
after a compile (bench/step_time_diag.py shows it), so one step of warm-up is not enough.

Speedups are not taken against the eager run, though. Every block of compiled steps is followed
by the same steps run eagerly, on the same inputs, timed the same way (`PairedEager`), and the
mode's speedup divides by the median of those (`ModeStats.baseline_ms`): a host-bound GPU
loop's speed drifts within a minute on a shared host (docs/benchmarks.md, "The host, not the
process, ..."), so figures taken minutes apart disagree by more than the speedup being
measured. The paired block runs under the
same conditions as a plain eager loop: synchronised at both ends (no compiled work still queued
on the GPU), no probe, no compile watch, nothing emitted until it ends; its steps are warm-up
where the mode's were.

Every mode is timed before any is profiled. On CUDA, a torch.profiler session leaves NVIDIA's
CUPTI attached to the process when it ends (Kineto tears CUPTI down only under
`TEARDOWN_CUPTI=1`, which torch itself turns off around CUDA graphs; pytorch/pytorch#144455), and
from then on every kernel launch pays for it: each profile makes the paired eager steps slower
while the user's plain loop is not (docs/benchmarks.md, "The timeline runs in a fresh process:
a profiler session slows every later CUDA launch"). So the profile
pass (`profile_modes`) runs last: it compiles each mode again (Inductor's caches are warm by
then), warms it up, profiles `profile` steps and re-emits the mode's figures with the profile.
"""

from __future__ import annotations

import dataclasses
import gc
import time
from collections.abc import Callable
from typing import Any

from compiler_core.capture.hooks.compile_watch import WARMUP_KINDS, CompileWatch
from compiler_core.capture.hooks.compiler_reset import reset_compiler
from compiler_core.capture.hooks.inductor_entry import list_mode_options
from compiler_core.modelfile import ModelSpec
from compiler_core.queries.step_stats import EAGER, mode_stats
from compiler_core.session.model import ModeStats, RuntimeProfile, StepSample, TimelineEvent
from compiler_core.timeline.kernel_profile import CPU_KERNEL_PROFILE, profile_steps
from compiler_core.timeline.probes import MemoryProbe
from compiler_core.timeline.records import MODE_START, to_record
from compiler_core.timeline.step_clock import BLOCK, BlockTimer
from compiler_core.timeline.step_inputs import StepInputs

PAIR_BLOCK = BLOCK  # a mode block and its paired eager block have the same steps
PROFILE_STEPS = 3
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
    profile: int = PROFILE_STEPS,
) -> RunResult:
    """Time `steps` steps per mode; returns all samples, markers and per-mode statistics.

    `emit` receives, in order: `mode_start`, then, after each block, its `timeline_event` and
    `sample` records, then the mode's `mode_stats` (see records.py for their shape). Once every
    mode is timed, `profile` steps of each are run once more under torch.profiler
    (`ModeStats.runtime`: where the time goes, per kernel) and its `mode_stats` emitted again,
    profile included; 0 skips that.
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
    origin = time.perf_counter()  # every step's start_ms counts from here
    for mode in ordered:
        pair = paired and mode != EAGER
        result = ModeRun(spec, mode, steps, device, send, shape_change_step, paired=pair, origin=origin).run()
        samples += result[0]
        events += result[1]
        stats.append(result[2])
    if profile > 0:
        inputs = StepInputs(spec, device, shape_change_step)(max(steps - 1, 0))
        stats = profile_modes(spec, stats, events, device, inputs, profile, send)
    return samples, events, stats


PROFILE_WARM_STEPS = 3  # compile, CUDA-graph warm-up and record, then steady replays


def profile_modes(spec: ModelSpec, stats: list[ModeStats], events: list[TimelineEvent], device: str,
                  inputs: tuple[Any, ...], steps: int, emit: Emit) -> list[ModeStats]:
    """Each timed mode compiled afresh, warmed up and profiled for `steps` steps, after all
    timing is done (module docstring: a profile slows every later launch on CUDA); returns the
    figures with `runtime`, kernels and launches filled in, each re-emitted as it is ready. A
    mode whose timing ended in an error is not profiled; a profile that fails adds an `error`
    marker to the mode and leaves its timed figures as they were."""
    failed = {e.mode for e in events if e.kind == "error"}
    out = []
    for figures in stats:
        if figures.mode in failed or figures.samples == 0:
            out.append(figures)
            continue
        try:
            profiled = _profile_mode(spec, figures.mode, device, inputs, steps)
        except Exception as exc:
            events.append(TimelineEvent(figures.mode, figures.samples, "error",
                                        "profile: " + _one_line(exc)))
            emit(to_record(events[-1]))
            out.append(figures)
            continue
        finally:
            _release_memory(device)  # the compiled model is gone with _profile_mode's frame
        figures = dataclasses.replace(
            figures, kernel_launches_per_step=profiled.launches_per_step, kernels=profiled.kernels_per_step,
            runtime=_with_idle(profiled, figures.median_ms))
        emit(to_record(figures))
        out.append(figures)
    return out


def _profile_mode(spec: ModelSpec, mode: str, device: str, inputs: tuple[Any, ...],
                  steps: int) -> RuntimeProfile:
    reset_compiler()
    fn = step_function(spec, compile_model(spec, mode, device))
    mark = _cudagraph_step_marker(mode, device)

    def one() -> None:
        mark()
        fn(inputs)

    for _ in range(PROFILE_WARM_STEPS if mode != EAGER else 1):
        one()
    return profile_steps(one, device, steps)


def compile_model(spec: ModelSpec, mode: str, device: str = "") -> Any:
    """The model under `mode` ("eager": the model itself); the file's compile_options apply.

    On CPU, Inductor's C++ kernels are plain function calls a profiler cannot see unless they
    are built with `cpp.enable_kernel_profile` (a `RECORD_FUNCTION` per kernel: a no-op when no
    profiler is listening), so CPU runs compile with it; the kernel names do not change."""
    import torch

    if mode == EAGER:
        return spec.model
    options = {k: v for k, v in spec.compile_options.items() if k != "mode"}
    if device.startswith("cpu"):
        options["options"] = {**CPU_KERNEL_PROFILE, **options.get("options", {})}
    if "options" in options:  # torch.compile refuses mode= together with options=
        mode_opts = list_mode_options(mode) if mode != "default" else {}
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
    """One mode's loop, block by block; holds the bookkeeping so the loop stays readable.

    `origin` is the `perf_counter` reading the run's `start_ms` count from (run_phase passes
    one for every mode, so steps of different modes share a clock); None: this run's own start."""

    def __init__(self, spec: ModelSpec, mode: str, steps: int, device: str, emit: Emit,
                 shape_change_step: int | None, paired: bool = False, origin: float | None = None) -> None:
        self.spec, self.mode, self.steps, self.device, self.emit = spec, mode, steps, device, emit
        self.origin = time.perf_counter() if origin is None else origin
        self.inputs = StepInputs(spec, device, shape_change_step)
        self.watch = CompileWatch(mode)
        self.timer = BlockTimer(device)
        self.memory = MemoryProbe(device)
        self.events: list[TimelineEvent] = []
        self._step_fn: Callable[[tuple[Any, ...]], Any] = lambda inputs: None
        self._mark_step: Callable[[], None] = lambda: None
        self.samples: list[StepSample] = []  # own and paired samples, in run order
        self.baseline = PairedEager(spec, mode, self.timer, self._add, self.origin) if paired else None

    def run(self) -> tuple[list[StepSample], list[TimelineEvent], ModeStats]:
        """prepare, every block, finish; a failing step ends the mode with an `error` marker."""
        self.prepare()
        try:
            for first in range(0, self.steps, BLOCK):
                self.block(range(first, min(first + BLOCK, self.steps)))
        except Exception as exc:
            self.fail(exc)
        return self.finish()

    def prepare(self) -> None:
        """Fresh Dynamo state, the compiled model and the compile watch (nothing runs yet)."""
        reset_compiler()
        model = compile_model(self.spec, self.mode, self.device)
        self._step_fn = step_function(self.spec, model)
        self._mark_step = _cudagraph_step_marker(self.mode, self.device)
        self.emit({"event": MODE_START, "mode": self.mode, "steps": self.steps})
        self.watch.install()

    def block(self, indices: range) -> None:
        """Time the steps `indices` as one block; then mark, probe and emit them. A step's
        `peak_mem_bytes` is its block's peak: the allocator's peak is reset once per block."""
        inputs = {i: self.inputs(i) for i in indices}  # built outside the timed region
        for i in indices:
            if self.inputs.changes_shape_at(i):
                self._record(TimelineEvent(self.mode, i, "shape_change", self.inputs.shape_change_reason(i)))
        step = block_step(self.watch, self._mark_step, self._step_fn, inputs)
        self.memory.reset()
        timed = self.timer.time_block(step, indices)
        peak = self.memory.peak()
        marks = self.watch.take()
        for e in marks:
            self._record(e)
        warm_from = min((e.step for e in marks if e.kind in WARMUP_KINDS), default=None)
        if indices.start == 0:
            warm_from = 0  # every mode's first block: eager warms up too
        warm = [warm_from is not None and i >= warm_from for i in indices[:len(timed.ms)]]
        for i, ms, w, at in zip(indices, timed.ms, warm, timed.starts_ms(self.origin), strict=False):
            self._add(StepSample(self.mode, i, ms, w, peak, start_ms=at))
        if timed.error is not None:
            raise timed.error
        if self.baseline is not None:
            self.baseline.run_block(indices, inputs, warm)

    def fail(self, exc: BaseException) -> None:
        done = sum(1 for s in self.samples if not s.baseline_for)
        self._record(TimelineEvent(self.mode, done, "error", _one_line(exc)))

    def finish(self) -> tuple[list[StepSample], list[TimelineEvent], ModeStats]:
        """Emit and return the mode's figures (the profile pass adds kernel times later)."""
        self.watch.remove()
        cudagraphs = self.watch.cudagraph_records if self.device.startswith("cuda") else None
        stats = mode_stats(self.mode, self.samples, self.events, cudagraph_graphs=cudagraphs)
        self.emit(to_record(stats))
        self._step_fn = lambda inputs: None  # drop the compiled model before the next mode
        _release_memory(self.device)
        return self.samples, self.events, stats

    def _record(self, event: TimelineEvent) -> None:
        self.events.append(event)
        self.emit(to_record(event))

    def _add(self, sample: StepSample) -> None:
        self.samples.append(sample)
        self.emit(to_record(sample))


class PairedEager:
    """The eager blocks interleaved with a compiled mode's: the baseline of that mode's speedup.

    Same inputs as the mode's block, same timer and block shape, no compile watch and no memory
    probe (the mode's own figures must not see them); samples carry `baseline_for=mode`.
    """

    def __init__(self, spec: ModelSpec, mode: str, timer: BlockTimer,
                 add: Callable[[StepSample], None], origin: float) -> None:
        self.mode, self.timer, self._add, self.origin = mode, timer, add, origin
        self._step_fn = step_function(spec, spec.model)

    def run_block(self, indices: range, inputs: dict[int, tuple[Any, ...]], warm: list[bool]) -> None:
        fn = self._step_fn
        timed = self.timer.time_block(block_step(_Unwatched(), _no_mark, fn, inputs), indices)
        for i, ms, w, at in zip(indices, timed.ms, warm, timed.starts_ms(self.origin), strict=False):
            self._add(StepSample(EAGER, i, ms, w, baseline_for=self.mode, start_ms=at))
        if timed.error is not None:
            raise timed.error


def block_step(watch: Any, mark: Callable[[], None], fn: Callable[[tuple[Any, ...]], Any],
               inputs: dict[int, tuple[Any, ...]]) -> Callable[[int], None]:
    """One step of a timed block, the same code for a mode's blocks and their paired eager ones.

    Where a step runs on CPython's data stack decides whether its hot calls straddle a 16 KiB
    chunk boundary (step_clock.py says what that costs); each block starts at a fresh
    chunk, but frames of different code objects between the block and the model (a closure for the
    mode, a lambda for its paired eager steps) put the model's frames at different offsets, so
    the eager steps of the pair could read slower or faster than the same steps elsewhere. One
    code object for both keeps the offsets equal."""
    def step(i: int) -> None:
        watch.step = i
        mark()
        fn(inputs[i])

    return step


class _Unwatched:
    """A paired eager block's stand-in for the compile watch (the step it is told goes nowhere)."""

    step = 0


def _no_mark() -> None:
    return None


def _cudagraph_step_marker(mode: str, device: str) -> Callable[[], None]:
    """cudagraph trees reuse output memory between replays; marking each step keeps a caller
    that holds last step's loss from reading overwritten memory."""
    if mode in CUDAGRAPH_MODES and device.startswith("cuda"):
        import torch

        return torch.compiler.cudagraph_mark_step_begin
    return _no_mark


def _with_idle(profile: RuntimeProfile, median_ms: float | None) -> RuntimeProfile:
    """GPU idle per step: the steady step time (unprofiled, block-timed) minus device busy time;
    the profiled steps themselves run slower on the host, so their own gaps would overstate it."""
    if not profile.device.startswith("cuda") or median_ms is None or profile.busy_us_per_step is None:
        return profile
    idle = max(0.0, median_ms * 1000.0 - profile.busy_us_per_step)
    return dataclasses.replace(profile, idle_us_per_step=idle)


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

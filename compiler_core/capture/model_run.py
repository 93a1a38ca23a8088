"""Compile and run a model file under the recording backend: the part of a capture that is torch.

Order matters: the caller opens the trace sink first, then `compile_and_run` applies the
inspect config, compiles with `RecordingBackend`, and calls the model the way the file asks
(`train_step` for forward+backward, else a forward under `no_grad`, which yields an inference
graph). `make_inputs(step)` calls follow, so shape changes show up as recompiles.

`torch.compile(model, mode=...)` with a custom backend does not apply the mode's Inductor
options by itself; torch hands `mode`/`options` to the backend, which turns them into
`compile_fx` config patches (see recording_backend.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from compiler_core.capture.hooks.compiler_reset import reset_compiler
from compiler_core.capture.hooks.inspect_config import inspect_config
from compiler_core.capture.hooks.recording_backend import RecordingBackend
from compiler_core.modelfile import ModelSpec, to_device

Stage = Callable[[str, str], None]  # (stage, state) progress callback


def compile_options(spec: ModelSpec, mode: str | None, dynamic: bool | None) -> dict[str, Any]:
    """torch.compile kwargs: the file's compile_options, overridden by explicit mode/dynamic."""
    options = dict(spec.compile_options)
    options.pop("backend", None)  # we are the backend; Inductor still does the work
    if mode is not None:
        options["mode"] = mode
    if options.get("mode") == "default":
        options.pop("mode")
    if dynamic is not None:
        options["dynamic"] = dynamic
    if "mode" in options and "options" in options:
        # torch.compile refuses both; the mode's options plus the explicit ones is what is meant
        from compiler_core.capture.hooks.recording_backend import mode_config

        options["options"] = {**mode_config(options.pop("mode"), None, options.get("dynamic")),
                              **options["options"]}
    return options


def call_once(spec: ModelSpec, compiled: Any, inputs: tuple[Any, ...]) -> Any:
    if spec.train_step is not None:
        return spec.train_step(compiled, inputs)
    with torch.no_grad():
        return compiled(*inputs)


CUDAGRAPH_MODES = ("reduce-overhead", "max-autotune")


def _cudagraph_calls(spec: ModelSpec, compiled: Any, device: str, facts: dict[str, Any]) -> None:
    """Two more calls so CUDA graphs get recorded, best effort.

    On torch 2.11 (H100), a training step under our recording backend failed in these calls with
    "accessing tensor output of CUDAGraphs that has been overwritten", after the graphs had been
    recorded; the capture keeps what it saw and reports the problem instead of failing.
    """
    try:
        for _ in range(2):
            torch.compiler.cudagraph_mark_step_begin()  # new step: last outputs may be reused
            call_once(spec, compiled, to_device(spec.example_inputs(), device))
    except RuntimeError as exc:
        if "CUDAGraphs" not in str(exc):
            raise
        facts.setdefault("warnings", []).append(f"CUDA-graph replay calls stopped: {str(exc)[:200]}")


def compile_and_run(
    spec: ModelSpec, device: str, mode: str | None, dynamic: bool | None, input_steps: int, stage: Stage,
    facts: dict[str, Any],
) -> None:
    """Run the capture's model calls, filling `facts` for the session meta as it goes (so a
    failure half-way still leaves the mode, flags and train flag recorded)."""
    model = spec.model.to(device) if isinstance(spec.model, torch.nn.Module) else spec.model
    options = compile_options(spec, mode, dynamic)
    facts.update(mode=options.get("mode", "default"), dynamic=options.get("dynamic"), train=spec.trains)
    with inspect_config() as flags:
        facts["flags"] = flags
        reset_compiler()
        backend = RecordingBackend(dynamic=options.get("dynamic"))
        compiled = torch.compile(model, backend=backend, **options)
        stage("run", "started")
        call_once(spec, compiled, to_device(spec.example_inputs(), device))
        # CUDA graphs are recorded on a compiled function's second call and replayed from the
        # third: without those calls the capture could not say whether graphs were captured.
        if facts["mode"] in CUDAGRAPH_MODES and device.startswith("cuda"):
            _cudagraph_calls(spec, compiled, device, facts)
        stage("run", "finished")
        if spec.make_inputs is not None and input_steps > 0:
            stage("steps", "started")
            for step in range(input_steps):
                call_once(spec, compiled, to_device(spec.make_inputs(step), device))
            stage("steps", "finished")
        facts["graphs_compiled"] = backend.graphs_compiled
        if facts["mode"] not in CUDAGRAPH_MODES:
            _profile_breaks(spec, compiled, device, facts)


def _profile_breaks(spec: ModelSpec, compiled: Any, device: str, facts: dict[str, Any]) -> None:
    """One more call, profiled, on the example inputs (no recompile): the eager time between
    graphs that each break costs. CUDA-graph modes are skipped: an extra call there re-records."""
    from compiler_core.capture.break_profile import profile_eager_gaps

    try:
        gaps = profile_eager_gaps(lambda: call_once(spec, compiled, to_device(spec.example_inputs(), device)))
    except Exception as exc:  # best effort: the capture stands without measured costs
        facts.setdefault("warnings", []).append(f"profiled step for graph-break costs failed: {exc}")
        return
    if len(gaps) > 1:  # one region: no break to attribute anything to
        facts["eager_gaps"] = gaps

"""The memory-budget sweep, run in the worker: re-partition a model's training graph at several
budgets, measured.

For each `activation_memory_budget` value the model file's training step is compiled afresh
(Dynamo reset, caches off, see capture/hooks/memory_budget_patch.py) with Inductor, through a backend
whose `inner_compile` wrapper sees each partition as AOTAutograd hands it over. From the
backward graph we count what the forward saves (non-tangent backward inputs, bytes de-duplicated
by storage, as the session's saved-tensor totals) and what the partitioner recomputed (the
`is_forward`-tagged backward nodes), with the same functions the session builder uses. Then
`steps` more training steps are timed (CUDA-synchronised on a GPU) and the peak memory of one
step is read from the CUDA allocator. PyTorch itself only plots its own *estimate* of this
trade-off; here it is measured on the user's model.

The worker runs it (`python -m compiler_core.worker MODEL --budgets 1,0.5`, worker_main.py),
launched by the same clients as a capture; the clients' half, the sweep's spec and its events
decoded, is stages/memory_budget.py.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

from compiler_core.session.model import BudgetPoint, Graph


def run_budget_job(spec: Any, emit: Callable[[Any], None]) -> int:
    """The worker's sweep: one `budget` event per value; exit code as a capture's."""
    from compiler_core.capture.user_errors import describe_failure
    from compiler_core.worker import protocol
    from compiler_core.worker.protocol import Event

    emit(Event("stage", stage="budget", state="started"))
    try:
        budgets = [float(b) for b in spec.budgets.split(",") if b.strip()]
        sweep(spec.model_path, budgets, spec.device, spec.steps,
              emit=lambda pt: emit(Event("budget", data=asdict(pt))))
    except BaseException as exc:  # user code may raise anything, SystemExit included
        report = describe_failure(exc)
        emit(Event("stage", stage="budget", state="failed"))
        emit(Event.failure(report, "budget"))
        return protocol.EXIT_USER_ERROR
    emit(Event("stage", stage="budget", state="finished"))
    return protocol.EXIT_OK


def measure_budget(spec: Any, budget: float, device: str, steps: int) -> BudgetPoint:
    """Compile and run `spec` (a ModelSpec with a train_step) at one budget."""
    import torch

    from compiler_core.analysis.backward_links import recomputed_nodes
    from compiler_core.analysis.saved_tensors import saved_tensors, storage_bytes
    from compiler_core.capture.graph_records import graph_record
    from compiler_core.capture.hooks.compiler_reset import reset_compiler
    from compiler_core.capture.hooks.inductor_entry import compile_fx_functions
    from compiler_core.capture.hooks.memory_budget_patch import activation_memory_budget
    from compiler_core.modelfile import to_device

    compile_fx, compile_fx_inner = compile_fx_functions()
    graphs: list[tuple[str, Graph]] = []

    def inner(gm: torch.fx.GraphModule, inputs: Sequence[Any], **kwargs: Any) -> Any:
        part = "backward" if kwargs.get("is_backward") else "forward"
        graphs.append((part, graph_record(gm.graph, f"aot_{part}", part)))
        return compile_fx_inner(gm, inputs, **kwargs)

    def backend(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
        return compile_fx(gm, example_inputs, inner_compile=inner)

    assert spec.train_step is not None
    cuda = device.startswith("cuda")
    with activation_memory_budget(budget):
        reset_compiler()
        compiled = torch.compile(spec.model, backend=backend)
        inputs = to_device(spec.example_inputs(), device)
        _zero_grads(spec.model)
        spec.train_step(compiled, inputs)  # compiles forward, then (lazily) backward
        times: list[float] = []
        peak = None
        for i in range(steps):
            _zero_grads(spec.model)
            if cuda:
                torch.cuda.synchronize()
                if i == 0:
                    torch.cuda.reset_peak_memory_stats()
            start = time.perf_counter()
            spec.train_step(compiled, inputs)
            if cuda:
                torch.cuda.synchronize()
                if i == 0:
                    peak = int(torch.cuda.max_memory_allocated())
            times.append((time.perf_counter() - start) * 1000)
    forwards = [g for p, g in graphs if p == "forward"]
    backwards = [g for p, g in graphs if p == "backward"]
    saved = [st for fw, bw in zip(forwards, backwards, strict=False) for st in saved_tensors(fw, bw)]
    recomputed = sum(len(recomputed_nodes(fw, bw)) for fw, bw in zip(forwards, backwards, strict=False))
    return BudgetPoint(
        budget=budget, saved_bytes=storage_bytes(saved), saved_tensors=len(saved), recomputed=recomputed,
        step_ms=statistics.median(times) if times else None, peak_mem_bytes=peak,
        device=torch.cuda.get_device_name() if cuda else device, torch_version=torch.__version__,
    )  # fmt: skip


def _zero_grads(model: Any) -> None:
    if hasattr(model, "parameters"):
        for p in model.parameters():
            p.grad = None


def sweep(model_path: str, budgets: Sequence[float], device: str, steps: int,
          emit: Callable[[BudgetPoint], None] | None = None) -> list[BudgetPoint]:  # fmt: skip
    """Every budget in order; a budget that fails records its error and the sweep goes on."""
    from compiler_core.modelfile import load_model_file, with_train_choice

    spec = with_train_choice(load_model_file(model_path, device), True)
    if hasattr(spec.model, "to"):
        spec.model.to(device)
    out = []
    for b in budgets:
        try:
            point = measure_budget(spec, b, device, steps)
        except Exception as exc:  # one budget's failure is a row, not the end of the sweep
            point = BudgetPoint(budget=b, device=device, error=f"{type(exc).__name__}: {str(exc)[:300]}")
        out.append(point)
        if emit is not None:
            emit(point)
    return out

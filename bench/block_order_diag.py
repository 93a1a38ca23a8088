"""Why did a plain block of the compiled function read slower than the app's block of it?
(a step-time diagnostic, H200; findings in docs/benchmarks.md). Per round, after the app's
mode + paired-eager blocks: `real_step_times.plain_block` of the mode; V1 an exact copy of
`BlockTimer.time_block` placed here; V2 the copy without try/except; V3 without the per-step CUDA
events; V4 calling the compiled function directly instead of through a step lambda; V5 with
module-level `torch.cuda.synchronize()`; then a plain eager block. Earlier rounds of this script
(see the docs) also tried fresh inputs per step, the allocator peak reset, pinning and the
thread switch interval. Prints the threads and tracing state after the compile and the median
of each column.

    python bench/block_order_diag.py [MODEL] [MODE] [ROUNDS]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:

    from compiler_core.modelfile import load_model_file
    from compiler_core.timeline.run_phase import ModeRun, step_function
    from compiler_core.timeline.step_clock import BLOCK

    name = sys.argv[1] if len(sys.argv) > 1 else "hf_llama_infer"
    mode = sys.argv[2] if len(sys.argv) > 2 else "default"
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    spec = load_model_file(ROOT / "bench" / "models" / f"{name}.py", device="cuda")
    spec.model.to("cuda")
    run = ModeRun(spec, mode, BLOCK * rounds, "cuda", lambda r: None, None, paired=True)
    run.prepare()
    eager = step_function(spec, spec.model)
    inputs = run.inputs(0)
    import threading

    sys.path.insert(0, str(ROOT / "bench"))
    from real_step_times import plain_block

    names = ("app", "plain_block", "V1 copy of time_block", "V2 no try", "V3 no marks",
             "V4 fn directly", "V5 module sync", "eager")
    cols: dict[str, list[float]] = {k: [] for k in names}
    print("threads after prepare:", [t.name for t in threading.enumerate()])
    fn, mark = run._step_fn, run._mark_step
    step = lambda i: (mark(), fn(inputs))  # noqa: E731
    for r in range(rounds):
        run.block(range(r * BLOCK, (r + 1) * BLOCK))
        own = [s.ms for s in run.samples if not s.baseline_for and s.step >= r * BLOCK]
        if r == 0:
            from compile_frame_diag import _tracing_state

            _tracing_state()
            continue
        cols["app"].append(sum(own) / len(own))
        cols["plain_block"].append(plain_block(run.timer, fn, mark, inputs, BLOCK))
        cols["V1 copy of time_block"].append(_v1(run.timer, step, range(BLOCK)))
        cols["V2 no try"].append(_v2(run.timer, step, range(BLOCK)))
        cols["V3 no marks"].append(_v3(run.timer, step, range(BLOCK)))
        cols["V4 fn directly"].append(_v4(run.timer, fn, inputs, range(BLOCK)))
        cols["V5 module sync"].append(_v5(run.timer, step, range(BLOCK)))
        cols["eager"].append(plain_block(run.timer, eager, lambda: None, inputs, BLOCK))
    print("threads at end:", [t.name for t in threading.enumerate()])
    for k, v in cols.items():
        print(f"{name} {mode} {k}: median {statistics.median(v):.3f} ms  blocks {[round(x, 2) for x in v]}")


def _v1(timer, step, indices) -> float:
    marks = []
    mark = timer._cuda_mark
    error = None
    timer.sync()
    t0 = time.perf_counter()
    try:
        for i in indices:
            marks.append(mark(len(marks)))
            step(i)
    except Exception as exc:
        error = exc
    if error is None:
        marks.append(mark(len(marks)))
    timer.sync()
    return (time.perf_counter() - t0) * 1000.0 / len(indices)


def _v2(timer, step, indices) -> float:
    marks = []
    mark = timer._cuda_mark
    timer.sync()
    t0 = time.perf_counter()
    for i in indices:
        marks.append(mark(len(marks)))
        step(i)
    marks.append(mark(len(marks)))
    timer.sync()
    return (time.perf_counter() - t0) * 1000.0 / len(indices)


def _v3(timer, step, indices) -> float:
    timer.sync()
    t0 = time.perf_counter()
    try:
        for i in indices:
            step(i)
    except Exception:
        raise
    timer.sync()
    return (time.perf_counter() - t0) * 1000.0 / len(indices)


def _v4(timer, fn, inputs, indices) -> float:
    marks = []
    mark = timer._cuda_mark
    timer.sync()
    t0 = time.perf_counter()
    for _ in indices:
        marks.append(mark(len(marks)))
        fn(inputs)
    marks.append(mark(len(marks)))
    timer.sync()
    return (time.perf_counter() - t0) * 1000.0 / len(indices)


def _v5(timer, step, indices) -> float:
    import torch

    marks = []
    mark = timer._cuda_mark
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in indices:
        marks.append(mark(len(marks)))
        step(i)
    marks.append(mark(len(marks)))
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1000.0 / len(indices)


if __name__ == "__main__":
    main()

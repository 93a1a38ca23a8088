"""Why did the app's step times disagree with a plain block-timed loop? A GPU diagnostic.

    python bench/step_time_diag.py [MODEL.py] --json     # default: bench/models/hf_llama_infer.py

One process, one model file. Every figure is a median of blocks of 10 steps timed with
`torch.cuda.synchronize()` + `perf_counter` at both ends (the independent measurement), and each
variant alternates its blocks with plain eager blocks so host drift cancels:

1. eager's first steps, each synchronised (does eager warm up?);
2. plain eager against eager with each piece of the app's per-step bookkeeping added, one at a
   time: CUDA event pairs, event queries, memory probe, record emission through a pipe;
3. the app's own `ModeRun` loop (`ModeRun.block`) for eager, then for the mode with its
   paired eager steps, against plain blocks of the same compiled function and of eager taken
   right after (same process, same compiled state); Python GC time and threads are recorded;
4. eager's step times right after a block of the compiled mode (a transition cost?).

The point is to learn which of these costs the app's figures carry, not to pass targets; what
it found is in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
T0 = time.perf_counter()
OUT: dict[str, Any] = {}
DEVICE = "cuda"


def log(key: str, value: Any) -> None:
    OUT[key] = value
    print(f"[{time.perf_counter() - T0:6.1f}s] {key}: {value}", file=sys.stderr, flush=True)


def sync() -> None:
    import torch

    if DEVICE == "cuda":
        torch.cuda.synchronize()


def block_ms(step: Any, n: int = 10) -> float:
    sync()
    t0 = time.perf_counter()
    for i in range(n):
        step(i)
    sync()
    return (time.perf_counter() - t0) * 1000.0 / n


def alternate(steps: dict[str, Any], rounds: int) -> dict[str, float]:
    """Median ms/step per named step function, their blocks alternating."""
    blocks: dict[str, list[float]] = {k: [] for k in steps}
    for _ in range(rounds):
        for k, s in steps.items():
            blocks[k].append(block_ms(s))
    return {k: round(statistics.median(v), 4) for k, v in blocks.items()}


class GcTimer:
    def __init__(self) -> None:
        self.total = 0.0
        self.count = {0: 0, 1: 0, 2: 0}
        self._t = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._t = time.perf_counter()
        else:
            self.total += time.perf_counter() - self._t
            self.count[info["generation"]] += 1


def pipe_emit() -> Any:
    """Records go through a pipe to another process, as the worker's do."""
    from compiler_core.worker.protocol import Event

    reader = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    stream = os.fdopen(reader.stdin.fileno(), "w", buffering=1, closefd=False)  # type: ignore[union-attr]

    def emit(record: dict[str, Any]) -> None:
        stream.write(Event("timeline", t=time.monotonic(), data=record).to_json() + "\n")
        stream.flush()

    return emit


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("model", nargs="?", default=str(ROOT / "bench/models/hf_llama_infer.py"))
    p.add_argument("--modes", default="default,reduce-overhead")
    p.add_argument("--budget", type=float, default=270.0)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--json", action="store_true")
    p.add_argument("--device", default="cuda", help="cpu: smoke test of this script only")
    args = p.parse_args()
    global DEVICE
    DEVICE = args.device
    import torch

    from compiler_core.modelfile import load_model_file
    from compiler_core.session.model import StepSample
    from compiler_core.timeline.call_clock import CudaStepClock, clock_for
    from compiler_core.timeline.probes import MemoryProbe
    from compiler_core.timeline.records import to_record
    from compiler_core.timeline.run_phase import ModeRun, step_function

    log("device", torch.cuda.get_device_name() if DEVICE == "cuda" else "cpu")
    log("torch", torch.__version__)
    log("python", sys.version.split()[0])
    log("affinity", len(os.sched_getaffinity(0)))
    spec = load_model_file(args.model, device=DEVICE)
    spec.model.to(DEVICE)
    inputs = tuple(t.to(DEVICE) for t in spec.example_inputs())
    eager = step_function(spec, spec.model)

    # 1. eager's first steps
    first = []
    for _ in range(6):
        sync()
        t0 = time.perf_counter()
        eager(inputs)
        sync()
        first.append(round((time.perf_counter() - t0) * 1000, 3))
    log("eager first steps ms (each synced)", first)

    # 2. bookkeeping pieces
    clock = CudaStepClock() if DEVICE == "cuda" else clock_for(DEVICE)
    probe = MemoryProbe(DEVICE)
    emit = pipe_emit()

    def plain(i: int) -> None:
        eager(inputs)

    def events(i: int) -> None:
        clock.start()
        eager(inputs)
        clock.stop(i)

    def events_query(i: int) -> None:
        events(i)
        clock.ready()

    def memory(i: int) -> None:
        probe.reset()
        eager(inputs)
        probe.peak()

    def emitting(i: int) -> None:
        eager(inputs)
        emit(to_record(StepSample("eager", i, 1.2345, False, 123456789)))

    log("eager plain vs bookkeeping (ms/step, block medians)", alternate(
        {"plain": plain, "events": events, "events+query": events_query, "memory probe": memory,
         "emit via pipe": emitting}, rounds=8))
    clock.ready(wait=True)
    n = 2000
    t0 = time.perf_counter()
    for _ in range(n):
        probe.peak()
    log("max_memory_allocated us/call", round((time.perf_counter() - t0) * 1e6 / n, 2))
    t0 = time.perf_counter()
    for i in range(n):
        emit(to_record(StepSample("eager", i, 1.2345, False, 123456789)))
    log("emit us/record", round((time.perf_counter() - t0) * 1e6 / n, 2))

    # 3a. the shipped ModeRun loop, eager
    def app_run(mode: str, paired: bool) -> tuple[Any, Any, GcTimer, float]:
        gct = GcTimer()
        gc.callbacks.append(gct)
        run = ModeRun(spec, mode, args.steps, DEVICE, emit, None, paired=paired)
        cpu0 = time.process_time()
        w0 = time.perf_counter()
        run.prepare()
        for first in range(0, args.steps, 10):
            run.block(range(first, min(first + 10, args.steps)))
        keep = (run._step_fn, run._mark_step)
        samples, _, stats = run.finish()
        wall = time.perf_counter() - w0
        cpu = time.process_time() - cpu0
        gc.callbacks.remove(gct)
        own = [round(s.ms, 3) for s in samples if not s.baseline_for]
        base = [round(s.ms, 3) for s in samples if s.baseline_for]
        log(f"app {mode}: own steps ms", own[:15])
        if base:
            log(f"app {mode}: paired eager ms", base[:25])
        log(f"app {mode}: median / baseline / p99", [stats.median_ms, stats.baseline_ms, stats.p99_ms])
        log(f"app {mode}: gc s / counts / wall s / cpu s / threads", [
            round(gct.total, 4), gct.count, round(wall, 2), round(cpu, 2),
            [t.name for t in threading.enumerate()]])
        return keep, stats, gct, wall

    app_run("eager", False)
    log("eager plain after app eager run", alternate({"plain": plain}, rounds=6))

    for mode in [m for m in args.modes.split(",") if m]:
        if time.perf_counter() - T0 > args.budget * 0.45:
            log(f"skipped {mode}", "budget")
            continue
        c0 = time.perf_counter()
        (fn, mark), _stats, _, wall = app_run(mode, True)
        log(f"app {mode}: run wall incl compile s", round(wall, 1))

        def comp(i: int, fn: Any = fn, mark: Any = mark) -> None:
            mark()
            fn(inputs)

        for _ in range(4):
            comp(0)
        log(f"{mode}: plain blocks alternating (ms/step)",
            alternate({"eager": plain, mode: comp}, rounds=10))
        # 4. eager right after a block of the mode, each step synced
        for _ in range(10):
            comp(0)
        after = []
        for _ in range(6):
            sync()
            t0 = time.perf_counter()
            eager(inputs)
            sync()
            after.append(round((time.perf_counter() - t0) * 1000, 3))
        log(f"{mode}: eager steps right after a {mode} block (each synced)", after)
        gc.disable()
        log(f"{mode}: plain blocks, gc disabled", alternate({"eager": plain, mode: comp}, rounds=4))
        gc.enable()
        with torch.no_grad():
            log(f"{mode}: plain blocks inside an outer no_grad",
                alternate({"eager": plain, mode: comp}, rounds=4))
        del fn, comp
        gc.collect()
        if DEVICE == "cuda":
            torch.cuda.empty_cache()
        log(f"{mode}: section s", round(time.perf_counter() - c0, 1))
    log("total s", round(time.perf_counter() - T0, 1))
    if args.json:
        print(json.dumps({"figures": [], "diag": OUT}, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

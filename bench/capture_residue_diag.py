"""What does a capture leave in its process that slows the steps timed after it?

    python bench/capture_residue_diag.py MODEL.py --device cuda            # the whole matrix
    python bench/capture_residue_diag.py MODEL.py --device cuda --phase capture --json   # one process

Each phase runs in a fresh process of its own (`--phase`); the matrix (no `--phase`) runs them one
after another, twice, and prints one table. Every process loads the model file the way a capture
does (`load_model_file`), times plain eager blocks (10 steps between two synchronisations,
`perf_counter`, median over blocks), does its phase, and times the same blocks again; then it
lists what it can see of the process's state (function and dispatch modes, profiler, trace and
profile functions, sys.monitoring tools, threads, torch loggers' handlers and levels, tracked
objects, resident memory) and tries remedies one after another, timing after each:

- `none`: nothing (the two timings measure the host's drift);
- `sink`: the trace sink and stage recorders entered and left, nothing compiled under them;
- `compile`: the capture's compile and model calls (`compile_and_run` under the sink and the
  stage recorders), its profiled break-cost step included;
- `capture`: the whole capture job as the worker runs it (load, compile, build, save), steps=0;
- remedies, in order: `gc.collect()`, `torch.compiler.reset()`, `gc.freeze()`, `malloc_trim(0)`.

The model object timed is the one the capture compiled (as the timeline used it) and, beside it,
a second copy loaded from the file afresh.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PHASES = ("none", "sink", "compile", "capture")
BLOCK = 10


def eager_ms(spec: Any, device: str, blocks: int) -> float:
    """Median ms per step of `blocks` blocks of plain eager steps (first two blocks dropped)."""

    inputs = _to(spec.example_inputs(), device)
    out = [block_ms(spec, inputs, device) for _ in range(blocks + 2)]
    return statistics.median(out[2:])


def block_ms(spec: Any, inputs: Any, device: str) -> float:
    """Ms per step of one block of BLOCK eager steps between two synchronisations."""
    import torch

    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    model, train = spec.model, spec.train_step
    sync()
    t0 = time.perf_counter()
    for _ in range(BLOCK):
        if train is not None:
            train(model, inputs)
        else:
            with torch.no_grad():
                model(*inputs)
    sync()
    return (time.perf_counter() - t0) * 1000.0 / BLOCK


def _to(value: Any, device: str) -> Any:
    from compiler_core.modelfile import to_device

    return to_device(value, device)


def state() -> dict[str, Any]:
    """What of the process's state could cost time per op or per Python call."""
    import logging

    import torch

    found: dict[str, Any] = {
        "function_modes": torch._C._len_torch_function_stack(),
        "dispatch_modes": torch._C._len_torch_dispatch_stack(),
        "profiler_enabled": bool(torch.autograd.profiler._is_profiler_enabled),
        "trace": repr(sys.gettrace()), "profile": repr(sys.getprofile()),
        "threads": sorted(t.name for t in threading.enumerate()),
        "gc_objects": len(gc.get_objects()), "gc_enabled": gc.isenabled(),
        "gc_threshold": gc.get_threshold(),
        "grad_enabled": torch.is_grad_enabled(),
        "num_threads": torch.get_num_threads(),
    }
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:
        found["monitoring_tools"] = [monitoring.get_tool(i) for i in range(6) if monitoring.get_tool(i)]
    loggers = {}
    for name, logger in logging.root.manager.loggerDict.items():
        if isinstance(logger, logging.Logger) and name.startswith("torch") and \
                (logger.handlers or logger.level):
            loggers[name] = [logging.getLevelName(logger.level), len(logger.handlers)]
    found["torch_loggers"] = loggers
    try:
        with open("/proc/self/status") as f:
            found["rss_mb"] = next(int(x.split()[1]) // 1024 for x in f if x.startswith("VmRSS"))
    except OSError:
        pass
    return found


def paired(spec_a: Any, spec_b: Any, device: str, pairs: int, gc_b: bool | None = None) -> dict[str, float]:
    """Blocks of A and B alternating (drift hits both alike): median ms of each and their ratio.
    `gc_b=False` runs B's blocks with the cyclic collector off (A keeps it as it is)."""
    a, b = [], []
    for _ in range(pairs + 2):
        a.append(eager_ms(spec_a, device, 1))
        was = gc.isenabled()
        if gc_b is False:
            gc.disable()
        try:
            b.append(eager_ms(spec_b, device, 1))
        finally:
            if was:
                gc.enable()
    ma, mb = statistics.median(a[2:]), statistics.median(b[2:])
    return {"a_ms": ma, "b_ms": mb, "b_over_a": mb / ma}


def run_paired(model_path: str, device: str, pairs: int) -> dict[str, Any]:
    """The question the per-process medians cannot answer on a host that drifts 30 % a minute,
    asked in pairs inside one process: after a capture, is the captured model slower than a
    fresh copy, and does the collector (turned off for alternate blocks) account for it? The
    same pairs before the capture are the control."""
    from compiler_core.modelfile import load_model_file

    fresh = load_model_file(model_path, device=device)
    fresh.model.to(device)
    out: dict[str, Any] = {"phase": "paired", "gc_objects_before": len(gc.get_objects())}
    out["before_gc_off_vs_on"] = paired(fresh, fresh, device, pairs, gc_b=False)
    captured = do_phase("capture", model_path, device, fresh)
    captured.model.to(device)
    out["gc_objects_after"] = len(gc.get_objects())
    out["after_captured_vs_fresh"] = paired(fresh, captured, device, pairs)
    out["after_gc_off_vs_on"] = paired(fresh, fresh, device, pairs, gc_b=False)
    gc.collect()
    out["after_collect_captured_vs_fresh"] = paired(fresh, captured, device, pairs)
    out["after_collect_gc_off_vs_on"] = paired(fresh, fresh, device, pairs, gc_b=False)
    return out


def run_phase(phase: str, model_path: str, device: str, blocks: int) -> dict[str, Any]:
    from compiler_core.modelfile import load_model_file

    spec = load_model_file(model_path, device=device)
    spec.model.to(device)
    fresh = load_model_file(model_path, device=device)
    fresh.model.to(device)
    result: dict[str, Any] = {"phase": phase, "before_ms": eager_ms(spec, device, blocks)}
    result["before_state"] = state()
    captured = do_phase(phase, model_path, device, spec)
    if captured is not None:
        spec = captured
        spec.model.to(device)
    result["after_ms"] = eager_ms(spec, device, blocks)
    result["after_fresh_model_ms"] = eager_ms(fresh, device, blocks)
    result["after_state"] = state()
    remedies: list[tuple[str, Any]] = [("gc_collect", gc.collect), ("compiler_reset", _reset),
                                       ("gc_freeze", gc.freeze), ("malloc_trim", _malloc_trim)]
    for name, remedy in remedies:
        remedy()
        result[f"after_{name}_ms"] = eager_ms(spec, device, blocks)
    result["final_state"] = state()
    return result


def _reset() -> None:
    import torch

    torch.compiler.reset()


def _malloc_trim() -> None:
    import ctypes

    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def do_phase(phase: str, model_path: str, device: str, spec: Any) -> Any:
    """Runs the phase; returns the spec the capture used when it loaded its own."""
    if phase == "none":
        return None
    from compiler_core.capture.hooks.stage_hooks import stage_recorders
    from compiler_core.capture.hooks.trace_sink import TraceLogSink

    tmp = Path(tempfile.mkdtemp(prefix="cs_residue_"))
    if phase == "sink":
        with TraceLogSink(tmp / "t.log"), stage_recorders():
            pass
        return None
    if phase == "compile":
        from compiler_core.capture.model_run import compile_and_run

        with TraceLogSink(tmp / "t.log"), stage_recorders():
            compile_and_run(spec, device, None, None, 0, lambda s, st: None, {})
        return None
    from compiler_core.worker.capture_job import CaptureJob
    from compiler_core.worker.protocol import CaptureSpec

    cspec = CaptureSpec(model_path=os.path.abspath(model_path), out_path=str(tmp / "s.json"),
                        device=device, input_steps=0, steps=0)
    job = CaptureJob(cspec, lambda event: None)
    seen: dict[str, Any] = {}
    load = job._load
    job._load = lambda: seen.setdefault("spec", load())  # type: ignore[method-assign]
    job.run()
    return seen.get("spec")


def matrix(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every phase in its own fresh process, `rounds` times; then `none` again under the
    worker's environment (its env, a new session, piped output), and the CLI capture's own
    eager median (`capture --steps`), so the launcher is told apart from what runs in it."""
    from compiler_core.worker.protocol import worker_env

    rows = []
    for _round in range(args.rounds):
        for phase in PHASES:
            rows.append(_child(args, phase))
            print(_row(rows[-1]), flush=True)
    rows.append(_child(args, "none", env=worker_env(), label="none/worker-env"))
    print(_row(rows[-1]), flush=True)
    rows.append(_cli_capture(args))
    print(f"cli capture --steps: eager median {rows[-1].get('eager_ms')} ms", flush=True)
    return rows


def _child(args: argparse.Namespace, phase: str, env: dict[str, str] | None = None,
           label: str = "") -> dict[str, Any]:
    cmd = [sys.executable, __file__, args.model, "--device", args.device, "--phase", phase,
           "--blocks", str(args.blocks), "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env,
                          stdin=subprocess.DEVNULL, start_new_session=env is not None)
    last = proc.stdout.strip().splitlines()[-1:] if proc.stdout.strip() else []
    try:
        row: dict[str, Any] = json.loads(last[0])
    except (IndexError, json.JSONDecodeError):
        row = {"phase": phase, "error": proc.stderr[-2000:]}
    row["phase"] = label or phase
    return row


def _cli_capture(args: argparse.Namespace) -> dict[str, Any]:
    out = Path(tempfile.mkdtemp(prefix="cs_residue_cli_")) / "s.json"
    steps = str((args.blocks + 2) * BLOCK)
    subprocess.run([sys.executable, "-m", "compiler_core", "capture", args.model, "--device", args.device,
                    "--steps", steps, "--modes", "eager", "-o", str(out)], cwd=ROOT,
                   capture_output=True, text=True)
    summary = subprocess.run([sys.executable, "-m", "compiler_core", "summary", str(out)], cwd=ROOT,
                             capture_output=True, text=True)
    try:
        eager = json.loads(summary.stdout)["timeline"]["eager"]["median_ms"]
    except (json.JSONDecodeError, KeyError, TypeError):
        eager = None
    return {"phase": "cli", "eager_ms": eager}


def _row(r: dict[str, Any]) -> str:
    if "error" in r:
        return f"{r['phase']:<8} ERROR {r['error'][-300:]}"
    if "before_ms" not in r:
        return f"{r['phase']:<8} {r}"
    keys = ["before_ms", "after_ms", "after_fresh_model_ms", "after_gc_collect_ms",
            "after_compiler_reset_ms", "after_gc_freeze_ms", "after_malloc_trim_ms"]
    cells = " ".join(f"{r.get(k, float('nan')):8.3f}" for k in keys)
    return f"{r['phase']:<8} {cells}   ratio after/before {r['after_ms'] / r['before_ms']:.3f}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model")
    p.add_argument("--device", default="cuda")
    p.add_argument("--phase", choices=PHASES)
    p.add_argument("--blocks", type=int, default=15)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--json", action="store_true")
    p.add_argument("--paired", type=int, default=0, metavar="PAIRS",
                   help="one process: captured vs fresh model and collector off vs on, in alternating blocks")
    args = p.parse_args()
    if args.paired:
        print(json.dumps(run_paired(args.model, args.device, args.paired)))
        return
    if args.phase:
        result = run_phase(args.phase, args.model, args.device, args.blocks)
        print(json.dumps(result, default=str))
        return
    print("phase    before    after  fresh-m  gc.coll  c.reset gc.freez  m.trim   (eager ms/step)")
    rows = matrix(args)
    if args.json:
        print(json.dumps({"rows": rows}, default=str))


if __name__ == "__main__":
    main()

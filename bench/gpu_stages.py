"""GPU run for the stage panes: autotuning, CUDA-graph status and the mode comparison, measured.

Run on the GPU machine (torch 2.11+, triton, no PySide6 needed), from the repo root:

    OUT=/tmp/out python bench/gpu_stages.py            # ≤ 8 min on an H100/H200

It captures, each under the worker's own pieces (trace sink, recording backend, inspect config)
plus `stage_recorders()`:

1. the transformer example (train step) under mode="max-autotune": every tuned GEMM with all its
   candidates, and whether each partition became a CUDA graph (3 calls, so graphs get recorded);
2. `resources/examples/cudagraph_skip.py` under reduce-overhead: the deliberate skip and its reason;
3. the timeline run phase on the transformer over eager and the four modes (mode comparison).

Writes `$OUT/gpu_stages.json` (session 1 with the mode stats of 3; becomes
tests/fixtures/gpu_stages_h100.json), `$OUT/gpu_stages_skip.json` (session 2), the trace logs, and
prints a short table. On a CPU-only machine it runs the same steps (no CUDA graphs, and GEMM
autotuning only where Inductor's CPU templates apply) so the script itself can be tested.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
EXAMPLES = ROOT / "resources" / "examples"
BUDGET_S = float(os.environ.get("GPU_STAGES_BUDGET_S", 420))
T0 = time.monotonic()


def capture(model_file: Path, mode: str, trace: Path, device: str, calls: int = 3) -> Any:
    """One capture, like the worker's, with the stage recorders; returns the built Session."""
    import torch

    from compiler_core.analysis import import_trace
    from compiler_core.analysis.stage_artifacts import with_stage_artifacts
    from compiler_core.capture.hooks.inspect_config import inspect_config
    from compiler_core.capture.hooks.recording_backend import RecordingBackend
    from compiler_core.capture.hooks.stage_hooks import stage_recorders
    from compiler_core.capture.hooks.trace_sink import TraceLogSink
    from compiler_core.capture.model_run import call_once, compile_options
    from compiler_core.modelfile import load_model_file, to_device
    from compiler_core.session.model import SessionMeta

    spec = load_model_file(model_file, device=device)
    model = spec.model.to(device) if isinstance(spec.model, torch.nn.Module) else spec.model
    options = compile_options(spec, mode, None)
    torch._dynamo.reset()
    with TraceLogSink(trace), stage_recorders(), inspect_config():
        compiled = torch.compile(model, backend=RecordingBackend(), **options)
        for _ in range(calls):  # CUDA graphs: warm-up on call 1, recorded on call 2, replayed on 3
            if mode in ("reduce-overhead", "max-autotune") and device.startswith("cuda"):
                torch.compiler.cudagraph_mark_step_begin()
            call_once(spec, compiled, to_device(spec.example_inputs(), device))
        if device.startswith("cuda"):
            torch.cuda.synchronize()
    meta = SessionMeta(torch_version=torch.__version__, device=_device_name(device), mode=mode,
                       train=spec.trains, origin="fixture", origin_path=str(model_file.name))
    session = with_stage_artifacts(import_trace(trace, meta=meta), trace)
    torch._dynamo.reset()
    return session


def _device_name(device: str) -> str:
    import torch

    return torch.cuda.get_device_name() if device.startswith("cuda") else device


def mode_comparison(device: str, steps: int) -> list[Any]:
    from compiler_core.modelfile import load_model_file
    from compiler_core.timeline import run_phase

    spec = load_model_file(EXAMPLES / "transformer_block.py", device=device)
    modes = ["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"]
    stats = []
    for mode in modes:
        if time.monotonic() - T0 > BUDGET_S:
            print(f"[gpu_stages] budget spent, skipping mode {mode}", flush=True)
            continue
        _, _, mode_stats = run_phase(spec, [mode], steps=steps, device=device)
        have = {s.mode for s in stats}
        stats += [s for s in mode_stats if s.mode not in have]  # eager runs each time; keep the first
    return stats


def slim(session: Any) -> Any:
    """Drop what the stage panes don't read (full output code, graph texts, sources): small JSON."""
    compiles = []
    for c in session.compiles:
        outs = tuple(dataclasses.replace(o, output_code="") for o in c.inductor)
        compiles.append(dataclasses.replace(c, inductor=outs))
    return dataclasses.replace(session, compiles=tuple(compiles), sources={})


def report(session: Any, skip: Any) -> None:
    from compiler_core.analysis.autotune_records import ranked
    from compiler_core.analysis.cudagraph_records import skip_summary
    from compiler_core.queries.mode_compare import mode_rows, text_table

    print("\n== autotuning (transformer, max-autotune) ==")
    for c in session.compiles:
        for o in c.inductor:
            for r in o.autotune:
                timed, failed = ranked(r)
                best = f"{timed[0].name} {timed[0].time_ms:.4f} ms" if timed else "-"
                print(f"{c.compile_id} {o.graph:9} {r.op:12} {r.shape:40} {len(r.choices):3} choices "
                      f"{len(failed)} failed  best {best}  tuning {r.tuning_s or 0:.2f}s")
    print("\n== CUDA graphs ==")
    for label, s in (("transformer", session), ("cudagraph_skip", skip)):
        for c in s.compiles:
            for o in c.inductor:
                info = o.cudagraph
                state = "-" if info is None else ("captured" if info.captured else "skipped")
                why = skip_summary(info.skip_reason) if info and info.skip_reason else ""
                again = f" re-recorded {len(info.rerecords)}x" if info and info.rerecords else ""
                print(f"{label:15} {c.compile_id} {o.graph:9} {state:8} {why[:90]}{again}")
    print("\n== modes (transformer train step) ==")
    print(text_table(mode_rows(session.mode_stats)))


def main() -> int:
    import torch

    from compiler_core.session import save

    out = Path(os.environ.get("OUT", "out"))
    out.mkdir(parents=True, exist_ok=True)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    steps = int(os.environ.get("GPU_STAGES_STEPS", 30 if device == "cuda" else 5))
    trace = out / "transformer.trace.log"
    # Autotuning without CUDA graphs: on torch 2.11 a max-autotune training capture with CUDA
    # graphs can fail in backward ("accessing tensor output of CUDAGraphs that has been
    # overwritten"); the CUDA-graph status comes from the runs below.
    session = capture(EXAMPLES / "transformer_block.py", "max-autotune-no-cudagraphs", trace, device)
    print(f"[gpu_stages] transformer captured at {time.monotonic() - T0:.0f}s", flush=True)
    skip = session.__class__()
    if device == "cuda":
        try:
            ro_trace = out / "ro.trace.log"
            graphs = capture(EXAMPLES / "transformer_block.py", "reduce-overhead", ro_trace, device)
            save(slim(graphs), out / "gpu_stages_ro.json")
            print("[gpu_stages] transformer under reduce-overhead:",
                  [(c.compile_id, i.graph, i.cudagraph) for c in graphs.compiles for i in c.inductor])
        except Exception as exc:  # report, keep going: the other checks still matter
            print(f"[gpu_stages] reduce-overhead capture failed: {type(exc).__name__}: {exc}"[:400])
        skip = capture(EXAMPLES / "cudagraph_skip.py", "reduce-overhead", out / "skip.trace.log", device)
        print(f"[gpu_stages] skip example captured at {time.monotonic() - T0:.0f}s", flush=True)
    stats = mode_comparison(device, steps)
    session = dataclasses.replace(session, mode_stats=tuple(stats))
    save(slim(session), out / "gpu_stages.json")
    save(slim(skip), out / "gpu_stages_skip.json")
    report(session, skip)
    print(f"\n[gpu_stages] done in {time.monotonic() - T0:.0f}s; wrote {out}/gpu_stages.json", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

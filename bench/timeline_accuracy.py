"""Does the timeline report true step times? GPU check of the run phase against torch's Timer.

    python bench/timeline_accuracy.py --json            # on a CUDA machine (torch >= 2.11)
    python bench/timeline_accuracy.py --device cpu --blocks 1 --dim 64 --heads 4 \
        --batch 4 --seq 16 --dtype float32 --steps 30 --json    # smoke test anywhere

A stack of the transformer blocks from resources/examples/transformer_block.py (default: 6 blocks,
d=1024, bf16, batch 8×512, training step) runs through `run_phase` in eager, default and
reduce-overhead, exactly as the app runs it (each compiled step paired with an eager step, the
speedup taken against those). In the same process each mode is then compiled again and measured
independently with `torch.utils.benchmark.Timer`, and:

- speedup agreement: the app's speedup vs Timer's, within ±5%. Timer times blocks of eager and
  of the mode alternately (synchronised at both ends of each block) and divides the median
  blocks: on a host whose speed drifts by 10-30 % a minute, figures taken one after the other
  measure the drift, not the compiler (the previous version of this bench did, and missed);
- timing overhead: the app's whole block loop (`ModeRun.block`: block synchronisation, one CUDA
  event per step, compile watch, then memory probe and records between blocks) timed in bulk
  against a plain loop of the same steps, alternating, least disturbed of each; ≤ 1% of step
  time. bench/real_step_times.py does the same on real HF models.

Last line with --json: `{"figures": [{"name", "value", "unit", "target", "ok"}, ...]}`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MODES = ("eager", "default", "reduce-overhead")


def build_spec(args: argparse.Namespace) -> Any:
    import torch
    from torch import nn

    from compiler_core.modelfile import ModelSpec, execute_file

    example = execute_file(ROOT / "resources" / "examples" / "transformer_block.py")
    dtype = getattr(torch, args.dtype)
    torch.manual_seed(0)
    model = nn.Sequential(*[example.Block(args.dim, args.heads) for _ in range(args.blocks)])
    model = model.to(device=args.device, dtype=dtype)
    x = torch.randn(args.batch, args.seq, args.dim, device=args.device, dtype=dtype)

    def train_step(m: nn.Module, inputs: tuple[torch.Tensor, ...]) -> torch.Tensor:
        loss = m(*inputs).float().pow(2).mean()
        loss.backward()
        return loss

    return ModelSpec(path="bench:transformer", model=model, example_inputs=lambda: (x,),
                     train_step=train_step)


def sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def compiled_step(spec: Any, mode: str, args: argparse.Namespace) -> Any:
    """A fresh `ModeRun` for `mode`, prepared and warmed (its compile and CUDA graphs done)."""
    from compiler_core.timeline.run_phase import ModeRun

    run = ModeRun(spec, mode, args.overhead_steps, args.device, lambda r: None, None)
    run.prepare()
    step = plain(run)
    for _ in range(args.warmup):
        step()
    sync(args.device)
    return run


def plain(run: Any) -> Any:
    """The step as a user's loop would run it: no clock, no probes."""
    fn, mark, inputs = run._step_fn, run._mark_step, run.inputs(0)

    def step() -> None:
        mark()
        fn(inputs)

    return step


def timer_pair(eager: Any, run: Any, args: argparse.Namespace) -> dict[str, float]:
    """Timer's speedup for one mode: blocks of eager and of the mode, alternating, so both see
    the same host; median block of each."""
    from torch.utils.benchmark import Timer

    timers = {name: Timer(stmt="step()", globals={"step": plain(r)}) for name, r in
              (("eager", eager), ("mode", run))}
    blocks: dict[str, list[float]] = {"eager": [], "mode": []}
    for _ in range(args.timer_rounds):
        for name, timer in timers.items():
            blocks[name].append(timer.timeit(args.timer_block).median * 1000.0)
    eager_ms, mode_ms = median(blocks["eager"]), median(blocks["mode"])
    return {"eager_ms": eager_ms, "mode_ms": mode_ms, "speedup": eager_ms / mode_ms}


def overhead(run: Any, args: argparse.Namespace) -> dict[str, float]:
    """The app's block loop (`ModeRun.block`) against the plain step, in alternating bulk-timed
    runs of the same number of steps; min of each (the least disturbed)."""
    from compiler_core.timeline.step_clock import BLOCK

    plain_ms, instrumented_ms = [], []
    step = plain(run)
    n = max(BLOCK, args.overhead_steps // BLOCK * BLOCK)

    def blocks(i: int) -> None:
        if i % BLOCK == 0:
            run.block(range(i, i + BLOCK))

    for _ in range(args.repeats):
        plain_ms.append(_bulk(lambda i: step(), n, args.device))
        instrumented_ms.append(_bulk(blocks, n, args.device))
    return {"plain_ms": min(plain_ms), "instrumented_ms": min(instrumented_ms)}


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _bulk(step: Any, n: int, device: str) -> float:
    """Mean ms per step of `n` steps timed as one block, synchronised at both ends."""
    sync(device)
    t0 = time.perf_counter()
    for i in range(n):
        step(i)
    sync(device)
    return (time.perf_counter() - t0) * 1000.0 / n


def overhead_figures(mode: str, over: dict[str, float]) -> list[dict[str, Any]]:
    pct = (over["instrumented_ms"] / over["plain_ms"] - 1) * 100
    return [figure(f"{mode}: plain step (bulk)", over["plain_ms"], "ms"),
            figure(f"{mode}: timing overhead", pct, "%", "<= 1", pct <= 1.0)]


def figure(name: str, value: float | None, unit: str, target: str = "",
           ok: bool | None = None) -> dict[str, Any]:
    return {"name": name, "value": None if value is None else round(value, 4), "unit": unit,
            "target": target, "ok": ok}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda")
    p.add_argument("--blocks", type=int, default=6)
    p.add_argument("--dim", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--steps", type=int, default=200, help="run_phase steps per mode")
    p.add_argument("--overhead-steps", type=int, default=50, help="steps per bulk-timed block")
    p.add_argument("--repeats", type=int, default=4, help="bulk blocks per overhead figure")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--timer-rounds", type=int, default=15, help="eager/mode Timer block pairs")
    p.add_argument("--timer-block", type=int, default=10, help="steps per Timer block")
    p.add_argument("--modes", default=",".join(MODES[1:]))
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    import torch

    from compiler_core.queries.step_stats import speedups
    from compiler_core.timeline import run_phase

    modes = [m for m in args.modes.split(",") if m]
    spec = build_spec(args)
    # The app's own run, as a user gets it: eager, then each mode with its paired eager steps.
    _, events, stats = run_phase(spec, modes, args.steps, args.device)
    app = {s.mode: s for s in stats}
    app_speed = speedups(stats)
    device_name = torch.cuda.get_device_name() if args.device.startswith("cuda") else "cpu"
    figures = []
    eager = compiled_step(spec, "eager", args)
    eager_over = overhead(eager, args)
    figures += overhead_figures("eager", eager_over)
    for m in modes:
        run = compiled_step(spec, m, args)
        pair = timer_pair(eager, run, args)
        over = overhead(run, args)
        run.finish()
        s, a, t = app[m], app_speed[m], pair["speedup"]
        print(f"{m:16s} app median {s.median_ms:8.3f} ms (paired eager {s.baseline_ms:8.3f}, eager run "
              f"{app['eager'].median_ms:8.3f})  Timer {pair['mode_ms']:8.3f} (eager {pair['eager_ms']:8.3f})"
              f"  speedup app {a:.3f} Timer {t:.3f}  compile {s.compile_s or 0:.1f} s"
              f"  launches/step {s.kernel_launches_per_step}", file=sys.stderr)
        figures.append(figure(f"{m}: app median step", s.median_ms, "ms"))
        figures.append(figure(f"{m}: app paired eager median", s.baseline_ms, "ms"))
        figures.append(figure(f"{m}: Timer median block", pair["mode_ms"], "ms"))
        figures.append(figure(f"{m}: speedup vs eager (app)", a, "x"))
        figures.append(figure(f"{m}: speedup vs eager (Timer)", t, "x"))
        err = abs(a / t - 1) * 100 if a and t else None
        figures.append(figure(f"{m}: speedup disagreement", err, "%", "<= 5",
                              None if err is None else err <= 5.0))
        figures += overhead_figures(m, over)
        figures.append(figure(f"{m}: kernel launches per step", s.kernel_launches_per_step, "launches"))
        figures.append(figure(f"{m}: compile time", s.compile_s, "s"))
        figures.append(figure(f"{m}: recompiles", s.recompiles, "count", "0", s.recompiles == 0))
        print(json.dumps(figures[-9:]), file=sys.stderr, flush=True)  # survives a cut-off run
    eager.finish()
    figures.append(figure("eager: app median step (own run)", app["eager"].median_ms, "ms"))
    errors = [e for e in events if e.kind == "error"]
    figures.append(figure("modes that failed", len(errors), "count", "0", not errors))
    print(f"device: {device_name}, torch {torch.__version__}; "
          f"{args.blocks}x d={args.dim} {args.dtype} batch {args.batch}x{args.seq}", file=sys.stderr)
    if args.json:
        print(json.dumps({"device": device_name, "torch": torch.__version__, "figures": figures}))
    return 0 if all(f["ok"] is not False for f in figures) else 1


if __name__ == "__main__":
    raise SystemExit(main())

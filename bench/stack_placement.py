"""Is the app-vs-loop gap the user's loop's place on the Python stack?

    python bench/stack_placement.py --device cuda --models hf_gptneox_train,hf_bart_train,hf_qwen2_infer \
        --steps 100 --rounds 2 --json
    CS_LAYERS=1 CS_CORPUS_TINY=1 python bench/stack_placement.py --device cpu --models hf_gptneox_train \
        --steps 20 --rounds 1

On CPython 3.11/3.12 frames live in 16 KiB data-stack chunks, freed as soon as the frame that
opened one returns (CPython gh-142183), so a launch-bound loop's speed depends on how many frames
lie below it. The app times every block at the start of a fresh chunk; a user's loop
(`bench/scripts/plain_loop.py`, imports nothing of CompileScope) sits wherever its script puts
it. bench/timeline_truth.py finds the two disagreeing by up to ±8 % on GPU; this asks whether
the loop's stack placement explains that.

For each model (resolved as timeline_truth resolves it, modes from its MODELS) and each round, in
fresh processes: the app (`capture` then `summary`, timeline_truth's `app_run`), and the loop
with `--placement natural` (where its script puts it), `fresh` (every block at a fresh chunk,
as the app) and `sweep` (blocks rotated through 16 pad sizes tiling one chunk). Per model and
mode it prints the app's median, the natural and fresh loop medians, the sweep's per-offset
medians min..max, and the errors app/natural - 1 and app/fresh - 1 (paired per round, median over
rounds). If the app agrees with the fresh-chunk loop but not the natural one, the gap is the
loop's stack placement, not the app's timing. `--json` prints, as the last line,
{"figures": [...]}; `--out DIR` writes each model's raw runs.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("timeline_truth", ROOT / "bench" / "timeline_truth.py")
assert _spec is not None and _spec.loader is not None
truth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(truth)

PLACEMENTS = ("natural", "fresh", "sweep")
TARGET = 0.05


def loop_run(model: Path, device: str, steps: int, modes: str, placement: str) -> dict[str, Any]:
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, str(ROOT / "bench/scripts/plain_loop.py"), str(model), "--device",
                           device, "--steps", str(steps), "--modes", modes, "--placement", placement],
                          capture_output=True, text=True, cwd=model.parent)
    if proc.returncode != 0:
        return {"error": proc.stderr[-1500:]}
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    result["wall_s"] = time.monotonic() - t0
    return result


def median_of(run: dict[str, Any], mode: str) -> float | None:
    if "error" in run:
        return None
    if mode == "eager":
        return run.get("eager_ms")
    return (run.get("modes", {}).get(mode) or {}).get("median_ms")


def speedup_of(run: dict[str, Any], mode: str) -> float | None:
    if "error" in run or mode == "eager":
        return None
    return (run.get("modes", {}).get(mode) or {}).get("speedup")


def spread(values: list[float | None]) -> float | None:
    """(max - min) / min of a loop's own rounds: above the target, the host is too noisy to judge."""
    vs = [v for v in values if v]
    return (max(vs) - min(vs)) / min(vs) if len(vs) > 1 else None


def offsets_of(run: dict[str, Any], mode: str) -> list[float]:
    if "error" in run:
        return []
    if mode == "eager":
        return run.get("eager_by_offset") or []
    return ((run.get("by_offset") or {}).get(mode) or {}).get("own") or []


def paired_error(app: list[float | None], loop: list[float | None]) -> float | None:
    ratios = [a / b for a, b in zip(app, loop, strict=True) if a is not None and b]
    return statistics.median(ratios) - 1.0 if ratios else None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda")
    p.add_argument("--models", default="hf_gptneox_train,hf_bart_train,hf_qwen2_infer")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--placements", default=",".join(PLACEMENTS),
                   help="the loop's placements to run (default all: natural,fresh,sweep)")
    p.add_argument("--out", type=Path, help="folder for each model's raw runs")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    figures: list[dict[str, Any]] = []
    lines: list[str] = []
    for name in [n for n in args.models.split(",") if n]:
        modes = truth.MODELS.get(name, "default")
        model = truth.model_file(name)
        placements = [x for x in args.placements.split(",") if x in PLACEMENTS]
        runs: dict[str, list[dict[str, Any]]] = {k: [] for k in ("app", *PLACEMENTS)}
        for r in range(args.rounds):
            order = ["app", *placements]
            order = order[r % len(order):] + order[:r % len(order)]  # rotate who goes first
            for label in order:
                if label == "app":
                    run = truth.app_run(model, args.device, args.steps, modes)
                else:
                    run = loop_run(model, args.device, args.steps, modes, label)
                runs[label].append(run)
                print(f"# {name} round {r} {label}: {json.dumps(run)[:300]}", flush=True)
            if args.out:
                args.out.mkdir(parents=True, exist_ok=True)
                (args.out / f"stack_placement_{name}.json").write_text(json.dumps(runs))
        for label, rs in runs.items():
            for run in rs:
                if "error" in run:
                    lines.append(f"{name:16} {label} run failed: {run['error'][-400:]}")
        for mode in ["eager", *modes.split(",")]:
            app = [median_of(x, mode) for x in runs["app"]]
            nat = [median_of(x, mode) for x in runs["natural"]]
            fresh = [median_of(x, mode) for x in runs["fresh"]]
            per_run = [offsets_of(x, mode) for x in runs["sweep"]]
            offs = [v for o in per_run for v in o]
            err_nat, err_fresh = paired_error(app, nat), paired_error(app, fresh)
            # the sweep's spread within one run (rounds apart would add the host's drift)
            spreads = [(max(o) - min(o)) / min(o) for o in per_run if o]
            sweep_spread = statistics.median(spreads) if spreads else None

            def cell(values: list[float | None]) -> str:
                return "/".join("-" if v is None else f"{v:.3f}" for v in values)

            def pct(e: float | None) -> str:
                return "   n/a" if e is None else f"{e * 100:+6.1f} %"

            sweep_cell = f"{min(offs):.3f}..{max(offs):.3f}" if offs else "-"
            lines.append(f"{name:16} {mode:16} app {cell(app)} | natural {cell(nat)} | fresh {cell(fresh)}"
                         f" | sweep {sweep_cell} ms | app/natural {pct(err_nat)} app/fresh {pct(err_fresh)}")
            checks = [("median", "fresh-chunk", err_fresh, spread(fresh)),
                      ("median", "natural", err_nat, spread(nat))]
            if mode != "eager":
                app_s = [speedup_of(x, mode) for x in runs["app"]]
                fresh_s = [speedup_of(x, mode) for x in runs["fresh"]]
                err_s = paired_error(app_s, fresh_s)
                lines.append(f"{name:16} {mode:16} speedup app {cell(app_s)} | fresh {cell(fresh_s)} | "
                             f"app/fresh {pct(err_s)}")
                checks.append(("speedup", "fresh-chunk", err_s, spread(fresh_s)))
            for what, label, err, noise in checks:
                noisy = noise is not None and noise > TARGET
                note = f" (noisy host: loops {noise * 100:.0f} % apart)" if noisy else ""
                figures.append({"name": f"{name} {mode} app vs {label} loop {what} error{note}",
                                "value": None if err is None else round(err, 4), "unit": "fraction",
                                "target": TARGET,
                                "ok": None if err is None or noisy else abs(err) <= TARGET})
            if sweep_spread is not None:  # only where the sweep ran
                figures.append({"name": f"{name} {mode} user loop median spread over stack offsets (one run)",
                                "value": round(sweep_spread, 4), "unit": "fraction",
                                "target": None, "ok": None})
    print(f"device {args.device}, {args.steps} steps per mode, {args.rounds} rounds; "
          f"Python {sys.version.split()[0]}; medians ms per step, per round app/natural/fresh; "
          "sweep = per-offset medians min..max over rounds")
    print("\n".join(lines))
    if args.json:
        print(json.dumps({"figures": figures}))


if __name__ == "__main__":
    main()

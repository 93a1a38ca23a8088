"""Does the app's timeline say what the user's own loop says? Checked the way a user checks it.

    python bench/timeline_truth.py --device cuda --json
    CS_LAYERS=1 python bench/timeline_truth.py --device cpu --steps 30 --models hf_t5_train --rounds 1

For each model file, in fresh processes, `--rounds` times, alternating which goes first:

- the app, through its CLI: `python -m compiler_core capture MODEL --device D --steps N --modes
  eager,MODES -o s.json`, then `python -m compiler_core summary s.json` (per mode: median ms per
  step, the paired eager median, speedup);
- the user's loop: `bench/scripts/plain_loop.py` (imports nothing of CompileScope): the same
  model file, each mode compiled with `torch.compile(mode=...)`, blocks of 10 steps between two
  synchronisations, compiled and eager blocks alternating, medians over blocks.

Per model and mode it prints both side by side and the error of the app's median and speedup
against the loop's (means over rounds). Hosts are noisy: when the loop's own rounds disagree
with each other by more than the target, that figure is reported as "noisy" (ok = None), not
passed or failed. Target: every median and speedup within ±5 %.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MODELS = {  # model file -> compile modes timed besides eager
    "hf_qwen2_infer": "default,reduce-overhead",
    "hf_gpt2_train": "default",
    "tv_vit_train": "default",
    "hf_t5_train": "default",
}
TARGET = 0.05


def app_run(model: Path, device: str, steps: int, modes: str) -> dict[str, Any]:
    out = Path(tempfile.mkdtemp(prefix="cs_truth_")) / "s.json"
    t0 = time.monotonic()
    cap = subprocess.run([sys.executable, "-m", "compiler_core", "capture", str(model), "--device", device,
                          "--steps", str(steps), "--modes", f"eager,{modes}", "-o", str(out)],
                         cwd=ROOT, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if cap.returncode != 0:
        return {"error": (cap.stderr or cap.stdout)[-1500:]}
    summary = subprocess.run([sys.executable, "-m", "compiler_core", "summary", str(out)], cwd=ROOT,
                             capture_output=True, text=True)
    timeline = json.loads(summary.stdout)["timeline"]
    result: dict[str, Any] = {"wall_s": wall, "eager_ms": timeline["eager"]["median_ms"], "modes": {}}
    for mode in modes.split(","):
        row = timeline.get(mode) or {}
        result["modes"][mode] = {k: row.get(k) for k in ("median_ms", "baseline_ms", "speedup")}
    return result


def plain_run(model: Path, device: str, steps: int, modes: str) -> dict[str, Any]:
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, str(ROOT / "bench/scripts/plain_loop.py"), str(model), "--device",
                           device, "--steps", str(steps), "--modes", modes], capture_output=True, text=True,
                          cwd=model.parent)
    if proc.returncode != 0:
        return {"error": proc.stderr[-1500:]}
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    result["wall_s"] = time.monotonic() - t0
    return result


def spread(values: list[float]) -> float:
    """Largest relative disagreement between rounds (0 with one round)."""
    return (max(values) - min(values)) / statistics.mean(values) if len(values) > 1 else 0.0


def compare(name: str, app: list[dict[str, Any]], plain: list[dict[str, Any]], modes: str,
            figures: list[dict[str, Any]], lines: list[str]) -> None:
    ok_app = [a for a in app if "error" not in a]
    ok_plain = [p for p in plain if "error" not in p]
    if not ok_app or not ok_plain:
        errors = [r["error"] for r in app + plain if "error" in r]
        lines.append(f"{name}: FAILED {errors[0][-600:] if errors else ''}")
        figures.append({"name": f"{name} runs", "value": None, "unit": "", "target": "both run", "ok": False})
        return
    rows = [("eager median", [a["eager_ms"] for a in ok_app], [p["eager_ms"] for p in ok_plain], "ms")]
    for mode in modes.split(","):
        rows.append((f"{mode} median", [a["modes"][mode]["median_ms"] for a in ok_app],
                     [p["modes"][mode]["median_ms"] for p in ok_plain], "ms"))
        rows.append((f"{mode} speedup", [a["modes"][mode]["speedup"] for a in ok_app],
                     [p["modes"][mode]["speedup"] for p in ok_plain], "x"))
    for label, app_values, plain_values, unit in rows:
        if None in app_values:
            lines.append(f"{name:16} {label:26} app has no figure")
            figures.append({"name": f"{name} {label} error", "value": None, "unit": "%",
                            "target": "within ±5 %", "ok": False})
            continue
        a, p = statistics.mean(app_values), statistics.mean(plain_values)
        err = a / p - 1.0
        noise = spread(plain_values)
        ok = None if noise > TARGET else abs(err) <= TARGET
        verdict = "noisy host" if ok is None else ("ok" if ok else "OFF")
        cells = " ".join(f"{v:8.3f}" for v in app_values) + " | " + \
            " ".join(f"{v:8.3f}" for v in plain_values)
        lines.append(f"{name:16} {label:26} app {a:8.3f} loop {p:8.3f} {unit:2} err {err * 100:+6.1f} % "
                     f"loop spread {noise * 100:4.1f} %  {verdict}   [{cells}]")
        figures.append({"name": f"{name} {label} error", "value": round(err * 100, 2), "unit": "%",
                        "target": "within ±5 %", "ok": ok})


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda")
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    figures: list[dict[str, Any]] = []
    lines: list[str] = []
    for name in args.models.split(","):
        modes = MODELS.get(name, "default")
        model = ROOT / "bench" / "models" / f"{name}.py"
        app: list[dict[str, Any]] = []
        plain: list[dict[str, Any]] = []
        for r in range(args.rounds):
            order = [("app", app_run, app), ("loop", plain_run, plain)]
            for label, run, into in (order if r % 2 == 0 else order[::-1]):
                into.append(run(model, args.device, args.steps, modes))
                print(f"# {name} round {r} {label}: {json.dumps(into[-1])[:400]}", flush=True)
        compare(name, app, plain, modes, figures, lines)
    print(f"device {args.device}, {args.steps} steps per mode, {args.rounds} rounds; "
          f"CS_LAYERS={os.environ.get('CS_LAYERS', '')}")
    print("\n".join(lines))
    if args.json:
        print(json.dumps({"figures": figures}))


if __name__ == "__main__":
    main()

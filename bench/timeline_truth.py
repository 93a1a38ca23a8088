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
against the loop's: per round, the app's figure over the loop's from the run next to it (a
paired ratio, so drift between minutes hits both), the error being the median of those ratios
minus one, shown with their spread. Hosts are noisy: when the loop's own rounds disagree with
each other by more than the target, that figure is reported as "noisy" (ok = None), not passed
or failed. Target: every median and speedup within ±5 %.

`--gpus 0,1,2,3` runs the models concurrently, one per GPU at a time (`CUDA_VISIBLE_DEVICES`),
each model's app and loop runs still one after the other on its own GPU, and both confined to
that GPU's share of the cores next to it (the GPUs sharing a NUMA node split its cores; a
compile's worker pool inherits the share), so one model's compile bursts cannot take the cores
another model's timed loop runs on. `--cores N` (one GPU) pins the app and the loop alike to the
N cores next to GPU 0 (bench/loop_spread.py measures whether that quiets a host). `--out DIR`
writes each model's raw runs there as soon as they end.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import os
import queue
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
    # corpus entries (bench/corpus/models): architectures no bench/models file was tuned on
    "hf_gptneox_train": "default",
    "hf_bart_train": "default",
    "tv_convnext_t_infer": "default",
    "hf_qwen2moe_infer": "default",
}
DEFAULT_MODELS = "hf_qwen2_infer,hf_gptneox_train,hf_bart_train,tv_convnext_t_infer"
TARGET = 0.05


Env = dict[str, str] | None


PIN_VAR = "CS_TRUTH_CORES"  # how a run's core share travels to its subprocess launch


NO_ASLR_VAR = "CS_TRUTH_NO_ASLR"  # "1": the run's processes get a fixed address-space layout
ADDR_NO_RANDOMIZE = 0x0040000  # personality(2) flag, as `setarch -R` sets it


def _pin(env: Env) -> Any:
    """The preexec step of a run: its core share and, when asked, no address-space randomisation
    (both inherited by the run's own children, the app's worker and compile pool included)."""
    cores = (env or {}).get(PIN_VAR)
    fixed_layout = (env or {}).get(NO_ASLR_VAR) == "1"
    if not cores and not fixed_layout:
        return None
    share = {int(c) for c in cores.split(",")} if cores else None

    def preexec() -> None:
        if share:
            os.sched_setaffinity(0, share)
        if fixed_layout:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.personality(libc.personality(0xFFFFFFFF) | ADDR_NO_RANDOMIZE)

    return preexec


def cores_near(gpus: list[str]) -> dict[str, set[int]]:
    """Each GPU's share of the cores allowed here: its NUMA node's (sysfs `local_cpulist` of its
    PCI device), split evenly among the GPUs on that node; all allowed cores when unknown."""
    allowed = sorted(os.sched_getaffinity(0))
    bus: dict[str, str] = {}
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(["nvidia-smi", "--query-gpu=index,pci.bus_id", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout
        bus = {i.strip(): b.strip() for i, b in (line.split(",") for line in out.splitlines() if "," in line)}
    local: dict[str, tuple[int, ...]] = {}
    for g in gpus:
        cpus: set[int] = set()
        with contextlib.suppress(KeyError, OSError, ValueError):
            domain, rest = bus[g].split(":", 1)
            text = Path(f"/sys/bus/pci/devices/{domain[-4:]}:{rest}".lower() + "/local_cpulist").read_text()
            for part in text.strip().split(","):
                lo, _, hi = part.partition("-")
                cpus |= set(range(int(lo), int(hi or lo) + 1))
        local[g] = tuple(c for c in allowed if c in cpus) or tuple(allowed)
    shares: dict[str, set[int]] = {}
    for node in set(local.values()):
        members = [g for g in gpus if local[g] == node]
        k = max(1, len(node) // len(members))
        for i, g in enumerate(members):
            shares[g] = set(node[i * k:(i + 1) * k]) or set(node)
    return shares


def pinned_cores(count: int, device: str) -> str:
    """The first `count` cores next to GPU 0 (all allowed cores off CUDA), as PIN_VAR's value;
    "" for no pinning. Both sides of a comparison get the same cores, so a scheduler moving the
    timed thread between cores or NUMA nodes cannot favour one of them."""
    if count <= 0:
        return ""
    near = cores_near(["0"]).get("0") if device.startswith("cuda") else None
    cores = sorted(near or os.sched_getaffinity(0))[:count]
    return ",".join(map(str, cores))


def app_run(model: Path, device: str, steps: int, modes: str, env: Env = None) -> dict[str, Any]:
    out = Path(tempfile.mkdtemp(prefix="cs_truth_")) / "s.json"
    t0 = time.monotonic()
    cap = subprocess.run([sys.executable, "-m", "compiler_core", "capture", str(model), "--device", device,
                          "--steps", str(steps), "--modes", f"eager,{modes}", "-o", str(out)],
                         cwd=ROOT, capture_output=True, text=True, env=env, preexec_fn=_pin(env))
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


def plain_run(model: Path, device: str, steps: int, modes: str, env: Env = None) -> dict[str, Any]:
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, str(ROOT / "bench/scripts/plain_loop.py"), str(model), "--device",
                           device, "--steps", str(steps), "--modes", modes], capture_output=True, text=True,
                          cwd=model.parent, env=env, preexec_fn=_pin(env))
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
    both = [(a, p) for a, p in zip(app, plain, strict=True) if "error" not in a and "error" not in p]
    ok_app, ok_plain = [a for a, _ in both], [p for _, p in both]
    if not both:
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
        ratios = [x / y for x, y in zip(app_values, plain_values, strict=True)]
        err = statistics.median(ratios) - 1.0
        noise = spread(plain_values)
        ok = None if noise > TARGET else abs(err) <= TARGET
        verdict = "noisy host" if ok is None else ("ok" if ok else "OFF")
        cells = " ".join(f"{v:8.3f}" for v in app_values) + " | " + \
            " ".join(f"{v:8.3f}" for v in plain_values)
        lines.append(f"{name:16} {label:26} err {err * 100:+6.1f} % (paired {min(ratios) - 1:+.1%}.."
                     f"{max(ratios) - 1:+.1%}) loop spread {noise * 100:4.1f} %  {verdict}   "
                     f"[app {cells} {unit}]")
        figures.append({"name": f"{name} {label} error", "value": round(err * 100, 2), "unit": "%",
                        "target": "within ±5 %", "ok": ok})


def model_file(name: str) -> Path:
    """bench/models/NAME.py, else the corpus entry of that name."""
    own = ROOT / "bench" / "models" / f"{name}.py"
    return own if own.exists() else ROOT / "bench" / "corpus" / "models" / f"{name}.py"


def one_model(name: str, args: argparse.Namespace, gpus: queue.Queue[str | None]) -> tuple[list[Any], ...]:
    """Every round of one model on one GPU taken from `gpus` (given back when done)."""
    modes = MODELS.get(name, "default")
    model = model_file(name)
    gpu = gpus.get()
    env = None if gpu is None else {**os.environ, "CUDA_VISIBLE_DEVICES": gpu}
    if env is not None and gpu in args.shares:
        env[PIN_VAR] = ",".join(map(str, sorted(args.shares[gpu])))
    if env is None and args.pinned:
        env = {**os.environ, PIN_VAR: args.pinned}
    app: list[dict[str, Any]] = []
    plain: list[dict[str, Any]] = []
    try:
        for r in range(args.rounds):
            order = [("app", app_run, app), ("loop", plain_run, plain)]
            for label, run, into in (order if r % 2 == 0 else order[::-1]):
                into.append(run(model, args.device, args.steps, modes, env))
                print(f"# {name} gpu {gpu} round {r} {label}: {json.dumps(into[-1])[:400]}", flush=True)
            if args.out:
                args.out.mkdir(parents=True, exist_ok=True)
                (args.out / f"truth_{name}.json").write_text(json.dumps({"app": app, "loop": plain}))
    finally:
        gpus.put(gpu)
    return app, plain


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda")
    p.add_argument("--models", default=DEFAULT_MODELS)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--gpus", default="",
                   help="comma-separated GPU indices: models run concurrently, one per GPU")
    p.add_argument("--cores", type=int, default=0,
                   help="one GPU: pin the app and the loop alike to this many cores next to GPU 0")
    p.add_argument("--out", type=Path, help="folder for each model's raw runs")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    names = args.models.split(",")
    gpus: queue.Queue[str | None] = queue.Queue()
    listed = [g for g in args.gpus.split(",") if g]
    for g in listed or [None]:
        gpus.put(g)
    args.shares = cores_near(listed) if listed and args.device.startswith("cuda") else {}
    args.pinned = pinned_cores(args.cores, args.device) if not listed else ""
    if args.pinned:
        print(f"# one GPU, app and loop pinned to cores {args.pinned}", flush=True)
    for g, share in args.shares.items():
        print(f"# GPU {g}: cores {min(share)}-{max(share)} ({len(share)})", flush=True)
    with concurrent.futures.ThreadPoolExecutor(max(1, gpus.qsize())) as pool:
        runs = dict(zip(names, pool.map(lambda n: one_model(n, args, gpus), names), strict=True))
    figures: list[dict[str, Any]] = []
    lines: list[str] = []
    for name in names:
        app, plain = runs[name]
        compare(name, app, plain, MODELS.get(name, "default"), figures, lines)
    print(f"device {args.device}, {args.steps} steps per mode, {args.rounds} rounds; "
          f"CS_LAYERS={os.environ.get('CS_LAYERS', '')}; GPUs {args.gpus or 'one'}")
    print("\n".join(lines))
    if args.json:
        print(json.dumps({"figures": figures}))


if __name__ == "__main__":
    main()

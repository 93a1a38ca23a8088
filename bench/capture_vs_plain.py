"""Live capture of a deep model with the CLI vs a plain `torch.compile` of it, on a GPU.

Both run in fresh processes with the same cache state: `TORCHINDUCTOR_FORCE_DISABLE_CACHES=1`
(every compile is a real one) and a fresh TORCHINDUCTOR_CACHE_DIR / TMPDIR per run. The plain
child does the capture's model work and nothing else: load the model file, move it to the device,
`torch.compile` it with the file's options, one `train_step` (or no-grad forward) on the example
inputs, then `make_inputs(step)` for the capture's input steps, synchronise, and `os._exit` (the
capture's worker skips interpreter teardown too). The capture is the user's command,
`python -m compiler_core capture MODEL --device DEV -o OUT`, end to end: worker start, trace log,
graph records, session build and save. Runs alternate plain/capture so drift hits both.

    python3 bench/capture_vs_plain.py [--model bench/models/hf_llama_train.py] [--device cuda]

Prints one line per figure; with --json the last line is `{"figures": [...]}`. Target:
capture / plain ≤ 1.10.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_figures import figure as _figure
from bench_figures import report

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = ROOT / "bench" / "models" / "hf_llama_train.py"
INPUT_STEPS = 4  # the capture CLI's default --input-steps

PLAIN = r"""
import os, sys, torch
from compiler_core.modelfile import load_model_file, to_device
from compiler_core.capture.model_run import call_once
path, device, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
spec = load_model_file(path, device=device)
model = spec.model.to(device) if isinstance(spec.model, torch.nn.Module) else spec.model
compiled = torch.compile(model, **spec.compile_options)
call_once(spec, compiled, to_device(spec.example_inputs(), device))
if spec.make_inputs is not None:
    for step in range(steps):
        call_once(spec, compiled, to_device(spec.make_inputs(step), device))
if device.startswith("cuda"):
    torch.cuda.synchronize()
os._exit(0)
"""


def _env(scratch: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(TORCHINDUCTOR_FORCE_DISABLE_CACHES="1", TORCHINDUCTOR_CACHE_DIR=str(scratch / "inductor"),
               TMPDIR=str(scratch / "tmp"), PYTHONPATH=str(ROOT))  # fmt: skip
    (scratch / "tmp").mkdir(parents=True, exist_ok=True)
    return env


def _timed(kind: str, model: Path, device: str, scratch: Path) -> float:
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    if kind == "capture":
        cmd = [sys.executable, "-m", "compiler_core", "capture", str(model), "--device", device,
               "-o", str(scratch / "s.json"), "-q"]  # fmt: skip
    else:
        cmd = [sys.executable, "-c", PLAIN, str(model), device, str(INPUT_STEPS)]
    t = time.perf_counter()
    done = subprocess.run(cmd, env=_env(scratch), cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"{kind} failed ({done.returncode}):\n{(done.stdout + done.stderr)[-3000:]}")
    if kind == "capture":
        size = (scratch / "s.json").stat().st_size
        print(f"  capture session {size / 1e6:.1f} MB", file=sys.stderr)
    shutil.rmtree(scratch, ignore_errors=True)
    return elapsed



def main() -> int:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    times: dict[str, list[float]] = {"plain": [], "capture": []}
    with tempfile.TemporaryDirectory(prefix="capture-vs-plain-") as tmp:
        for i in range(args.runs):
            for kind in ("plain", "capture"):
                times[kind].append(_timed(kind, args.model, args.device, Path(tmp) / f"{kind}{i}"))
                print(f"  {kind} run {i}: {times[kind][-1]:.1f} s", file=sys.stderr, flush=True)
    plain, capture = statistics.median(times["plain"]), statistics.median(times["capture"])
    name = f"{args.model.stem} ({os.environ.get('CS_LAYERS') or 'default'} layers, {args.device})"
    figures = [
        _figure(f"{name}: plain torch.compile, fresh process", plain, "s", None),
        _figure(f"{name}: compiler_core capture, fresh process", capture, "s", None),
        _figure(f"{name}: capture / plain", capture / plain, "x", 1.10),
    ]
    report(figures, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

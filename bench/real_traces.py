"""Make `TORCH_TRACE` logs of real third-party models on a GPU (run on the device machine).

Each model file in bench/models/ is loaded the way the app loads it, compiled with plain
`torch.compile` (no CompileScope code on the path), stepped twice (or through make_inputs), and its
trace log compressed with xz into OUT. Also prints the plain compile wall time per model, the
baseline that `compiler_core capture` is compared against.

    python3 bench/real_traces.py OUT [name ...]
"""

from __future__ import annotations

import lzma
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "bench" / "models"

CHILD = r"""
import sys, time, torch
sys.path.insert(0, {root!r})
from compiler_core.modelfile import load_model_file
spec = load_model_file({path!r}, device={device!r})
dev = {device!r}
model = spec.model.to(dev) if hasattr(spec.model, "to") else spec.model
def move(v):
    if isinstance(v, (tuple, list)):
        return type(v)(move(x) for x in v)
    return v.to(dev) if isinstance(v, torch.Tensor) else v
compiled = torch.compile(model)
t0 = time.perf_counter()
more = [spec.make_inputs(s) for s in range(1, 4)] if spec.make_inputs else [spec.example_inputs()]
steps = [spec.example_inputs(), *more]
for i, inputs in enumerate(steps):
    inputs = move(inputs)
    if spec.train_step is not None:
        spec.train_step(compiled, inputs)
    else:
        with torch.no_grad():
            compiled(*inputs)
    if dev.startswith("cuda"):
        torch.cuda.synchronize()
    if i == 0:
        print(f"first step (compile) {{time.perf_counter() - t0:.2f}} s", flush=True)
print(f"all steps {{time.perf_counter() - t0:.2f}} s", flush=True)
"""


def main() -> int:
    out = Path(sys.argv[1])
    names = sys.argv[2:] or sorted(p.stem for p in MODELS.glob("[!_]*.py"))
    device = os.environ.get("CS_DEVICE", "cuda")
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        trace_dir = Path("/tmp/cs_traces") / name
        trace_dir.mkdir(parents=True, exist_ok=True)
        for old in trace_dir.glob("*"):
            old.unlink()
        env = {**os.environ, "TORCH_TRACE": str(trace_dir), "PYTHONUNBUFFERED": "1"}
        code = CHILD.format(root=str(ROOT), path=str(MODELS / f"{name}.py"), device=device)
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-6:]
        print(f"== {name}: rc {proc.returncode}, process wall {wall:.1f} s", *tail, sep="\n  ", flush=True)
        logs = sorted(trace_dir.glob("*.log"), key=lambda p: p.stat().st_size)
        if not logs:
            continue
        raw = logs[-1].read_bytes()
        (out / f"{name}.log.xz").write_bytes(lzma.compress(raw, preset=6))
        print(f"  log {len(raw) / 1e6:.1f} MB -> {(out / f'{name}.log.xz').stat().st_size / 1e6:.2f} MB xz")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How much of each mode's profiled GPU time reaches the session's kernels?

    python bench/runtime_join.py SESSION.json [--json]
    python bench/runtime_join.py --capture bench/models/hf_llama_infer.py --device cuda \\
        --modes default,reduce-overhead --steps 60 [--json]

With `--capture` the app's own CLI captures the model first (a worker process, as a user runs
it), so the figures are the ones the Timeline and kernel list show. Per mode it reports the
time inside compiled-graph calls per step (every device kernel the profiler saw there, extern
GEMMs and attention included; eager ops outside compiled graphs are left out, they have no
kernel to join to) and the share of it that `analysis/kernel_times.py` joined to a session kernel.
Under reduce-overhead the GEMMs and cuDNN attention replayed inside a CUDA graph keep no ATen
scope; they join through their place in the graph call's launch order.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def shares(session_path: Path) -> list[dict[str, object]]:
    from compiler_core.session import RefKind, codec

    session = codec.load(session_path)
    out: list[dict[str, object]] = []
    for stats in session.mode_stats:
        prof = stats.runtime
        if stats.mode == "eager" or prof is None:
            continue
        inside = sum(k.us_per_step for k in prof.kernels if k.call >= 0)
        kernel_prefix = f"{RefKind.KERNEL.value}|"
        joined = sum(us for ref, us in stats.time_by_ref.items() if ref.startswith(kernel_prefix))
        share = joined / inside if inside else 0.0
        graph = sum(k.us_per_step for k in prof.kernels if k.kind == "graph")
        out += [
            {"name": f"{stats.mode}: time in compiled graphs", "value": round(inside, 1),
             "unit": "us/step", "target": None, "ok": None},
            {"name": f"{stats.mode}: of it inside CUDA graphs, not Inductor kernels",
             "value": round(graph, 1),
             "unit": "us/step", "target": None, "ok": None},
            {"name": f"{stats.mode}: joined to session kernels", "value": round(share, 4),
             "unit": "fraction", "target": ">= 0.9", "ok": share >= 0.9},
        ]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("session", nargs="?", type=Path)
    p.add_argument("--capture", type=Path, help="model file to capture with the CLI first")
    p.add_argument("--device", default="cuda")
    p.add_argument("--modes", default="default,reduce-overhead")
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    path = args.session
    if args.capture is not None:
        path = path or Path(tempfile.mkdtemp()) / "session.json"
        subprocess.run([sys.executable, "-m", "compiler_core", "capture", str(args.capture), "-q",
                        "--device", args.device, "--modes", args.modes, "--steps", str(args.steps),
                        "--timeout", "540", "-o", str(path)], cwd=ROOT, check=False)
    if path is None or not path.exists():
        p.error("no session (give SESSION.json or --capture MODEL.py)")
    figures = shares(path)
    for f in figures:
        print(f"{f['name']}: {f['value']} {f['unit']}" + (f" (target {f['target']}, "
              f"{'ok' if f['ok'] else 'MISSED'})" if f["target"] else ""))
    if args.json:
        print(json.dumps({"figures": figures}))
    return 0 if all(f["ok"] is not False for f in figures) else 1


if __name__ == "__main__":
    raise SystemExit(main())

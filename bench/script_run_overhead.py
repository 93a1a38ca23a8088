"""Does `compiler_core run` change a real script's speed? The script's own median step time,
alone and under `python -m compiler_core run`, on the same machine one after the other.

The script (bench/scripts/hf_gpt2_loop.py by default) measures itself; we only read the
`MEDIAN_STEP_MS` line it prints. Runs: alone, under `run`, alone again, so host drift shows as
the gap between the two plain runs. Both share one Inductor cache dir, so the second compile
reuses Triton's kernel cache (the recording backend's FX-cache keys differ by design). Also
reported: the step time CompileScope itself recorded for the compiled model (on CUDA, call
boundary to call boundary, i.e. the loop's whole iteration).

    python3 bench/script_run_overhead.py --json [--device cuda] [-- SCRIPT ARGS]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "scripts" / "hf_gpt2_loop.py"
TARGET = 0.05  # ±5 % of the plain run's median step time
MEDIAN = re.compile(r"MEDIAN_STEP_MS ([0-9.]+)")


def _median(out: str) -> float:
    found = MEDIAN.findall(out)
    if not found:
        raise SystemExit(f"no MEDIAN_STEP_MS line in the script's output:\n{out[-3000:]}")
    return float(found[-1])


def run(cmd: list[str], env: dict[str, str], timeout: float) -> tuple[float, float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    out = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} failed ({proc.returncode}):\n{out[-4000:]}")
    return _median(out), wall, out


def main() -> int:
    argv = sys.argv[1:]
    script_args = argv[argv.index("--") + 1:] if "--" in argv else []
    ours = argv[:argv.index("--")] if "--" in argv else argv
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--json", action="store_true")
    p.add_argument("--device", default="cuda")
    p.add_argument("--script", default=str(SCRIPT))
    p.add_argument("--timeout", type=float, default=150)
    p.add_argument("--no-second-plain", action="store_true", help="skip the drift check (saves a run)")
    args = p.parse_args(ours)
    work = Path(tempfile.mkdtemp(prefix="cs-script-bench-"))
    env = dict(os.environ, PYTHONUNBUFFERED="1", COMPILESCOPE_CACHE_DIR=str(work / "cache"),
               TORCHINDUCTOR_CACHE_DIR=str(work / "cache" / "inductor"))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    script = [args.script, "--device", args.device, *script_args]
    plain = [sys.executable, *script]
    session = work / "run.json"
    under = [sys.executable, "-m", "compiler_core", "run", "--device", args.device, "-q", "-o", str(session),
             args.script, "--", "--device", args.device, *script_args]
    a1, wall_a1, out_a1 = run(plain, env, args.timeout)
    print(f"plain: {a1:.3f} ms/step ({wall_a1:.0f} s)", file=sys.stderr, flush=True)
    r, wall_r, out_r = run(under, env, args.timeout)
    print(f"under compiler_core run: {r:.3f} ms/step ({wall_r:.0f} s)", file=sys.stderr, flush=True)
    plains = [a1]
    if not args.no_second_plain:
        try:
            a2, wall_a2, _ = run(plain, env, args.timeout)
        except subprocess.TimeoutExpired:  # the drift check is worth less than the figures so far
            print("plain again: timed out, skipped", file=sys.stderr, flush=True)
        else:
            plains.append(a2)
            print(f"plain again: {a2:.3f} ms/step ({wall_a2:.0f} s)", file=sys.stderr, flush=True)
    base = sum(plains) / len(plains)
    ratio = r / base
    recorded, compiles = _recorded_median(session)
    figures = [
        {"name": "step_time_under_run_vs_plain", "value": round(ratio, 4), "unit": "ratio",
         "target": f"1 ± {TARGET}", "ok": abs(ratio - 1) <= TARGET},
        {"name": "plain_median_ms", "value": round(base, 4), "unit": "ms", "target": None, "ok": True},
        {"name": "under_run_median_ms", "value": round(r, 4), "unit": "ms", "target": None, "ok": True},
        {"name": "plain_drift", "value": round(plains[-1] / plains[0] - 1, 4), "unit": "fraction",
         "target": None, "ok": True},
        {"name": "recorded_model_median_ms", "value": recorded, "unit": "ms", "target": None, "ok": True},
        {"name": "session_compiles", "value": compiles, "unit": "compiles", "target": ">= 1",
         "ok": bool(compiles)},
        {"name": "wall_plain_first_s", "value": round(wall_a1, 1), "unit": "s", "target": None, "ok": True},
        {"name": "wall_under_run_s", "value": round(wall_r, 1), "unit": "s", "target": None, "ok": True},
    ]
    if not args.json:
        print(out_a1[-500:], out_r[-800:], sep="\n")
    print(json.dumps({"figures": figures}))
    return 0 if figures[0]["ok"] else 1


def _recorded_median(session: Path) -> tuple[float | None, int]:
    """CompileScope's own median for the compiled model (its busiest callable), and the number
    of compiles the session holds."""
    try:
        data = json.loads(session.read_text())
    except (OSError, ValueError):
        return None, 0
    stats = data.get("mode_stats") or []
    best = max(stats, key=lambda s: s.get("samples", 0), default=None)
    return (None if best is None else best.get("median_ms")), len(data.get("compiles") or [])


if __name__ == "__main__":
    raise SystemExit(main())

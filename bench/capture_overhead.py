"""Capture overhead: a CompileScope capture vs a plain torch.compile doing the same work.

Every run is a fresh interpreter (wall time from launch to exit, torch import included), with
its own TORCHINDUCTOR_CACHE_DIR and TMPDIR:

- cold: empty cache dirs for every run (Inductor also rebuilds its precompiled C++ header);
- warm: the same dirs as a preceding run of the same kind (C++ kernels and header cached).

"Same work": the plain run loads the model file, compiles with Inductor and calls `train_step`
(or a no-grad forward) on the example inputs, then `make_inputs(step)` for the same number of
steps as the capture, and exits with `os._exit` as the worker does (teardown of torch's compile
workers takes ~1 s otherwise, which would flatter the capture). The capture is
`python -m compiler_core.worker` end to end (trace log, graph records, session build and save).
A third variant, plain + inspect config, is plain torch.compile with the capture's config
(eager backward lowering, kernel provenance on; caches stay on since captures replay their
records on hits): capture vs that isolates the cost of recording from the cost of the config.

Prints one line per figure; with --json the last line is `{"figures": [...]}`.
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
DEFAULT_MODEL = ROOT / "resources" / "examples" / "transformer_block.py"
INPUT_STEPS = 4

PLAIN = r"""
import sys, torch
from compiler_core.modelfile import load_model_file
from compiler_core.capture.model_run import call_once
spec = load_model_file(sys.argv[1])
inspect = sys.argv[2] == "1"
if inspect:
    from compiler_core.capture.hooks.inspect_config import inspect_config
    ctx = inspect_config()
else:
    import contextlib
    ctx = contextlib.nullcontext()
with ctx:
    compiled = torch.compile(spec.model, **spec.compile_options)
    call_once(spec, compiled, spec.example_inputs())
    if spec.make_inputs is not None:
        for step in range(int(sys.argv[3])):
            call_once(spec, compiled, spec.make_inputs(step))
import os
os._exit(0)  # the worker skips interpreter teardown too; don't credit the capture with it
"""


def _env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["TORCHINDUCTOR_CACHE_DIR"] = str(cache / "inductor")
    env["TMPDIR"] = str(cache / "tmp")
    env["PYTHONPATH"] = str(ROOT)
    (cache / "tmp").mkdir(parents=True, exist_ok=True)
    return env


def _command(kind: str, model: Path, out: Path) -> list[str]:
    if kind == "capture":
        return [sys.executable, "-m", "compiler_core.worker", str(model), "--out", str(out / "s.json"),
                "--events-file", os.devnull, "--input-steps", str(INPUT_STEPS)]
    inspect = "1" if kind == "plain+inspect" else "0"
    return [sys.executable, "-c", PLAIN, str(model), inspect, str(INPUT_STEPS)]


def _timed(kind: str, model: Path, cache: Path, out: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(_command(kind, model, out), env=_env(cache), cwd=ROOT,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{kind} run failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return elapsed


def measure(kind: str, model: Path, state: str, runs: int, scratch: Path) -> float:
    """Median wall time of `runs` fresh-process runs of `kind` in cache `state`."""
    times = []
    for i in range(runs):
        cache = scratch / f"{kind}-{state}-{i}"
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir(parents=True)
        if state == "warm":
            _timed(kind, model, cache, cache)  # populate, untimed
        times.append(_timed(kind, model, cache, cache))
        shutil.rmtree(cache, ignore_errors=True)
    return statistics.median(times)



def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--states", default="cold,warm")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures: list[dict[str, object]] = []
    name = args.model.stem
    with tempfile.TemporaryDirectory(prefix="capture-overhead-") as tmp:
        for state in args.states.split(","):
            t = {k: measure(k, args.model, state, args.runs, Path(tmp))
                 for k in ("plain", "plain+inspect", "capture")}
            figures += [
                _figure(f"{name} {state}: plain torch.compile", t["plain"], "s", None),
                _figure(f"{name} {state}: plain + inspect config", t["plain+inspect"], "s", None),
                _figure(f"{name} {state}: capture", t["capture"], "s", None),
                _figure(f"{name} {state}: capture / plain", t["capture"] / t["plain"], "x", 1.10),
                _figure(f"{name} {state}: capture / plain+inspect", t["capture"] / t["plain+inspect"],
                        "x", 1.10),
            ]
    report(figures, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Why did a plain block of the compiled function read slower than the app's block of it?
(diagnostic for issue 14, H200; findings in docs/benchmarks.md). Per round, after the app's
mode + paired-eager blocks: `real_step_times.plain_block` of the mode, the same with a
`perf_counter` call per step, and a plain eager block; in the second half of the rounds the
interpreter's thread switch interval is 0.5 s instead of 5 ms (does a background thread take
the GIL from the launch loop?). Prints the threads alive and the median of each column.

    python bench/block_order_diag.py [MODEL] [MODE] [ROUNDS]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:

    from compiler_core.modelfile import load_model_file
    from compiler_core.timeline.run_phase import ModeRun, step_function
    from compiler_core.timeline.step_clock import BLOCK

    name = sys.argv[1] if len(sys.argv) > 1 else "hf_llama_infer"
    mode = sys.argv[2] if len(sys.argv) > 2 else "default"
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    spec = load_model_file(ROOT / "bench" / "models" / f"{name}.py", device="cuda")
    spec.model.to("cuda")
    run = ModeRun(spec, mode, BLOCK * rounds, "cuda", lambda r: None, None, paired=True)
    run.prepare()
    eager = step_function(spec, spec.model)
    inputs = run.inputs(0)
    import threading

    sys.path.insert(0, str(ROOT / "bench"))
    from real_step_times import plain_block

    names = ("app", "plain_block", "plain_block perf mark", "app (switch 0.5 s)",
             "plain_block (switch 0.5 s)", "eager")
    cols: dict[str, list[float]] = {k: [] for k in names}
    print("threads after prepare:", [t.name for t in threading.enumerate()])
    fn, mark = run._step_fn, run._mark_step

    def perf_mark() -> None:
        time.perf_counter()
        mark()

    for r in range(rounds):
        switch = r >= rounds // 2
        sys.setswitchinterval(0.5 if switch else 0.005)
        run.block(range(r * BLOCK, (r + 1) * BLOCK))
        own = [s.ms for s in run.samples if not s.baseline_for and s.step >= r * BLOCK]
        if r == 0:
            continue
        if switch:
            cols["app (switch 0.5 s)"].append(sum(own) / len(own))
            cols["plain_block (switch 0.5 s)"].append(plain_block(run.timer, fn, mark, inputs, BLOCK))
            continue
        cols["app"].append(sum(own) / len(own))
        cols["plain_block"].append(plain_block(run.timer, fn, mark, inputs, BLOCK))
        cols["plain_block perf mark"].append(plain_block(run.timer, fn, perf_mark, inputs, BLOCK))
        cols["eager"].append(plain_block(run.timer, eager, lambda: None, inputs, BLOCK))
    print("threads at end:", [t.name for t in threading.enumerate()])
    for k, v in cols.items():
        print(f"{name} {mode} {k}: median {statistics.median(v):.3f} ms  blocks {[round(x, 2) for x in v]}")


if __name__ == "__main__":
    main()

"""Does a timing loop run the compiled model faster when its own frame was on the stack while
Dynamo compiled? (A step-time diagnosis, H200: the app's block timer, which runs the compiling step,
read 25-30 % faster than a plain loop defined elsewhere on launch-bound HF Llama inference.)

`loop_a` and `loop_b` are identical functions; only `loop_a` runs the first (compiling) call.
Then both time alternating blocks of 10 steps of the same compiled function.

    python bench/compile_frame_diag.py [MODEL] [ROUNDS]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def loop_a(fn, inputs, n, sync) -> float:
    sync()
    t0 = time.perf_counter()
    for _ in range(n):
        fn(inputs)
    sync()
    return (time.perf_counter() - t0) * 1000.0 / n


def loop_b(fn, inputs, n, sync) -> float:
    sync()
    t0 = time.perf_counter()
    for _ in range(n):
        fn(inputs)
    sync()
    return (time.perf_counter() - t0) * 1000.0 / n


def _tracing_state() -> None:
    """Anything that makes the interpreter call back per frame or per instruction after a compile."""
    import threading

    tools = {}
    if hasattr(sys, "monitoring"):
        for tool in range(6):
            name = sys.monitoring.get_tool(tool)
            if name is not None:
                tools[tool] = (name, sys.monitoring.get_events(tool))
    print("trace", sys.gettrace(), "profile", sys.getprofile(), "monitoring tools", tools,
          "threads", [t.name for t in threading.enumerate()])


def main() -> None:
    import torch

    from compiler_core.modelfile import load_model_file

    name = sys.argv[1] if len(sys.argv) > 1 else "hf_llama_infer"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    spec = load_model_file(ROOT / "bench" / "models" / f"{name}.py", device="cuda")
    model = spec.model.to("cuda")
    inputs = tuple(x.to("cuda") for x in spec.example_inputs())
    compiled = torch.compile(model)

    def fn(args: tuple) -> object:
        with torch.no_grad():
            return compiled(*args)

    first = loop_a(fn, inputs, 10, torch.cuda.synchronize)  # compiles inside loop_a's frame
    print(f"first block (compile) {first:.1f} ms/step")
    _tracing_state()
    a, b = [], []
    for _ in range(rounds):
        a.append(loop_a(fn, inputs, 10, torch.cuda.synchronize))
        b.append(loop_b(fn, inputs, 10, torch.cuda.synchronize))
    for label, xs in (("loop_a (compiled in its frame)", a), ("loop_b (never saw the compile)", b)):
        print(f"{name} {label}: median {statistics.median(xs):.3f} ms {[round(x, 2) for x in xs]}")


if __name__ == "__main__":
    main()

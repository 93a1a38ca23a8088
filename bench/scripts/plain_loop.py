"""The user's own timing of a model file, with nothing of CompileScope in the process.

    python bench/scripts/plain_loop.py MODEL.py --device cuda --steps 100 --modes default,reduce-overhead

What a careful user writes to check a speedup: the file's model and inputs on the device, a
training step when the file defines `train_step` (else a forward under no_grad), and for each
mode `torch.compile(model, mode=...)`, then blocks of 10 steps between two
`torch.cuda.synchronize()` read with `perf_counter`, the compiled block and an eager block
alternating so host drift hits both alike, after an eager-only run timed before anything is
compiled. The first two blocks (block pairs) of each are warm-up. Prints one JSON line: the
eager-only median, and per mode its median ms per step, the paired eager median, and their
ratio. Imports nothing of CompileScope (the model loader is the
corpus runner's, plain torch).
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "corpus"))
from runner import load, to

BLOCK = 10
WARM_BLOCKS = 2


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("--device", default="cuda")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--modes", default="default")
    args = p.parse_args()
    m = load(args.model)
    model = m.model.to(args.device)
    example = m.example_inputs() if callable(m.example_inputs) else m.example_inputs
    inputs = to(tuple(example), args.device)
    train = getattr(m, "train_step", None)
    cuda = args.device.startswith("cuda")
    sync = torch.cuda.synchronize if cuda else (lambda: None)

    def step_fn(fn, mark=None):
        def step():
            if mark is not None:
                mark()
            if train is not None:
                train(fn, inputs)
            else:
                with torch.no_grad():
                    fn(*inputs)
        return step

    def block(step):
        sync()
        t0 = time.perf_counter()
        for _ in range(BLOCK):
            step()
        sync()
        return (time.perf_counter() - t0) * 1000.0 / BLOCK

    eager = step_fn(model)
    blocks = max(args.steps // BLOCK, WARM_BLOCKS + 1)
    # eager alone first, before anything is compiled, as a user times their eager baseline
    result = {"modes": {}, "eager_ms": statistics.median([block(eager) for _ in range(blocks)][WARM_BLOCKS:])}
    for mode in [x for x in args.modes.split(",") if x and x != "eager"]:
        torch.compiler.reset()
        compiled = torch.compile(model, mode=None if mode == "default" else mode)
        graphs = cuda and mode in ("reduce-overhead", "max-autotune")
        mark = torch.compiler.cudagraph_mark_step_begin if graphs else None
        step = step_fn(compiled, mark)
        own, paired = [], []
        for _ in range(blocks):
            own.append(block(step))
            paired.append(block(eager))
        own, paired = own[WARM_BLOCKS:], paired[WARM_BLOCKS:]
        result["modes"][mode] = {"median_ms": statistics.median(own),
                                 "baseline_ms": statistics.median(paired),
                                 "speedup": statistics.median(paired) / statistics.median(own)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()

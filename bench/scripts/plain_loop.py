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

`--placement` says where on the Python stack each timed block runs. On CPython 3.11/3.12
frames live in 16 KiB data-stack chunks and a chunk is freed as soon as the frame that opened it
returns (CPython gh-142183), so a loop whose hot calls straddle a chunk boundary mmaps and
munmaps a chunk per call, and its speed depends on how many frames lie below it:

- natural (default): the block runs where this script puts it, as a user's loop sits at
  whatever depth its script happens to give it;
- fresh: every block runs inside a frame of 4200 never-assigned local slots, so CPython opens a
  fresh 64 KiB chunk for it and the block starts at the start of a chunk, as the app's timer
  runs its blocks (the same trick, copied here, not imported);
- sweep: block i runs below a pad of (i % 16) KiB of extra frame slots, 16 offsets tiling one
  16 KiB chunk (a compiled block and its paired eager block at the same offset), at least two
  timed blocks per offset: shows how much the depth alone moves a loop. Adds "by_offset"
  ({mode: {"own": [...], "paired": [...]}}, median per offset), "eager_by_offset" and per mode
  "offset_spread" ((max - min) / min of the per-offset medians of "own").
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
OFFSETS = 16  # sweep: pads of 0..15 KiB, tiling one 16 KiB data-stack chunk
FRESH_SLOTS = 4200  # over what a 32 KiB chunk holds, so the frame needs a fresh 64 KiB chunk


def make_pad(slots: int, name: str):
    """`pad(fn, *args)` calls `fn(*args)` from a frame of `slots` extra local slots (8 bytes
    each): the locals are never assigned, but CPython reserves a slot for each name a function
    body binds."""
    names = " = ".join(f"_s{i}" for i in range(slots))
    body = f"    if fn is None:\n        {names} = None\n" if slots else ""
    source = f"def {name}(fn, *args):\n{body}    return fn(*args)\n"
    namespace: dict = {}
    exec(compile(source, f"<plain_loop: a frame of {slots} slots>", "exec"), namespace)
    return namespace[name]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("--device", default="cuda")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--modes", default="default")
    p.add_argument("--placement", choices=("natural", "fresh", "sweep"), default="natural",
                   help="where on the stack each timed block runs (see the docstring)")
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
    natural, sweep = args.placement == "natural", args.placement == "sweep"
    pads = []
    if args.placement == "fresh":
        pads = [make_pad(FRESH_SLOTS, "on_fresh_chunk")]
    elif sweep:
        pads = [make_pad(k * 128, f"pad_{k}") for k in range(OFFSETS)]
        blocks = max(blocks, 2 * OFFSETS + WARM_BLOCKS)

    def by_offset(times):
        # times of blocks WARM_BLOCKS.. in order; block i ran at offset i % OFFSETS
        groups = [[] for _ in range(OFFSETS)]
        for i, t in enumerate(times, start=WARM_BLOCKS):
            groups[i % OFFSETS].append(t)
        return [statistics.median(g) for g in groups]

    # eager alone first, before anything is compiled, as a user times their eager baseline
    # natural calls block() right here, as before (no frame added); the others through block i's pad
    alone = [block(eager) if natural else pads[i % len(pads)](block, eager)
             for i in range(blocks)][WARM_BLOCKS:]
    result = {"modes": {}, "eager_ms": statistics.median(alone)}
    if sweep:
        result["placement"] = "sweep"
        result["eager_by_offset"] = by_offset(alone)
        result["by_offset"] = {}
    elif not natural:
        result["placement"] = args.placement
    for mode in [x for x in args.modes.split(",") if x and x != "eager"]:
        torch.compiler.reset()
        compiled = torch.compile(model, mode=None if mode == "default" else mode)
        graphs = cuda and mode in ("reduce-overhead", "max-autotune")
        mark = torch.compiler.cudagraph_mark_step_begin if graphs else None
        step = step_fn(compiled, mark)
        own, paired = [], []
        for i in range(blocks):
            own.append(block(step) if natural else pads[i % len(pads)](block, step))
            paired.append(block(eager) if natural else pads[i % len(pads)](block, eager))
        own, paired = own[WARM_BLOCKS:], paired[WARM_BLOCKS:]
        result["modes"][mode] = {"median_ms": statistics.median(own),
                                 "baseline_ms": statistics.median(paired),
                                 "speedup": statistics.median(paired) / statistics.median(own)}
        if sweep:
            per = {"own": by_offset(own), "paired": by_offset(paired)}
            result["by_offset"][mode] = per
            result["modes"][mode]["offset_spread"] = (max(per["own"]) - min(per["own"])) / min(per["own"])
    print(json.dumps(result))


if __name__ == "__main__":
    main()

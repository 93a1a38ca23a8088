"""`python -m compiler_core budget MODEL.py --budgets 1,0.5,0.2 [--device cuda] [-o SESSION.json]`.

Re-partitions the model file's training step at each `activation_memory_budget` in the capture
worker (compiler_core/stages/memory_budget.py), started by the launcher every run shares
(compiler_core/worker/launch.py: memory cap, process sweep, signed events, bounded output), and
prints, per budget, saved bytes, recomputed ops and (with `--steps`, on any device) the median
step time, plus peak memory on a GPU. With `-o`, the results are stored in that session
(`Session.memory_budget`), which is created if it does not exist; an existing session keeps
everything else, and is written only from an authentic run. Torch is never imported here.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
from typing import Any

from compiler_core.cli.file_args import output_file
from compiler_core.session.codec import load, save
from compiler_core.session.model import BudgetPoint, Session, SessionMeta
from compiler_core.stages.memory_budget import budget_spec, point_from_event

NEEDS_TORCH = True  # checked by the top-level main (compiler_core/cli/__init__.py)


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("budget", help="re-partition a training step at several memory budgets",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="model file with a train_step (see compiler_core/modelfile.py)")
    p.add_argument("--budgets", default="1,0.5,0.2", help="comma-separated values in [0, 1]")
    p.add_argument("--device", default="cpu", help="cpu or cuda[:N] (default cpu)")
    p.add_argument("--steps", type=int, default=5, help="timed steps per budget after the compiling one")
    p.add_argument("-o", "--output", default="", type=output_file,
                   help="session JSON to store the results in")
    p.add_argument("--timeout", type=float, default=1800.0, metavar="SECONDS")
    p.add_argument("--json", action="store_true", help="print the results as one JSON line")


def run_sweep(model: str, budgets: str, device: str, steps: int, timeout: float,
              output: str = "") -> tuple[list[BudgetPoint], str]:  # fmt: skip
    """Run the sweep in the worker; returns the points it reported and why it is not a success
    ("" when it is). Points come only from the authenticated event channel, never stdout."""
    from compiler_core.worker.client import WorkerClient

    out = output or os.path.join(tempfile.mkdtemp(prefix="cs-budget-"), "budget.json")
    client = WorkerClient(budget_spec(model, budgets, device, steps, out), timeout_s=timeout)
    points = [p for e in client.events() if e.kind == "budget"
              for p in [point_from_event(e.data)] if p is not None]  # fmt: skip
    exit_ = client.exit
    problems = client.problems()
    if exit_ is None or not exit_.ok or problems:
        why = "; ".join(problems) or (client.error.message if client.error else "")
        how = exit_.describe() if exit_ is not None else "did not start"
        return (points if not problems else []), f"the budget worker {how}" + (f": {why}" if why else "")
    return points, ""


def store(points: list[BudgetPoint], output: str, model: str) -> Session:
    if output and os.path.exists(output):
        session = load(output)
    else:
        session = Session(meta=SessionMeta(origin="budget", origin_path=os.path.abspath(model)))
    session = dataclasses.replace(session, memory_budget=tuple(points))
    if output:
        save(session, output)
    return session


def run(args: argparse.Namespace) -> int:
    points, err = run_sweep(args.model, args.budgets, args.device, args.steps, args.timeout)
    if err:
        print(f"error: {err}", file=sys.stderr)
    if not points:
        print("error: the budget worker reported no budget", file=sys.stderr)
        return 1
    if args.output:
        store(points, args.output, args.model)
    if args.json:
        print(json.dumps([dataclasses.asdict(p) for p in points]))
    else:
        print(f"{'budget':>7} {'saved MiB':>10} {'tensors':>8} {'recomputed':>10} {'step ms':>9} "
              f"{'peak MiB':>9}")
        for p in points:
            if p.error:
                print(f"{p.budget:>7g} {p.error}")
                continue
            step = "-" if p.step_ms is None else f"{p.step_ms:.2f}"
            peak = "-" if p.peak_mem_bytes is None else f"{p.peak_mem_bytes / 2**20:.1f}"
            print(f"{p.budget:>7g} {p.saved_bytes / 2**20:>10.2f} {p.saved_tensors:>8} {p.recomputed:>10} "
                  f"{step:>9} {peak:>9}")
    return 1 if err else 0

"""`python -m compiler_core run [-o OUT.json] SCRIPT.py -- ARGS`: your own script, recorded.

The script runs unmodified in a worker process, as `python SCRIPT.py ARGS` would run it (its
argv, its working directory: yours), with every `torch.compile` it makes recorded and every call
of each compiled callable timed. Its prints go to your terminal as usual; CompileScope's own
lines start with `[compilescope]` on stderr. Ctrl-C ends the run cleanly at the next compiled
call (the session keeps everything); a second Ctrl-C kills it (a partial session is still
written). `--nproc N` runs it under `torch.distributed.run --standalone` with N local ranks and
merges their recordings. The session opens with `compilescope OUT.json` and reads with
`python -m compiler_core summary OUT.json`. Torch is never imported in this process.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compiler_core.cli.capture_cmd import report
from compiler_core.cli.file_args import output_file
from compiler_core.run.client import ScriptClient
from compiler_core.run.spec import ScriptSpec
from compiler_core.worker import protocol
from compiler_core.worker.protocol import Event

TAG = "[compilescope]"
NEEDS_TORCH = True  # checked by the top-level main (compiler_core/cli/__init__.py)


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("run", help="run your own script and record every torch.compile in it",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("script", help="the Python script to run, unmodified")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="its arguments (after --)")
    p.add_argument("-o", "--output", default=None, type=output_file,
                   help="session JSON to write (default: SCRIPT's name + .session.json, here)")
    p.add_argument("--device", default="auto",
                   help="cpu or cuda[:N]: how step times are taken (default auto: CUDA events for a "
                        "compiled callable called with CUDA tensors, else the wall clock; said per callable)")
    p.add_argument("--max-steps", type=int, default=None, metavar="N",
                   help="end the run cleanly after N calls of any one compiled callable")
    p.add_argument("--nproc", type=int, default=1, metavar="N",
                   help="run under torch.distributed.run with N local ranks (default 1: plain python)")
    p.add_argument("--cwd", default=None, help="working directory for the script (default: here)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="kill the run (and its children) after this many seconds")
    p.add_argument("--max-memory-mb", type=int, default=None,
                   help="cap on the worker's memory in MiB (0 = none; default: 75%% of RAM on CPU)")
    p.add_argument("-q", "--quiet", action="store_true", help="no [compilescope] progress lines")


_OWN_OPTIONS = frozenset({"-o", "--output", "--device", "--max-steps", "--nproc", "--cwd", "--timeout",
                          "--max-memory-mb", "-q", "--quiet"})


def misplaced_options(args: argparse.Namespace) -> list[str]:
    """`run`'s own options written after the script without `--` (they went to the script, as
    `python train.py ARGS` would pass them): named, so `-o run.json` is not lost in silence."""
    rest = list(args.script_args)
    words = list(getattr(args, "words", []))  # argparse drops the `--`; the words as typed keep it
    if rest and words[-len(rest) - 1:-len(rest)] == ["--"]:
        return []
    return [a for a in rest if a.split("=", 1)[0] in _OWN_OPTIONS]


def spec_from_args(args: argparse.Namespace) -> ScriptSpec:
    script_args = list(args.script_args)
    if script_args[:1] == ["--"]:
        script_args = script_args[1:]
    out = args.output or f"{Path(args.script).stem}.session.json"
    return ScriptSpec(
        model_path=os.path.abspath(args.script), out_path=os.path.abspath(out), device=args.device,
        max_memory_mb=args.max_memory_mb, script_args=tuple(script_args),
        cwd=os.path.abspath(args.cwd or os.getcwd()), max_steps=args.max_steps, nproc=max(1, args.nproc),
    )


def progress_line(event: Event) -> str | None:
    rank = event.data.get("rank")
    where = f"rank {rank}: " if rank is not None else ""
    if event.kind == "stage" and event.stage == "inductor" and event.state == "finished":
        return f"{where}compiled {event.compile_id} ({event.elapsed_s or 0:.2f} s in Inductor)"
    if event.kind == "stage" and event.stage == "dynamo" and event.state == "failed":
        return f"{where}compile {event.compile_id} failed"
    if event.kind == "warning" and event.data.get("category") == "graph_break":
        return f"{where}{event.message}"
    if event.kind == "rank":
        state = event.data.get("state")
        return f"rank {rank} {state}" + (f" (exit {event.exit_code})" if event.exit_code else "")
    if event.kind == "timeline" and event.data.get("event") == "timeline_event":
        record = event.data
        if record.get("kind") == "recompile":
            call = record.get("step")
            return f"{where}{record.get('mode')}: recompiled at call {call}: {record.get('reason')}"
    if event.kind == "stage" and event.stage == "run" and event.state == "finished" and event.message:
        return f"run ended early: {event.message}"
    return None


def stats_lines(client: ScriptClient) -> list[str]:
    """One line per compiled callable: calls and median step time (from the final figures)."""
    out = []
    for event in client.received:
        record = event.data if event.kind == "timeline" else {}
        if record.get("event") == "mode_stats":
            median = record.get("median_ms")
            text = "—" if median is None else f"{median:.3f} ms"
            out.append(f"{record.get('mode')}: {record.get('samples')} calls, median {text}, "
                       f"{record.get('recompiles', 0)} recompiles")
    return out


def launched_by_torchrun(env: Mapping[str, str]) -> str:
    """What gives torchrun away in our environment ("" when nothing does)."""
    if env.get("TORCHELASTIC_RUN_ID"):
        return "TORCHELASTIC_RUN_ID is set"
    if env.get("RANK") and env.get("WORLD_SIZE"):
        return f"RANK={env['RANK']} WORLD_SIZE={env['WORLD_SIZE']}"
    return ""


def run(args: argparse.Namespace) -> int:
    spec = spec_from_args(args)
    misplaced = misplaced_options(args)
    if misplaced:
        print(f"warning: {' '.join(misplaced)} after the script go to the script; CompileScope's options "
              "go before it: python -m compiler_core run [OPTIONS] SCRIPT -- ARGS", file=sys.stderr)
    launched = launched_by_torchrun(os.environ)
    if launched:
        print(f"error: `compiler_core run` was itself started by torchrun ({launched}); every rank would "
              "record and save on its own. Run it once, with --nproc N: python -m compiler_core run "
              "--nproc N SCRIPT -- ARGS", file=sys.stderr)
        return protocol.EXIT_USAGE
    if not os.path.isfile(spec.model_path):
        print(f"error: run failed in stage 'load': no such file: {spec.model_path}", file=sys.stderr)
        return protocol.EXIT_USAGE
    client = ScriptClient(spec, timeout_s=args.timeout)
    interrupts = 0

    def on_sigint(_signum: int, _frame: Any) -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts == 1:
            print(f"{TAG} stopping at the next compiled call (Ctrl-C again to kill)", file=sys.stderr)
            client.stop()
        else:
            client.cancel()

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        for event in client.events():
            line = progress_line(event)
            if line and not args.quiet:
                print(f"{TAG} {line}", file=sys.stderr, flush=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    if not args.quiet:
        for line in stats_lines(client):
            print(f"{TAG} {line}", file=sys.stderr)
    return report(client, "run")

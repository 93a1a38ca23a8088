"""`python -m compiler_core capture MODEL.py -o OUT.json`: capture a model in a worker process.

Progress goes to stderr as one line per stage. The model's own stdout/stderr is not echoed (a
model may print megabytes); when the worker dies without reporting (e.g. a segfault), the tail of
its stderr (faulthandler's traceback) is shown instead. Exit status is the worker's
(see compiler_core/worker/protocol.py): 0 only on success. On failure the first line says what
failed, in which stage, with the user's own message; the user's traceback follows. A partial
session is still written when anything was traced. Torch is never imported in this process.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from compiler_core.cli.file_args import output_file
from compiler_core.worker import protocol
from compiler_core.worker.client import WorkerClient
from compiler_core.worker.protocol import CaptureSpec, Event

EXIT_TIMEOUT = 124  # like coreutils' timeout(1)
NEEDS_TORCH = True  # checked by the top-level main (compiler_core/cli/__init__.py)


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("capture", help="compile a model file and record every stage",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="model file (see compiler_core/modelfile.py)")
    p.add_argument("-o", "--output", required=True, type=output_file, help="session JSON to write")
    p.add_argument("--device", default="cpu", help="cpu or cuda[:N] (default cpu)")
    p.add_argument("--mode", choices=protocol.MODES, default=None,
                   help="torch.compile mode (default: the file's compile_options, else default)")
    p.add_argument("--dynamic", action=argparse.BooleanOptionalAction, default=None,
                   help="torch.compile(dynamic=...); default: the file's compile_options")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="kill the capture (and its children) after this many seconds")
    p.add_argument("--input-steps", type=int, default=4,
                   help="calls with make_inputs(step) after the first, to expose recompiles")
    p.add_argument("--steps", type=int, default=0, help="timeline run phase: steps per mode (0 = none)")
    p.add_argument("--modes", default="default", help="timeline modes, comma-separated")
    p.add_argument("--max-memory-mb", type=int, default=None,
                   help="cap on the worker's memory in MiB (0 = none; default: 75%% of RAM on CPU)")
    p.add_argument("--shape-change-step", type=int, default=None,
                   help="timeline: grow every input's first dimension from this step on (recompile spike)")
    p.add_argument("--trace", default="", type=output_file,
                   help="trace log path (default OUT with suffix .trace.log)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


def spec_from_args(args: argparse.Namespace) -> CaptureSpec:
    return CaptureSpec(
        model_path=args.model, out_path=args.output, device=args.device, mode=args.mode,
        dynamic=args.dynamic, input_steps=args.input_steps, steps=args.steps, modes=args.modes,
        shape_change_step=args.shape_change_step, max_memory_mb=args.max_memory_mb,
        trace_path=args.trace,
    )


def progress_line(event: Event) -> str | None:
    if event.kind == "stage" and event.state in ("finished", "failed"):
        where = f" [{event.compile_id}]" if event.compile_id else ""
        return f"  {event.stage}{where}: {event.state} in {event.elapsed_s or 0:.2f} s"
    if event.kind == "warning" and event.data.get("category") in ("graph_break", "memory_cap"):
        return f"  {event.message}"
    return None


def run(args: argparse.Namespace) -> int:
    import os

    spec = spec_from_args(args)
    spec = CaptureSpec(**{**spec.__dict__, "model_path": os.path.abspath(spec.model_path),
                          "out_path": os.path.abspath(spec.out_path)})
    if not os.path.isfile(spec.model_path):
        print(f"error: capture failed in stage 'load': no such file: {spec.model_path}", file=sys.stderr)
        return protocol.EXIT_USAGE
    client = WorkerClient(spec, timeout_s=args.timeout)
    for event in client.events():
        line = progress_line(event)
        if line and not args.quiet:
            print(line, file=sys.stderr, flush=True)
    return report(client)


def _swept_warning(client: WorkerClient) -> None:
    if client.swept:
        print(f"warning: {len(client.swept)} process(es) the model started outlived the capture; killed",
              file=sys.stderr)  # fmt: skip


def report(client: WorkerClient, what: str = "capture") -> int:
    """Print the outcome (first line = what failed, where, why) and return the exit status."""
    assert client.exit is not None
    exit_info = client.exit
    if client.succeeded:
        _swept_warning(client)
        print(f"session written to {client.session_path}", file=sys.stderr)
        return 0
    stage = (client.error.stage if client.error else "") or client.last_stage or "load"
    problems = client.problems() if exit_info.ok else []
    if client.memory_exceeded:
        cap = client.spec.max_memory_mb
        first = (f"error: {what} failed in stage '{stage}': the model and its child processes used "
                 f"{client.memory_exceeded >> 20} MiB together, over the memory cap"
                 f"{f' of {cap} MiB' if cap else ''}; killed")  # fmt: skip
    elif problems:
        first = f"error: {what} failed in stage '{stage}': {problems[0]}"
    elif exit_info.timed_out:
        first = (f"error: {what} timed out after {client.timeout_s:g} s in stage '{stage}' "
                 "(process group killed)")
    elif exit_info.cancelled:
        first = f"error: {what} cancelled in stage '{stage}'"
    elif client.error is not None:
        first = f"error: {what} failed in stage '{stage}': {client.error.message.splitlines()[0]}"
    else:
        first = f"error: {what} failed in stage '{stage}': the worker {exit_info.describe()}"
    print(first, file=sys.stderr)  # always the first line: scripts and tests read it
    _swept_warning(client)
    for more in problems[1:]:
        print(f"  also: {more}", file=sys.stderr)
    if client.error is not None:
        print(client.error.traceback.rstrip(), file=sys.stderr)
    elif client.stderr_tail.strip():
        print("worker stderr (last lines):\n" + _tail(client.stderr_tail, 40), file=sys.stderr)
    partial = client.recover_session()
    if partial is not None:
        print(f"partial session ({len(partial.compiles)} compiles) written to {client.spec.out_path}",
              file=sys.stderr)
    if exit_info.timed_out:
        return EXIT_TIMEOUT
    if problems or client.memory_exceeded:
        return protocol.EXIT_USER_ERROR  # the model broke the run, not CompileScope
    if exit_info.signal is not None:
        return 128 + exit_info.signal  # as a shell reports a signal death
    code = exit_info.returncode
    return code if code else 1


def _tail(text: str, lines: int) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])

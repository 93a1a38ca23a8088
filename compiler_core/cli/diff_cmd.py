"""`python -m compiler_core diff BEFORE AFTER [--json] [-o OUT]`: what changed between two compiles.

Each side is a trace log (file, rank folder, `-` for one of them on standard input) or a saved
session `.json`, read as `summary` reads its input. Prints the readable comparison
(compiler_core/diff/diff_text.py), or with `--json` the whole `SessionDiff` as JSON; `-o` writes
the same to a file instead. No torch: two logs made elsewhere compare here.

`diff MODEL.py --apply HINT` captures the model file as it is and again with a mechanical hint
applied (compiler_core/diff/hint_plan.py: `capture_scalar_outputs`, `mark_dynamic:x:0`,
`dynamic`, `mode:max-autotune`, `config:FLAG=VALUE`, `activation_memory_budget=0.5`,
`reorderable_logging_functions:print`, `ignore_logging_functions:logging.Logger.info`), without
editing the file, and compares the two; that needs torch (`pip install '.[capture]'`).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from compiler_core.cli.file_args import STREAM, UsageError, output_file_or_stdout, writable
from compiler_core.cli.read_options import add_limit_options, add_source_options, read_session

if TYPE_CHECKING:
    from compiler_core.diff import SessionDiff


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "diff", help="compare two trace logs or sessions stage by stage",
        description="Compare two trace logs or sessions: compiles matched by frame and code location, "
                    "then graphs, breaks, guards, recompiles, saved tensors, kernels, CUDA graphs, "
                    "compile time by stage and step times per mode, before against after.",
    )
    p.add_argument("before", help="trace log (.log, .log.gz, .log.xz), rank folder or session .json; "
                                  "- reads it from standard input")
    p.add_argument("after", nargs="?", default=None,
                   help="the same kinds of input, compared against BEFORE (absent with --apply)")
    p.add_argument("--apply", default="", metavar="HINT",
                   help="BEFORE is a model file: capture it, then again with HINT applied, and compare "
                        "(capture_scalar_outputs, mark_dynamic:INPUT:DIM, dynamic, mode:MODE, "
                        "config:FLAG=VALUE, activation_memory_budget=0..1, "
                        "reorderable_logging_functions:print|warnings.warn|logging.info..., "
                        "ignore_logging_functions:logging.Logger.info...)")
    p.add_argument("--device", default="cpu", help="with --apply: cpu or cuda[:N] (default cpu)")
    p.add_argument("--steps", type=int, default=0, metavar="N",
                   help="with --apply: time N steps of eager and the compiled mode in both runs (a mode "
                        "hint times the hinted mode after), so the comparison has step times "
                        "(default 0: none)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="with --apply: kill a capture after this many seconds")
    p.add_argument("--json", action="store_true", help="write the whole comparison as JSON")
    p.add_argument("-o", "--output", default="", type=output_file_or_stdout,
                   help="file to write the comparison to (default: standard output)")
    add_limit_options(p)
    add_source_options(p, saving=False)


def run(args: argparse.Namespace) -> int:
    from compiler_core.session.gc_pause import gc_paused

    if args.apply:
        return _run_hint(args)
    if args.after is None:
        raise UsageError("diff needs BEFORE and AFTER (or a model file and --apply HINT)")
    if args.before == STREAM and args.after == STREAM:
        raise UsageError("only one of BEFORE and AFTER can be - (standard input)")
    with gc_paused():  # two imports build ~600k objects with no cycles
        return _run(args)


def _run_hint(args: argparse.Namespace) -> int:
    """Capture BEFORE (a model file) twice, the second time with the hint, and compare."""
    import os
    import tempfile

    from compiler_core.capture_support import capture_unavailable
    from compiler_core.diff.hint_plan import parse_hint
    from compiler_core.diff.hint_rerun import RerunError, rerun_with_hint
    from compiler_core.worker.protocol import CaptureSpec

    if args.after is not None:
        raise UsageError("with --apply, give one model file: it is captured before and after the hint")
    try:
        hint = parse_hint(args.apply)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    reason = capture_unavailable()
    if reason is not None:
        print(f"error: {reason}", file=sys.stderr)
        return 2
    model = os.path.abspath(args.before)
    if not os.path.isfile(model):
        raise UsageError(f"no such model file: {args.before}")
    with tempfile.TemporaryDirectory(prefix="cs-diff-hint-") as folder:
        print(f"capturing {args.before}, then again with {hint.in_words()}…", file=sys.stderr)
        try:
            base = CaptureSpec(model, "", device=args.device, steps=args.steps)
            rerun = rerun_with_hint(model, hint, folder, base=base, timeout_s=args.timeout)
        except RerunError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    return _write(args, rerun.diff)


def _run(args: argparse.Namespace) -> int:
    from compiler_core.diff import diff_sessions

    sessions = []
    for path in (args.before, args.after):
        session = read_session(argparse.Namespace(**{**vars(args), "path": path}), "diff")
        if session is None:
            return 2
        sessions.append(session)
    return _write(args, diff_sessions(sessions[0], sessions[1]))


def _write(args: argparse.Namespace, diff: SessionDiff) -> int:
    from compiler_core.cli.terminal_text import shown
    from compiler_core.diff import as_dict, session_text

    text = json.dumps(as_dict(diff), indent=1) + "\n" if args.json else session_text(diff)
    if not args.output or args.output == STREAM:
        sys.stdout.write(text)
        return 0
    with writable(args.output) as output:
        try:
            with open(output, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as exc:
            print(f"error: {shown(exc)}", file=sys.stderr)
            return 1
    print(f"wrote {shown(args.output)}: {len(diff.compiles)} compiles matched, "
          f"{len(diff.only_before)} only before, {len(diff.only_after)} only after")
    return 0

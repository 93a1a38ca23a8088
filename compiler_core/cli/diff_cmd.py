"""`python -m compiler_core diff BEFORE AFTER [--json] [-o OUT]`: what changed between two compiles.

Each side is a trace log (file, rank folder, `-` for one of them on standard input) or a saved
session `.json`, read as `summary` reads its input. Prints the readable comparison
(compiler_core/diff/diff_text.py), or with `--json` the whole `SessionDiff` as JSON; `-o` writes
the same to a file instead. No torch: two logs made elsewhere compare here.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from compiler_core.cli.file_args import STREAM, UsageError, output_file_or_stdout, writable
from compiler_core.cli.read_options import add_limit_options, add_source_options, not_a_trace, read_log


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "diff", help="compare two trace logs or sessions stage by stage",
        description="Compare two trace logs or sessions: compiles matched by frame and code location, "
                    "then graphs, breaks, guards, recompiles, saved tensors, kernels, CUDA graphs, "
                    "compile time by stage and step times per mode, before against after.",
    )
    p.add_argument("before", help="trace log (.log, .log.gz, .log.xz), rank folder or session .json; "
                                  "- reads it from standard input")
    p.add_argument("after", help="the same kinds of input, compared against BEFORE")
    p.add_argument("--json", action="store_true", help="write the whole comparison as JSON")
    p.add_argument("-o", "--output", default="", type=output_file_or_stdout,
                   help="file to write the comparison to (default: standard output)")
    add_limit_options(p)
    add_source_options(p, saving=False)


def run(args: argparse.Namespace) -> int:
    from compiler_core.session.gc_pause import gc_paused

    if args.before == STREAM and args.after == STREAM:
        raise UsageError("only one of BEFORE and AFTER can be - (standard input)")
    with gc_paused():  # two imports build ~600k objects with no cycles
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from compiler_core.cli.terminal_text import shown
    from compiler_core.diff import as_dict, diff_sessions, session_text
    from compiler_core.session import SessionFormatError

    sessions = []
    for path in (args.before, args.after):
        side = argparse.Namespace(**{**vars(args), "path": path})
        try:
            session = read_log(side, sessions=True)
        except (OSError, SessionFormatError) as exc:
            print(f"error: diff failed loading {shown(path)}: {shown(exc)}", file=sys.stderr)
            return 2
        refused = not_a_trace(session)
        if refused:
            print(f"error: {shown(refused)}", file=sys.stderr)
            return 2
        sessions.append(session)
    diff = diff_sessions(sessions[0], sessions[1])
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

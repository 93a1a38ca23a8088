"""`python -m compiler_core import PATH -o OUT.json`: trace log (file or rank directory) → session."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from compiler_core.cli.file_args import STREAM, output_file_or_stdout, writable
from compiler_core.cli.read_options import (
    add_limit_options,
    add_log_argument,
    add_source_options,
    not_a_trace,
    read_log,
)


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "import", help="read a TORCH_TRACE log (file or directory) into a session",
        description="Read a TORCH_TRACE log (one file, or a torchrun directory with one log per rank) "
                    "and write the session the app opens: graphs, links, kernels, guards, breaks.",
    )
    add_log_argument(p, "trace file (.log, .log.gz or .log.xz), or a directory of "
                        "dedicated_log_torch_trace*.log[.gz|.xz] (one per rank)")
    p.add_argument("-o", "--output", required=True, type=output_file_or_stdout,
                   help="session file to write (JSON); - writes it to standard output")
    add_limit_options(p)
    add_source_options(p, saving=True)


def run(args: argparse.Namespace) -> int:
    # Reading and writing build ~300k objects with no cycles: a collection between the two (the
    # first allocation after the reader resumes the collector) would only walk all of them.
    from compiler_core.session.gc_pause import gc_paused

    with gc_paused():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from compiler_core.cli.terminal_text import shown
    from compiler_core.session import SessionFormatError, save

    try:
        session = read_log(args)
    except OSError as exc:
        print(f"error: import failed reading the trace: {shown(exc)}", file=sys.stderr)
        return 2
    refused = not_a_trace(session)
    if refused:
        print(f"error: {shown(refused)}", file=sys.stderr)
        return 2
    with writable(args.output) as output:
        try:
            save(session, output, include_sources=args.include_sources)
        except (OSError, SessionFormatError) as exc:  # a session that would not reopen is not written
            print(f"error: {shown(exc)}", file=sys.stderr)
            return 1
    to_stdout = args.output == STREAM  # then standard output holds the session and nothing else
    if args.local_sources and not args.include_sources:
        print("note: the files --local-sources read are not in the saved session (--include-sources "
              "keeps them)", file=sys.stderr)
    warnings = sum(1 for d in session.diagnostics if d.severity != "info")
    target = "the session to standard output" if to_stdout else shown(args.output)
    print(f"wrote {target}: {len(session.compiles)} compiles, {warnings} warnings",
          file=sys.stderr if to_stdout else sys.stdout)
    for d in session.diagnostics[:10]:
        if d.severity != "info":
            where = f"{d.path}:{d.line}" if d.line else d.path
            print(f"  {d.severity}: {shown(where)}: {shown(d.message)}", file=sys.stderr)
    return 0

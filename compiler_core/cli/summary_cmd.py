"""`python -m compiler_core summary PATH`: print `summarize()` as JSON for a trace or a session."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from compiler_core.cli.read_options import (
    add_limit_options,
    add_log_argument,
    add_source_options,
    not_a_trace,
    read_log,
)


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "summary", help="summarise a trace log or a saved session .json",
        description="Print counts of a trace log or session as JSON: compiles, graphs, breaks and "
                    "their reasons, recompiles, saved tensors, kernels and launches, extern calls.",
    )
    add_log_argument(p, "trace file (.log, .log.gz, .log.xz) or directory, or a session .json")
    add_limit_options(p)
    add_source_options(p, saving=False)


def run(args: argparse.Namespace) -> int:
    from compiler_core.cli.terminal_text import shown
    from compiler_core.session import SessionFormatError
    from compiler_core.summary import summarize

    try:
        session = read_log(args, sessions=True)
    except (OSError, SessionFormatError) as exc:
        print(f"error: summary failed loading {shown(args.path)}: {shown(exc)}", file=sys.stderr)
        return 2
    refused = not_a_trace(session)
    if refused:
        print(f"error: {shown(refused)}", file=sys.stderr)
        return 2
    # json.dumps writes every control character of log text as a \u escape (ensure_ascii)
    print(json.dumps(summarize(session), indent=1, sort_keys=True))
    return 0

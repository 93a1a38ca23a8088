"""`python -m compiler_core summary PATH`: print `summarize()` as JSON for a trace or a session."""

from __future__ import annotations

import argparse
import json
from typing import Any

from compiler_core.cli.read_options import (
    add_limit_options,
    add_log_argument,
    add_source_options,
    read_session,
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
    from compiler_core.queries.summary import summarize

    session = read_session(args, "summary")
    if session is None:
        return 2
    # json.dumps writes every control character of log text as a \u escape (ensure_ascii)
    print(json.dumps(summarize(session), indent=1, sort_keys=True))
    return 0

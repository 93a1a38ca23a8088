"""`python -m compiler_core report LOG_OR_SESSION -o report.html`: the Overview as one HTML file.

The file is self-contained (compiler_core/overview/report_html.py): it opens in any browser
with no server and no network, for sharing with someone who does not have the app. The input is
read as `summary` reads it (a trace log, a rank folder, a session `.json`, or `-`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from compiler_core.cli.file_args import STREAM, output_file_or_stdout, writable
from compiler_core.cli.read_options import (
    add_limit_options,
    add_log_argument,
    add_source_options,
    read_session,
)


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "report", help="write the Overview of a trace log or session as one self-contained HTML file",
        description="Write what the app's Overview shows (the verdict, breaks ranked by cost with their "
                    "fix, recompiles with the failed guard, fallbacks, CUDA graphs, saved activations, "
                    "compile and step time) and the tables of breaks, recompiles and kernels as one HTML "
                    "file that needs no server, no network and no app.",
    )
    add_log_argument(p, "trace file (.log, .log.gz, .log.xz) or directory, or a session .json")
    p.add_argument("-o", "--output", required=True, type=output_file_or_stdout,
                   help="HTML file to write; - writes it to standard output")
    add_limit_options(p)
    add_source_options(p, saving=False)


def run(args: argparse.Namespace) -> int:
    from compiler_core.cli.terminal_text import shown
    from compiler_core.overview import build_overview
    from compiler_core.overview.report_html import write_report

    session = read_session(args, "report")
    if session is None:
        return 2
    overview = build_overview(session)
    with writable(args.output) as output:
        try:
            write_report(session, overview, output)
        except OSError as exc:
            print(f"error: report failed writing {shown(args.output)}: {shown(exc)}", file=sys.stderr)
            return 1
    to_stdout = args.output == STREAM
    target = "the report to standard output" if to_stdout else shown(args.output)
    print(f"wrote {target}: {shown(overview.verdict)}", file=sys.stderr if to_stdout else sys.stdout)
    return 0

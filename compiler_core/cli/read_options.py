"""The trace-reading bounds (compiler_core/trace/read_limits.py) as options of `import` and `summary`."""

from __future__ import annotations

import argparse
from typing import Any

from compiler_core.trace.read_limits import DEFAULT_MAX_LINE_MB, ReadLimits


def add_limit_options(p: Any) -> None:
    p.add_argument("--max-line-mb", type=float, default=None, metavar="MB",
                   help=f"longest trace line (and record payload) kept; longer records are skipped "
                        f"with a warning (default {DEFAULT_MAX_LINE_MB}, or $COMPILESCOPE_MAX_LINE_MB)")
    p.add_argument("--max-gzip-ratio", type=float, default=200.0, metavar="X",
                   help="stop decompressing a .gz log that expands more than X times (gzip bomb)")


def limits_from_args(args: argparse.Namespace) -> ReadLimits:
    mb = args.max_line_mb
    return ReadLimits(max_line_bytes=int(mb * 2**20) if mb else -1, max_gzip_ratio=args.max_gzip_ratio)

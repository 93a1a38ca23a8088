"""`python -m compiler_core export SESSION_OR_LOG -o DIR [--compile ID] [--rank R]`: every kernel
of every compile (rank, run) as a file that runs alone, each output code, a repro of each Dynamo
graph, and INDEX.md / index.json (compiler_core/export/)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from compiler_core.cli.file_args import STREAM, UsageError
from compiler_core.cli.read_options import (
    add_limit_options,
    add_log_argument,
    add_source_options,
    read_session,
)
from compiler_core.trace.read_limits import is_pseudo_path


def output_folder(text: str) -> str:
    """argparse type of `-o DIR`: the folder may be new, but its parent must exist (a typo in a
    parent folder is a mistake to report), and it must not be a file or under /proc, /sys, /dev."""
    if text == STREAM:
        raise UsageError("-o - (standard output) cannot hold a folder of files; name a folder")
    path = os.path.realpath(text)
    if is_pseudo_path(path):
        raise UsageError(f"{text}: cannot write files under /proc, /sys or /dev")
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"{text}: is a file, not a folder")
    if not os.path.isdir(os.path.dirname(path)):
        raise UsageError(f"{text}: its parent folder {os.path.dirname(path)} does not exist")
    return text


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "export",
        help="write every kernel as a runnable file, with graph repros and an index",
        description="Export the kernels of a session or trace log: one file per kernel that builds "
        "its inputs, runs, checks itself against eager ATen where it can and prints its "
        "time; each partition's output code; a repro of each Dynamo graph; INDEX.md and "
        "index.json. Every file refuses (exit 3) a machine it was not generated for.",
    )
    add_log_argument(p, "session .json, or trace file (.log, .log.gz, .log.xz) or directory")
    p.add_argument(
        "-o",
        "--output",
        required=True,
        type=output_folder,
        metavar="DIR",
        help="folder to write into (created if missing; its parent must exist)",
    )
    p.add_argument(
        "--compile", default=None, metavar="ID", help="only this compile id, e.g. 0/1 (default: all)"
    )
    p.add_argument("--rank", type=int, default=None, metavar="R", help="only this rank (default: all)")
    add_limit_options(p)
    add_source_options(p, saving=False)


def run(args: argparse.Namespace) -> int:
    from compiler_core.cli.terminal_text import shown
    from compiler_core.export import export_compiles, select_compiles

    session = read_session(args, "export")
    if session is None:
        return 2
    chosen = select_compiles(session, args.compile, args.rank)
    if not chosen:
        known = ", ".join(sorted({c.compile_id for c in session.compiles})[:10])
        print(
            f"error: no compile matches --compile {shown(args.compile)} --rank {args.rank} "
            f"(compiles: {shown(known)})",
            file=sys.stderr,
        )
        return 1
    try:
        files = export_compiles(session, args.output, chosen)
    except (OSError, ValueError) as exc:  # UnsafePathError is a ValueError
        print(f"error: export failed writing {shown(args.output)}: {shown(exc)}", file=sys.stderr)
        return 1
    print(f"exported {len(files)} files of {len(chosen)} compile(s) to {shown(args.output)}")
    others = strangers(Path(args.output), files)
    if others:
        print(f"note: {shown(args.output)} also holds {len(others)} file{'s' * (len(others) != 1)} this "
              f"export did not write (e.g. {shown(others[0])}); INDEX.md lists only this export's",
              file=sys.stderr)
    return 0


def strangers(folder: Path, written: list[Path]) -> list[str]:
    """Files in `folder` that this export did not write: an earlier export of another session
    left there would otherwise read as part of this one."""
    mine = {Path(p).resolve() for p in written}
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if p.is_file() and p.resolve() not in mine)

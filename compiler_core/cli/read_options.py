"""How `import` and `summary` read their input: the log argument (a file, a rank folder or `-`),
the trace-reading bounds (compiler_core/trace/read_limits.py) and the source lookup
(compiler_core/analysis/source_lookup.py)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from compiler_core.analysis.source_lookup import SourceLookup
from compiler_core.cli.file_args import STREAM, named_stdin, readable
from compiler_core.trace.read_limits import DEFAULT_MAX_LINE_MB, ReadLimits

if TYPE_CHECKING:
    from compiler_core.session import Session


def read_log(args: argparse.Namespace, *, sessions: bool = False) -> Session:
    """The session of `args.path`: a trace log, a folder of logs, `-` for standard input, or
    with `sessions` a saved session `.json` (or `.json.xz`) too. Raises OSError when there is
    nothing to read (no such path, a folder without a log in it)."""
    from compiler_core.analysis import import_trace
    from compiler_core.cli.progress_line import progress_line
    from compiler_core.session.codec import SESSION_SUFFIXES, load

    with readable(args.path) as path, progress_line(path):
        if sessions and path.endswith(SESSION_SUFFIXES):
            session = load(path)
        else:
            session = import_trace(path, limits=limits_from_args(args), lookup=lookup_from_args(args))
    return named_stdin(session, path) if args.path == STREAM else session


def read_session(args: argparse.Namespace, command: str) -> Session | None:
    """`read_log(args, sessions=True)`, or None once one error line is on standard error (an
    input that cannot be read, or text that is no trace log): the command then exits 2."""
    from compiler_core.cli.terminal_text import shown
    from compiler_core.session import SessionFormatError

    try:
        session = read_log(args, sessions=True)
    except (OSError, SessionFormatError) as exc:
        print(f"error: {command} failed loading {shown(args.path)}: {shown(exc)}", file=sys.stderr)
        return None
    refused = not_a_trace(session)
    if refused:
        print(f"error: {shown(refused)}", file=sys.stderr)
        return None
    return session


def add_log_argument(p: Any, what: str) -> None:
    p.add_argument("path", help=f"{what}; - reads one from standard input")


def add_limit_options(p: Any) -> None:
    p.add_argument("--max-line-mb", type=float, default=None, metavar="MB",
                   help=f"longest trace line (and record payload) kept; longer records are skipped "
                        f"with a warning (default {DEFAULT_MAX_LINE_MB}, or $COMPILESCOPE_MAX_LINE_MB)")
    p.add_argument("--max-gzip-ratio", type=float, default=200.0, metavar="X",
                   help="stop decompressing a .gz or .xz log that expands more than X times (a bomb)")


def add_source_options(p: Any, *, saving: bool) -> None:
    """Source lookup on this machine: off for a log unless asked (analysis/source_lookup.py)."""
    p.add_argument("--local-sources", action="store_true",
                   help="read the source files the log names from this machine, where they hold the "
                        "lines the log quotes: only .py files under the log's folder, this environment's "
                        "site-packages and stdlib, and --source-root folders (default: show only the "
                        "lines the log quotes, read no local file)")
    p.add_argument("--source-root", action="append", default=[], metavar="DIR",
                   help="another folder --local-sources may read from (repeatable)")
    if saving:
        p.add_argument("--include-sources", action="store_true",
                       help="keep the files --local-sources read in the saved session (default: the "
                            "session keeps the lines the log quotes)")


def lookup_from_args(args: argparse.Namespace) -> SourceLookup | None:
    """None unless asked; a log from standard input has no folder of its own to read sources from,
    only the environment's and the --source-root folders."""
    if not args.local_sources:
        return None
    return SourceLookup.for_log("" if args.path == STREAM else str(args.path), args.source_root)


def limits_from_args(args: argparse.Namespace) -> ReadLimits:
    mb = args.max_line_mb
    return ReadLimits(max_line_bytes=int(mb * 2**20) if mb else -1, max_gzip_ratio=args.max_gzip_ratio)


def not_a_trace(session: Session) -> str | None:
    """Why `session` is no import of a trace log (a model file or any text read as one: the
    reader found no record in any file; or every file was empty), else None. The GUI still
    shows such a session with its diagnostics; the CLI exits non-zero instead of writing an
    empty session and 0."""
    from compiler_core.trace.records import EMPTY_LOG, NOT_A_TRACE

    if session.compiles:
        return None
    for why in (NOT_A_TRACE, EMPTY_LOG):
        bad = [d.path for d in session.diagnostics if d.message == why]
        if bad:
            return f"{', '.join(bad[:3])}: {why}"
    return None

"""`python -m compiler_core <command>` (or `compilescope-cli`): capture, import, summary, budget, run,
cache, export, diff, report.

Each command lives in its own module exposing `add_parser(subparsers)` and `run(args) -> int`, so
the commands stay independent; a module that sets `NEEDS_TORCH` is refused here, in one sentence
that says how to install torch, when torch is missing. Failures print one clear line first (what
failed, in which stage, the user's own message), then details, and exit non-zero; never a bare
traceback. Files on the command line follow the Unix conventions of file_args.py (`-`, outputs
checked before any work); a reader that closes the pipe early (`| head`) ends the command quietly.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from types import ModuleType

from compiler_core import __version__
from compiler_core.capture_support import capture_unavailable
from compiler_core.cli.file_args import UsageError
from compiler_core.cli.terminal_text import shown

COMMANDS = ("capture", "import", "summary", "budget", "run", "cache", "export", "diff", "report")
EXIT_USAGE = 2  # argparse's status for a command line that cannot work
EXIT_CLOSED_PIPE = 128 + 13  # what a shell reports for a tool SIGPIPE ended, as `yes | head -1` does
CONSOLE_SCRIPT = "compilescope-cli"


def _command_module(name: str) -> ModuleType:
    return importlib.import_module(f"compiler_core.cli.{name}_cmd")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """All commands, or `only` one: a run of one command need not import the others (capture,
    run and budget pull in the worker and timeline modules: a tenth of a log import's CPU)."""
    called_as = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    prog = CONSOLE_SCRIPT if called_as.startswith(CONSOLE_SCRIPT) else "python -m compiler_core"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--version", action="version", version=f"compilescope {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS if only is None else (only,):
        try:
            module = _command_module(name)
        except ModuleNotFoundError:
            continue
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command and return its exit status.

    A closed standard output is handled as the Python documentation's "Note on SIGPIPE"
    recommends. Python ignores SIGPIPE, so a write to a pipe whose reader has gone raises
    BrokenPipeError. That error may surface in a command's own print, or in the final flush
    below. It ends the command quietly: standard output is pointed at devnull, so the flush at
    interpreter exit cannot raise again. The one pipe this process writes to other than its
    own streams (a worker's stdin) already suppresses its errors (worker/client.py)."""
    try:
        status = _run_command(argv)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_CLOSED_PIPE
    return status


def _run_command(argv: list[str] | None) -> int:
    words = sys.argv[1:] if argv is None else argv
    only = words[0] if words and words[0] in COMMANDS else None
    try:
        args = build_parser(only).parse_args(argv)
        args.words = list(words)  # as typed: argparse drops the `--` that `run` reads (run_cmd.py)
        module = _command_module(args.command)
        if getattr(module, "NEEDS_TORCH", False):
            reason = capture_unavailable()
            if reason is not None:
                print(f"error: {reason}", file=sys.stderr)
                return EXIT_USAGE
        result: int = module.run(args)
    except UsageError as exc:
        print(f"error: {shown(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    return result

"""`python -m compiler_core <command>`: capture, import, summary, budget, run.

Each command lives in its own module exposing `add_parser(subparsers)` and `run(args) -> int`, so
the commands stay independent. Failures print one clear line first (what failed, in which stage,
the user's own message), then details, and exit non-zero; never a bare traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from types import ModuleType

COMMANDS = ("capture", "import", "summary", "budget", "run")


def _command_module(name: str) -> ModuleType:
    return importlib.import_module(f"compiler_core.cli.{name}_cmd")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """All commands, or `only` one: a run of one command need not import the others (capture,
    run and budget pull in the worker and timeline modules: a tenth of a log import's CPU)."""
    parser = argparse.ArgumentParser(prog="python -m compiler_core", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS if only is None else (only,):
        try:
            module = _command_module(name)
        except ModuleNotFoundError:
            continue
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    only = words[0] if words and words[0] in COMMANDS else None
    args = build_parser(only).parse_args(argv)
    args.words = list(words)  # as typed: argparse drops the `--` that `run` reads (run_cmd.py)
    module = _command_module(args.command)
    try:
        result: int = module.run(args)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    return result

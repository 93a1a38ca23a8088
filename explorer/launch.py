"""Command-line entry point of the GUI (`compilescope`, `python main.py`)."""

from __future__ import annotations

import argparse

DEFAULT_EXAMPLE = "transformer_block"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="compilescope", description=__doc__)
    parser.add_argument("path", nargs="?", help="model file, TORCH_TRACE log/directory or session")
    parser.add_argument("--example", help=f"bundled example to open (default {DEFAULT_EXAMPLE})")
    parser.add_argument("--screenshot", metavar="OUT.png", help="render the window, save, exit")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.path is None and args.example is None:
        args.example = DEFAULT_EXAMPLE  # no arguments: the bundled example, as the README says
    from explorer.app import run_app  # deferred: Qt start-up only when the GUI is really wanted

    return run_app(args)

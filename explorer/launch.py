"""Command-line entry point of the GUI (`compilescope`, `python main.py`)."""

from __future__ import annotations

import argparse
import signal

from explorer.app_display import NO_DISPLAY_EXIT, check_display

DEFAULT_EXAMPLE = "transformer_block"


def build_parser() -> argparse.ArgumentParser:
    from compiler_core import __version__

    parser = argparse.ArgumentParser(prog="compilescope", description=__doc__)
    parser.add_argument("--version", action="version", version=f"compilescope {__version__}")
    parser.add_argument("path", nargs="?", help="model file, TORCH_TRACE log/directory or session")
    parser.add_argument("--example", help=f"bundled example to open (default {DEFAULT_EXAMPLE})")
    parser.add_argument("--screenshot", metavar="OUT.png", help="render the window, save, exit")
    parser.add_argument("--run", metavar="SCRIPT.py",
                        help="run your own script (arguments after --) and watch its compiles live")
    parser.add_argument("--device", default="cpu", help="with --run: cpu or cuda (how steps are timed)")
    parser.add_argument("--max-steps", type=int, default=None, help="with --run: stop after N calls")
    parser.add_argument("--nproc", type=int, default=1, help="with --run: ranks under torchrun")
    return parser


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Our options before the first `--`; after it, the `--run` script's own arguments."""
    script_args: list[str] = []
    if "--" in argv:  # `compilescope --run train.py -- --epochs 3`: the rest is the script's
        script_args = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    args = build_parser().parse_args(argv)
    args.script_args = script_args
    return args


def main(argv: list[str] | None = None) -> int:
    import sys

    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.path is None and args.example is None and args.run is None:
        args.example = DEFAULT_EXAMPLE  # no arguments: the bundled example, as the README says
    hint = check_display(needs_window=not args.screenshot)  # before Qt, which aborts without a display
    if hint is not None:
        print(hint, file=sys.stderr)
        return NO_DISPLAY_EXIT
    try:
        from explorer.app import run_app  # deferred: Qt start-up only when the GUI is really wanted

        return run_app(args)
    except KeyboardInterrupt:  # Ctrl-C before the event loop runs (start-up, a --screenshot capture)
        return 128 + signal.SIGINT  # the shell's status for a program ended by Ctrl-C

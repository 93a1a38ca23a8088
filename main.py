"""Start CompileScope: `python main.py [PATH] [--example NAME] [--screenshot OUT.png] [--version]`."""

import sys


def main() -> int:
    """`--version` is answered here, before anything loads Qt; the rest goes to the GUI's launcher."""
    argv = sys.argv[1:]
    ours = argv[: argv.index("--")] if "--" in argv else argv  # after `--`: a `--run` script's own
    if "--version" in ours:
        from compiler_core import __version__

        print(f"compilescope {__version__}")
        return 0
    from explorer.launch import main as launch

    return launch()


if __name__ == "__main__":
    raise SystemExit(main())

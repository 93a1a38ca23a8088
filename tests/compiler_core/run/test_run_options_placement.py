"""`compiler_core run train.py -o run.json` hands `-o run.json` to the script (everything after
the script is its own, as with `python train.py ARGS`): the session then went to
train.session.json without a word. The CLI now says where CompileScope's options belong."""

from __future__ import annotations

import argparse

from compiler_core.cli import build_parser
from compiler_core.cli.run_cmd import misplaced_options


def _parse(words: list[str]) -> argparse.Namespace:
    """As `compiler_core.cli.main` parses: the words as typed travel with the namespace."""
    args = build_parser().parse_args(words)
    args.words = words
    return args


def test_our_options_after_the_script_are_named() -> None:
    args = _parse(["run", "train.py", "-o", "run.json", "--max-steps", "5"])
    assert list(args.script_args) == ["-o", "run.json", "--max-steps", "5"], "they go to the script"
    assert misplaced_options(args) == ["-o", "--max-steps"]


def test_script_arguments_after_the_separator_are_left_alone() -> None:
    args = _parse(["run", "-o", "run.json", "train.py", "--", "-o", "model.pt"])
    assert misplaced_options(args) == []
    args = _parse(["run", "train.py", "--epochs", "3"])
    assert misplaced_options(args) == []

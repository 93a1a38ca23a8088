"""The compare window offers the two hints torch reads no variable for, on real sessions (no
torch here): a `print` that breaks the graph offers `reorderable_logging_functions`, and a
training capture that saves activations offers a lower `activation_memory_budget`, listed apart
from the causes left to fix.

The sessions were captured on CPU (torch 2.13) by the capture worker from the model files that
tests/compiler_core/diff/test_logging_and_budget_hints.py writes: `PRINTS` as it is
(print_break), `TRAINS` as it is (train_budget_default) and re-run with
`--apply activation_memory_budget=0.1` (train_budget_0.1); gzipped."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from compiler_core.diff import diff_sessions
from compiler_core.diff.fix_list import fix_rows, lever_rows
from compiler_core.diff.hint_plan import Hint
from compiler_core.session import Session, loads
from explorer.compare import CompareWindow, FixListView

DATA = Path(__file__).resolve().parent / "data"


def _session(name: str) -> Session:
    return loads(gzip.decompress((DATA / f"{name}.json.gz").read_bytes()))


@pytest.fixture(scope="module")
def budgets() -> tuple[Session, Session]:
    return _session("train_budget_default"), _session("train_budget_0.1")


def test_a_print_break_offers_to_reorder_print(qtbot: object) -> None:
    session = _session("print_break")
    view = FixListView(fix_rows(session), lever_rows(session))
    qtbot.addWidget(view)  # type: ignore[attr-defined]
    assert view.tree.topLevelItemCount() == 1 and len(view.buttons) == 1  # inference only: no lever
    item = view.tree.topLevelItem(0)
    assert item is not None and item.text(0) == "prints.py:13" and item.child(0).text(1).startswith("print(")
    assert "reorderable_logging_functions.add(print)" in view.buttons[0].text()
    asked: list[object] = []
    view.applyRequested.connect(asked.append)
    view.buttons[0].click()
    assert asked == [Hint("reorderable_logging_functions", value="builtins.print")]


def test_the_budget_lever_halves_the_budget_the_after_run_used(qtbot: object,
                                                               budgets: tuple[Session, Session]) -> None:
    before, after = budgets
    diff = diff_sessions(before, after)
    assert (diff.total("saved bytes").delta or 0) < 0
    win = CompareWindow(diff, before, after)
    qtbot.addWidget(win)  # type: ignore[attr-defined]
    assert win.fixes is not None and not win.fixes.rows  # no break, no recompile: nothing to fix
    (lever,) = win.fixes.levers
    assert lever.kind == "memory" and "budget 0.1" in lever.cause
    heading = win.fixes.tree.topLevelItem(0)
    assert heading is not None and heading.text(1).startswith("Worth trying")
    assert heading.child(0).text(0) == "trains.py"
    asked: list[object] = []
    win.applyRequested.connect(asked.append)
    (button,) = win.fixes.buttons
    assert "activation_memory_budget = 0.05" in button.text()
    button.click()
    assert asked == [Hint("activation_memory_budget", value="0.05")]


def test_a_default_training_capture_is_offered_half_the_budget(budgets: tuple[Session, Session]) -> None:
    (lever,) = lever_rows(budgets[0])
    assert lever.hint == Hint("activation_memory_budget", value="0.5")
    assert lever.cause.startswith("7 tensors, 9,216 bytes saved")

"""The hints torch reads no environment variable for: a logging call that breaks the graph
(reordered or skipped) and the activation memory budget. Each is applied inside the worker
(compiler_core/capture/hooks/hint_config.py); real re-runs of tiny model files on CPU show the
break gone and the saved activations traded for recomputation."""

from __future__ import annotations

import dataclasses
import json
import logging
import warnings
from pathlib import Path

import pytest

from compiler_core.capture.hooks.hint_config import (
    ENV_IGNORED,
    ENV_MEMORY_BUDGET,
    ENV_REORDERABLE,
    hinted_config,
)
from compiler_core.cli import main
from compiler_core.diff.fix_list import fix_rows, lever_rows, session_hints
from compiler_core.diff.hint_plan import Hint, parse_hint, plan_for
from compiler_core.diff.hint_rerun import capture, rerun_with_hint
from compiler_core.worker.protocol import CaptureSpec

PRINTS = '''"""Prints a tensor in forward: Dynamo breaks the graph at the print."""
import torch


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(8, 16)
        self.b = torch.nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.a(x))
        print("hidden", h.sum())
        return self.b(h)


torch.manual_seed(0)
model = Net()
example_inputs = (torch.randn(4, 8),)
'''

LOGS = '''"""Logs through a Logger in forward: Dynamo breaks the graph at the call."""
import logging

import torch

log = logging.getLogger("tiny")


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(8, 16)
        self.b = torch.nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.a(x))
        log.info("hidden %s", 16)
        return self.b(h)


torch.manual_seed(0)
model = Net()
example_inputs = (torch.randn(4, 8),)
'''

TRAINS = '''"""A training step whose forward keeps pointwise results for backward (sin, cos, tanh)."""
import torch


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(16, 32)
        self.b = torch.nn.Linear(32, 32)
        self.c = torch.nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.sin(self.a(x)).cos()
        h = torch.tanh(self.b(h)) * h
        return self.c(h)


torch.manual_seed(0)
model = Net()
example_inputs = (torch.randn(8, 16),)


def train_step(model, inputs):
    model(*inputs).sum().backward()
'''


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_the_hints_as_typed_and_their_plans() -> None:
    printing = parse_hint("reorderable_logging_functions:print")
    assert printing == Hint("reorderable_logging_functions", value="builtins.print")
    assert parse_hint("reorderable_logging_functions:builtins.print") == printing
    assert parse_hint("reorderable_logging_functions:warnings.warn").value == "warnings.warn"
    assert parse_hint("ignore_logging_functions:info") == Hint("ignore_logging_functions",
                                                                value="logging.Logger.info")  # fmt: skip
    budget = parse_hint("activation_memory_budget=0.5")
    assert budget == Hint("activation_memory_budget", value="0.5")
    assert parse_hint("activation_memory_budget:.5") == budget
    for hint in (printing, budget, parse_hint("ignore_logging_functions:logging.Logger.warning")):
        assert parse_hint(hint.as_arg()) == hint
    plan = plan_for(printing)
    assert plan is not None and plan.env == {ENV_REORDERABLE: "builtins.print"} and plan.mode is None
    plan = plan_for(budget)
    assert plan is not None and plan.env == {ENV_MEMORY_BUDGET: "0.5"}
    plan = plan_for(Hint("ignore_logging_functions", value="logging.Logger.error"))
    assert plan is not None and plan.env == {ENV_IGNORED: "logging.Logger.error"}
    assert "add(print)" in printing.in_words() and "activation_memory_budget = 0.5" in budget.in_words()


def test_only_well_known_functions_and_budgets_in_range_have_a_plan() -> None:
    for bad in ("reorderable_logging_functions:os.system", "reorderable_logging_functions:",
                "activation_memory_budget=1.5", "activation_memory_budget=nan", "activation_memory_budget=x",
                "ignore_logging_functions:builtins.exec"):  # fmt: skip
        with pytest.raises(ValueError, match="not a hint"):
            parse_hint(bad)
    # a Logger method is a bound method: Dynamo never reorders one, only skips it
    with pytest.raises(ValueError, match=r"ignore_logging_functions:logging\.Logger\.info"):
        parse_hint("reorderable_logging_functions:logging.Logger.info")
    with pytest.raises(ValueError, match=r"reorderable_logging_functions:builtins\.print"):
        parse_hint("ignore_logging_functions:print")
    assert plan_for(Hint("reorderable_logging_functions", value="os.system")) is None
    assert plan_for(Hint("ignore_logging_functions", value="builtins.print")) is None
    assert plan_for(Hint("activation_memory_budget", value="-0.1")) is None


def test_the_worker_setting_applies_and_restores() -> None:
    import torch._dynamo.config as dynamo_config
    import torch._functorch.config as functorch_config

    def state() -> tuple[object, ...]:
        return (functorch_config.activation_memory_budget, set(dynamo_config.reorderable_logging_functions),
                set(dynamo_config.ignore_logging_functions))  # fmt: skip

    before = state()
    env = {ENV_MEMORY_BUDGET: "0.25", ENV_REORDERABLE: "builtins.print,warnings.warn",
           ENV_IGNORED: "logging.Logger.info"}  # fmt: skip
    with pytest.raises(RuntimeError), hinted_config(env) as applied:
        assert functorch_config.activation_memory_budget == 0.25
        assert {print, warnings.warn} <= dynamo_config.reorderable_logging_functions
        assert logging.Logger.info in dynamo_config.ignore_logging_functions
        assert applied == {"functorch.activation_memory_budget": "0.25",
                           "dynamo.reorderable_logging_functions": "builtins.print,warnings.warn",
                           "dynamo.ignore_logging_functions": "logging.Logger.info"}  # fmt: skip
        raise RuntimeError("boom")
    assert state() == before
    with hinted_config({}) as applied:
        assert applied == {} and state() == before
    for bad in ({ENV_REORDERABLE: "os.system"}, {ENV_MEMORY_BUDGET: "2"}):
        with pytest.raises(ValueError), hinted_config(bad):
            pass
    assert state() == before


@pytest.mark.slow
def test_apply_the_print_hint_and_the_break_is_gone(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    model = _write(tmp_path, "prints.py", PRINTS)
    assert main(["diff", model, "--apply", "reorderable_logging_functions:print", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    totals = {t["name"]: t for t in data["totals"]}
    assert totals["graphs"]["after"] < totals["graphs"]["before"]
    assert (totals["graph breaks"]["before"], totals["graph breaks"]["after"]) == (1, 0)
    (gone,) = data["breaks_removed"]
    assert gone["line"] == 13 and gone["code"].startswith("print(")
    assert not data["breaks_added"]
    assert not [row for row in data["left_to_fix"] if row["line"] == 13]


@pytest.mark.slow
def test_a_logger_call_is_skipped_by_the_hint_its_break_names(tmp_path: Path) -> None:
    model = _write(tmp_path, "logs.py", LOGS)
    before = capture(CaptureSpec(model_path=model, out_path=str(tmp_path / "first.json")),
                     cache_dir=tmp_path / "cache")  # fmt: skip
    (hint,) = session_hints(before)
    assert hint == Hint("ignore_logging_functions", value="logging.Logger.info")
    rerun = rerun_with_hint(model, hint, tmp_path, before=before, cache_dir=tmp_path / "cache")
    diff = rerun.diff
    assert (diff.total("graphs").before, diff.total("graphs").after) == (2, 1)
    assert [b.line for b in diff.breaks_removed] == [17] and not diff.breaks_added


@pytest.mark.slow
def test_a_lower_memory_budget_saves_less_for_backward(tmp_path: Path) -> None:
    model = _write(tmp_path, "trains.py", TRAINS)
    rerun = rerun_with_hint(model, parse_hint("activation_memory_budget=0.1"), tmp_path,
                            cache_dir=tmp_path / "cache")  # fmt: skip
    diff = rerun.diff
    saved, recomputed = diff.total("saved bytes"), diff.total("recomputed ops")
    assert (saved.delta or 0) < 0 or (recomputed.delta or 0) > 0
    assert (saved.before or 0) > 0
    assert rerun.after.meta.extra["functorch.activation_memory_budget"] == "0.1"
    assert "functorch.activation_memory_budget" not in rerun.before.meta.extra
    # the GUI's next lever on the after session halves the budget it ran with
    (lever,) = lever_rows(rerun.after)
    assert lever.hint == Hint("activation_memory_budget", value="0.05")
    (first,) = lever_rows(rerun.before)
    assert first.hint == Hint("activation_memory_budget", value="0.5") and first.kind == "memory"


@pytest.mark.slow
def test_the_timeline_times_the_model_with_the_hint_too(tmp_path: Path) -> None:
    """With --steps the timeline runs in a fresh interpreter: it applies the hint as well, so
    the step times compared are those of the graph the capture shows (one graph, no break)."""
    model = _write(tmp_path, "prints.py", PRINTS)
    plan = plan_for(parse_hint("reorderable_logging_functions:print"))
    assert plan is not None
    session = capture(CaptureSpec(model_path=model, out_path=str(tmp_path / "timed.json"), steps=2),
                      plan.env, cache_dir=tmp_path / "cache")  # fmt: skip
    assert len(session.compiles) == 1
    (default,) = [m for m in session.mode_stats if m.mode == "default"]
    assert default.runtime is not None
    assert {g.region for g in default.runtime.graph_calls} == {"0/0"}


SCRIPT = '''"""A plain script (no model-file names) whose compiled function warns, breaking the graph."""
import warnings

import torch


@torch.compile
def step(x: torch.Tensor) -> torch.Tensor:
    x = torch.relu(x) + 1
    warnings.warn("about to scale")
    return x * 2


step(torch.randn(4, 8))
'''


@pytest.mark.slow
def test_a_script_run_is_rerun_with_the_logging_hint(tmp_path: Path) -> None:
    """A script's re-run (compiler_core run's worker) applies the setting as a capture does."""
    from compiler_core.run.spec import ScriptSpec

    script = _write(tmp_path, "warns.py", SCRIPT)
    base = ScriptSpec(model_path=script, out_path="", cwd=str(tmp_path))
    before = capture(dataclasses.replace(base, out_path=str(tmp_path / "first.json")),
                     cache_dir=tmp_path / "cache")  # fmt: skip
    (hint,) = session_hints(before)
    assert hint == Hint("reorderable_logging_functions", value="warnings.warn")
    rerun = rerun_with_hint(script, hint, tmp_path, before=before, base=base, cache_dir=tmp_path / "cache")
    diff = rerun.diff
    assert (diff.total("graph breaks").before, diff.total("graph breaks").after) == (1, 0)
    assert [b.line for b in diff.breaks_removed] == [10]
    notes = [d.message for d in rerun.after.diagnostics if d.severity == "info"]
    assert "set for this run: dynamo.reorderable_logging_functions = warnings.warn" in notes


@pytest.mark.slow
def test_a_print_dynamo_cannot_reorder_offers_no_plan(tmp_path: Path) -> None:
    """A print of a shape (a `Size`, not a tensor or a constant) would break again with the
    hint applied ("can't actually be reordered"): its row gives Dynamo's advice, no button."""
    shapes = PRINTS.replace('print("hidden", h.sum())', 'print("hidden", h.shape)')
    model = _write(tmp_path, "shapes.py", shapes)
    session = capture(CaptureSpec(model_path=model, out_path=str(tmp_path / "shapes.json")),
                      cache_dir=tmp_path / "cache")  # fmt: skip
    (row,) = fix_rows(session)
    assert row.kind == "break" and row.code == 'print("hidden", h.shape)'
    assert row.hint is None and "print" in row.advice

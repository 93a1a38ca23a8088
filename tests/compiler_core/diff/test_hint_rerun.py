"""Apply a hint and re-run: the hints a real session names, their plans, and real re-runs of two
model files through the capture worker on CPU (each the file as it is, then with the hint)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler_core.cli import main
from compiler_core.diff.fix_list import fix_rows, session_hints
from compiler_core.diff.hint_plan import (
    ENV_DYNAMIC_SOURCES,
    ENV_DYNAMO_CONFIGS,
    ENV_SCALARS,
    Hint,
    parse_hint,
    plan_for,
)
from compiler_core.diff.hint_rerun import RerunError, capture, rerun_with_hint
from compiler_core.run.spec import ScriptSpec
from compiler_core.worker.protocol import CaptureSpec
from tests.compiler_core.diff.trace_pairs import SCRIPTS, trace_session


def test_plans_are_an_environment_and_capture_options() -> None:
    plan = plan_for(Hint("capture_scalar_outputs"))
    assert plan is not None and plan.env == {ENV_SCALARS: "1"} and plan.mode is None
    plan = plan_for(Hint("mark_dynamic", source="x", dim=0))
    assert plan is not None and plan.env == {ENV_DYNAMIC_SOURCES: "L['x']:0"}
    plan = plan_for(Hint("mark_dynamic", source="L['args'][0]", dim=1))
    assert plan is not None and plan.env == {ENV_DYNAMIC_SOURCES: "L['args'][0]:1"}
    plan = plan_for(Hint("dynamo_config", value="capture_dynamic_output_shape_ops=True"))
    assert plan is not None and plan.env == {ENV_DYNAMO_CONFIGS: ">=0:capture_dynamic_output_shape_ops=True"}
    mode = plan_for(Hint("mode", value="max-autotune"))
    assert mode is not None and mode.mode == "max-autotune" and not mode.env
    dynamic = plan_for(Hint("dynamic"))
    assert dynamic is not None and dynamic.dynamic is True
    # nothing that could smuggle code or a second setting into the override
    assert plan_for(Hint("dynamo_config", value="x=__import__('os')")) is None
    assert plan_for(Hint("dynamo_config", value="a=1;>=0:b=2")) is None
    assert plan_for(Hint("mark_dynamic", source="x")) is None
    assert plan_for(Hint("rewrite_the_code")) is None


def test_real_sessions_name_their_mechanical_hints() -> None:
    assert session_hints(trace_session("item_model.py", "item")) == [Hint("capture_scalar_outputs")]
    assert session_hints(trace_session("recompile_model.py", "static")) == [Hint("mark_dynamic", "x", 0)]
    assert session_hints(trace_session("item_model.py", "fixed")) == []


def test_fix_rows_give_the_line_and_the_hint_or_the_edit() -> None:
    (row,) = fix_rows(trace_session("item_model.py", "item"))
    assert row.kind == "break" and row.hint == Hint("capture_scalar_outputs")
    assert row.where == "item_model.py:26" and row.code == "scale = h.mean().item()"
    (row,) = fix_rows(trace_session("recompile_model.py", "static"))
    assert row.kind == "recompile" and row.hint == Hint("mark_dynamic", "x", 0)
    assert "mark_dynamic" in row.advice


@pytest.mark.slow
def test_rerun_with_capture_scalar_outputs_joins_the_graphs(tmp_path: Path) -> None:
    model = str(SCRIPTS / "item_modelfile.py")
    rerun = rerun_with_hint(model, Hint("capture_scalar_outputs"), tmp_path, cache_dir=tmp_path / "cache")
    assert (tmp_path / "before.json").is_file() and (tmp_path / "after.json").is_file()
    diff = rerun.diff
    assert (diff.total("graphs").before, diff.total("graphs").after) == (2, 1)
    assert [b.reason for b in diff.breaks_removed] == [rerun.before.compiles[0].graph_breaks[0].reason]
    (forward,) = diff.compiles
    dynamo = next(g for g in forward.graphs if g.stage == "dynamo")
    assert "item" in dynamo.ops_added
    # the re-run's model module has a new name each run: its guard is no change
    assert not [g for g in forward.guards_added if "compilescope_user" in g and "L['self']," in g]


@pytest.mark.slow
def test_rerun_with_the_hint_a_recompile_names_removes_it(tmp_path: Path) -> None:
    import torch

    if tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]) < (2, 13):
        pytest.skip("mark_dynamic through torch.compiler.config.dynamic_sources removes the recompile "
                    "from torch 2.13; on 2.11 the re-run still recompiles (the diff then says so)")
    model = str(SCRIPTS / "batch_modelfile.py")
    base = CaptureSpec(model_path=model, out_path="")
    before = capture(CaptureSpec(model_path=model, out_path=str(tmp_path / "first.json")),
                     cache_dir=tmp_path / "cache")  # fmt: skip
    assert sum(1 for c in before.compiles if c.recompile_reasons) == 1
    (hint,) = session_hints(before)
    assert hint == Hint("mark_dynamic", "x", 0)
    rerun = rerun_with_hint(model, hint, tmp_path, before=before, base=base, cache_dir=tmp_path / "cache")
    assert not (tmp_path / "before.json").exists()  # the session given was not captured again
    diff = rerun.diff
    assert (diff.total("recompiles").before, diff.total("recompiles").after) == (1, 0)
    assert diff.recompiles_removed[0].guard.startswith("input x dim 0")
    assert [c.compile_id for c in diff.only_before] == ["0/1"] and not diff.only_after


def test_a_hint_without_a_plan_is_refused_before_any_capture(tmp_path: Path) -> None:
    with pytest.raises(RerunError, match="needs a change to the code"):
        rerun_with_hint(str(SCRIPTS / "item_modelfile.py"), Hint("mark_dynamic", source="x"), tmp_path)
    assert not list(tmp_path.iterdir())


def test_hints_as_typed_on_the_command_line() -> None:
    assert parse_hint("capture_scalar_outputs") == Hint("capture_scalar_outputs")
    assert parse_hint("mark_dynamic:L['x']:1") == Hint("mark_dynamic", source="L['x']", dim=1)
    assert parse_hint("mode:reduce-overhead") == Hint("mode", value="reduce-overhead")
    flag = Hint("dynamo_config", value="specialize_float=False")
    assert parse_hint("config:specialize_float=False") == flag
    for hint in (Hint("capture_scalar_outputs"), Hint("dynamic"), Hint("mark_dynamic", "L['x']", 2), flag,
                 Hint("mode", value="reduce-overhead")):  # fmt: skip
        assert parse_hint(hint.as_arg()) == hint
    for bad in ("", "mark_dynamic:x", "mode:", "config:flag", "print"):
        with pytest.raises(ValueError, match="not a hint"):
            parse_hint(bad)


def test_cli_apply_refuses_what_cannot_work(capsys: pytest.CaptureFixture[str]) -> None:
    model = str(SCRIPTS / "item_modelfile.py")
    assert main(["diff", model, "--apply", "print"]) == 2
    assert "not a hint" in capsys.readouterr().err
    assert main(["diff", model, model, "--apply", "dynamic"]) == 2
    assert "give one model file" in capsys.readouterr().err
    assert main(["diff", model]) == 2
    assert "needs BEFORE and AFTER" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_apply_captures_twice_and_compares(capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    if tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]) < (2, 13):
        pytest.skip("mark_dynamic through torch.compiler.config.dynamic_sources removes the recompile "
                    "from torch 2.13 (see test_rerun_with_the_hint_a_recompile_names_removes_it)")
    model = str(SCRIPTS / "batch_modelfile.py")
    assert main(["diff", model, "--apply", "mark_dynamic:x:0", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    recompiles = {t["name"]: t for t in data["totals"]}["recompiles"]
    assert (recompiles["before"], recompiles["after"]) == (1, 0)


@pytest.mark.slow
def test_cli_apply_a_mode_with_steps_compares_the_step_times_of_both_modes(
        capsys: pytest.CaptureFixture[str]) -> None:
    """`--steps`: both runs time their compiled mode; the mode hint's row pairs the first run's
    mode with the hinted one (the per-mode rows pair a mode with itself only)."""
    model = str(SCRIPTS / "item_modelfile.py")
    assert main(["diff", model, "--apply", "mode:reduce-overhead", "--steps", "20", "--json"]) == 0
    modes = {m["mode"]: m for m in json.loads(capsys.readouterr().out)["modes"]}
    row = modes["default → reduce-overhead"]
    assert row["step_ms"]["before"] > 0 and row["step_ms"]["after"] > 0
    assert row["change"] == pytest.approx(row["step_ms"]["after"] / row["step_ms"]["before"] - 1)
    assert modes["eager"]["step_ms"]["before"] > 0 and modes["eager"]["step_ms"]["after"] > 0
    assert modes["default"]["step_ms"]["after"] is None  # the second run timed the hinted mode


@pytest.mark.slow
def test_a_script_run_is_rerun_with_the_hint_from_the_environment(tmp_path: Path) -> None:
    """The plain script (no model-file names) under `compiler_core run`, before and after."""
    script = str(SCRIPTS / "item_model.py")
    base = ScriptSpec(model_path=script, out_path="", script_args=("item",), cwd=str(tmp_path))
    rerun = rerun_with_hint(script, Hint("capture_scalar_outputs"), tmp_path, base=base,
                            cache_dir=tmp_path / "cache")  # fmt: skip
    diff = rerun.diff
    assert (diff.total("graphs").before, diff.total("graphs").after) == (2, 1)
    assert (diff.total("graph breaks").before, diff.total("graph breaks").after) == (1, 0)
    with pytest.raises(RerunError, match=r"script's own torch\.compile"):
        rerun_with_hint(script, Hint("mode", value="max-autotune"), tmp_path, base=base)

"""Real before/after pairs compiled on this CPU: a `.item()` graph break and its two fixes, and a
recompile on a new batch size before and after `mark_dynamic`. Each side is a real TORCH_TRACE
log of a fresh process (trace_pairs.py), compared as a user would compare them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler_core.cli import main
from compiler_core.diff import diff_sessions, session_text
from compiler_core.session import Session
from tests.compiler_core.diff.trace_pairs import trace_log, trace_session

ITEM = "item_model.py"
RECOMPILE = "recompile_model.py"


@pytest.mark.parametrize("fix", ["capture", "fixed"])
def test_item_break_fixed_makes_one_graph_of_two(fix: str) -> None:
    before, after = trace_session(ITEM, "item"), trace_session(ITEM, fix)
    diff = diff_sessions(before, after)
    assert (diff.total("graphs").before, diff.total("graphs").after) == (2, 1)
    assert (diff.total("graph breaks").before, diff.total("graph breaks").after) == (1, 0)
    # the break that went, with its reason and the line a user changed
    (gone,) = diff.breaks_removed
    assert "item()" in gone.reason and gone.code == "scale = h.mean().item()"
    assert not diff.breaks_added
    # the forward frame is matched by its code location; the resume frame exists only before
    (forward,) = diff.compiles
    assert forward.frame.endswith("forward") and forward.before == forward.after == "0/0"
    (resume,) = diff.only_before
    assert "torch_dynamo_resume_in_forward" in resume.frame and not diff.only_after
    # the matched Dynamo graph now holds the code that ran after the break: the second linear
    dynamo = next(g for g in forward.graphs if g.stage == "dynamo")
    assert dynamo.nodes_after > dynamo.nodes_before
    assert "torch._C._nn.linear" in dynamo.ops_added
    assert ("item" in dynamo.ops_added) == (fix == "capture")
    assert not dynamo.removed
    # both sides trained: the AOT backward and saved tensors are compared too
    stages = {g.stage for g in forward.graphs}
    assert {"aot_forward", "aot_backward", "post_grad_forward", "post_grad_backward"} <= stages
    assert forward.saved is not None and forward.saved.tensors.after > forward.saved.tensors.before
    text = session_text(diff)
    assert "graphs           2 → 1" in text and "graph breaks gone:" in text
    assert "scale = h.mean().item()" in text


def test_recompile_gone_after_mark_dynamic() -> None:
    before, after = trace_session(RECOMPILE, "static"), trace_session(RECOMPILE, "marked")
    diff = diff_sessions(before, after)
    assert (diff.total("recompiles").before, diff.total("recompiles").after) == (1, 0)
    (cause,) = diff.recompiles_removed
    assert cause.guard.startswith("input x dim 0") and "mark_dynamic" in cause.fix
    assert not diff.recompiles_added
    # 0/0 pairs with 0/0; the recompile 0/1 has no counterpart and says why it happened
    (first,) = diff.compiles
    assert (first.before, first.after) == ("0/0", "0/0")
    (recompiled,) = diff.only_before
    assert recompiled.compile_id == "0/1" and "size mismatch at index 0" in recompiled.recompile_reason
    # the guard on x's size became symbolic; object addresses are no change
    assert any("size=[2, 8]" in g for g in first.guards_removed)
    assert any("size=[None, 8]" in g for g in first.guards_added)
    assert not [g for g in first.guards_added if "___check_obj_id" in g]
    lines = session_text(diff).splitlines()
    old = next(i for i, line in enumerate(lines) if line.startswith("    - check_tensor(L['x']"))
    assert "size=[None, 8]" in lines[old + 1] and lines[old + 1].startswith("    + check_tensor(L['x']")
    # the graph is the same computation with a symbolic batch dim
    dynamo = next(g for g in first.graphs if g.stage == "dynamo")
    assert not dynamo.removed and not dynamo.ops_added and not dynamo.ops_removed
    changed = {c.before: c.what for c in dynamo.changed}
    assert changed["l_x_"] == ("shape (2, 8) → (" + _batch_symbol(after) + ", 8)",)
    # the kernels are the same kernels renumbered or not at all: none gained, none lost
    assert all(not k.added and not k.removed for k in first.kernels)
    # nothing is left to fix after; the other way round, the hint to try is the one applied here
    assert diff.left_to_fix == ()
    (row,) = diff_sessions(after, before).left_to_fix
    assert row.hint is not None and row.hint.as_arg() == "mark_dynamic:x:0"
    assert "try: --apply mark_dynamic:x:0" in session_text(diff_sessions(after, before))


def _batch_symbol(session: Session) -> str:
    graph = session.compiles[0].dynamo_graph
    assert graph is not None
    x = graph.node("l_x_")
    assert x is not None
    return str(x.outputs[0].shape[0])


def test_cli_diff_of_two_logs_text_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before, after = str(trace_log(ITEM, "item")), str(trace_log(ITEM, "fixed"))
    assert main(["diff", before, after]) == 0
    text = capsys.readouterr().out
    assert "graph breaks gone:" in text and "compiles only before:" in text
    out = str(tmp_path / "diff.json")
    assert main(["diff", before, after, "--json", "-o", out]) == 0
    assert "1 compiles matched, 1 only before" in capsys.readouterr().out
    with open(out, encoding="utf-8") as f:
        data = json.load(f)
    graphs = {t["name"]: t for t in data["totals"]}["graphs"]
    assert (graphs["before"], graphs["after"], graphs["delta"]) == (2, 1, -1)
    assert data["only_before"][0]["compile_id"] == "1/0"

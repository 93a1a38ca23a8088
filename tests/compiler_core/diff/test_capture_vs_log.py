"""A capture of a model file and a plain TORCH_TRACE run of the same file are the same compile:
the diff must say so, though the capture names an operator node's target as a function
(`_operator.mul`) and torch's own log as an expression (`h * 0.52`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler_core.diff import diff_sessions
from compiler_core.diff.hint_rerun import capture
from compiler_core.worker.protocol import CaptureSpec
from tests.compiler_core.diff.trace_pairs import SCRIPTS, trace_session


@pytest.mark.slow
def test_a_capture_and_a_plain_run_have_the_same_graphs(tmp_path: Path) -> None:
    spec = CaptureSpec(model_path=str(SCRIPTS / "item_modelfile.py"), out_path=str(tmp_path / "c.json"))
    captured = capture(spec, cache_dir=tmp_path / "cache")
    imported = trace_session("plain_run.py", "item_modelfile.py")
    assert captured.meta.origin == "capture" and imported.meta.origin == "trace"
    mul = [n.target for c in (captured.compiles[1], imported.compiles[1]) if c.dynamo_graph
           for n in c.dynamo_graph.nodes if n.name == "mul"]  # fmt: skip
    assert len(mul) == 2 and mul[0] != mul[1]  # written two ways
    diff = diff_sessions(imported, captured)
    assert not diff.only_before and not diff.only_after and len(diff.compiles) == 2
    for c in diff.compiles:
        dynamo = next(g for g in c.graphs if g.stage == "dynamo")
        assert not dynamo.removed and not dynamo.added and not dynamo.renamed, dynamo
        # every node pairs with its namesake, targets read alike; the builder's module paths
        # differ for a capture and a log on a few nodes (e.g. `mean` under `a` in the capture
        # only), which the diff reports as it finds it
        assert all(w.startswith("module ") for ch in dynamo.changed for w in ch.what), dynamo.changed

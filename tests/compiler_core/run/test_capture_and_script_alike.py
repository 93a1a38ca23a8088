"""A model captured from its model file and the same model compiled by the user's own script under
`run` must show the same facts: the same graphs, the same kernels, each kernel claiming the same
nodes, the same number of links. Both through the CLI a user runs, in fresh processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compiler_core.session import Session, load
from tests.conftest import EXAMPLES, ROOT

SCRIPT = """\
import sys

sys.path.insert(0, {examples!r})
import transformer_block as tb

import torch

compiled = torch.compile(tb.model)
for _ in range(3):
    tb.train_step(compiled, tb.example_inputs)
"""


def _cli(*args: str, cwd: Path) -> None:
    subprocess.run([sys.executable, "-m", "compiler_core", *args], cwd=cwd, check=True,
                   capture_output=True, timeout=900, env={**os.environ, "PYTHONPATH": str(ROOT)})


def _facts(s: Session) -> dict[str, object]:
    kernels = {(o.graph, k.name): (sorted(k.fused_nodes), sorted(k.inferred_nodes))
               for c in s.compiles for o in c.inductor for k in o.kernels}
    graphs = [(len(c.dynamo_graph.nodes) if c.dynamo_graph else 0,
               len(c.aot.forward.nodes) if c.aot and c.aot.forward else 0,
               len(c.aot.backward.nodes) if c.aot and c.aot.backward else 0) for c in s.compiles]
    return {"graphs": graphs, "kernels": kernels, "links": len(s.links),
            "breaks": sum(len(c.graph_breaks) for c in s.compiles)}


@pytest.mark.slow
def test_capture_and_script_run_map_alike(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.format(examples=str(EXAMPLES)))
    model = EXAMPLES / "transformer_block.py"
    _cli("capture", str(model), "-o", str(tmp_path / "cap.json"), "-q", cwd=tmp_path)
    _cli("run", "-o", str(tmp_path / "run.json"), str(script), cwd=tmp_path)
    captured, ran = _facts(load(tmp_path / "cap.json")), _facts(load(tmp_path / "run.json"))
    assert captured["kernels"] and captured == ran

"""Decompositions on the transformer example, from one real capture (forward + backward).

The capture is the worker's own pieces (trace sink, recording backend, capture config) plus the
stage recorders, then the shared builder; compiled once per module because it takes tens of seconds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler_core.queries.decompositions import (
    DecompRow,
    decomposition_summary,
    decomposition_table,
    op_name,
    rows_for_refs,
)
from compiler_core.session import Session
from compiler_core.session.refs import Ref
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.slow


def capture(model_file: Path, trace: Path) -> Session:
    import torch

    from compiler_core.analysis import import_trace
    from compiler_core.analysis.stage_artifacts import with_stage_artifacts
    from compiler_core.capture.hooks.inspect_config import inspect_config
    from compiler_core.capture.hooks.recording_backend import RecordingBackend
    from compiler_core.capture.hooks.stage_hooks import stage_recorders
    from compiler_core.capture.hooks.trace_sink import TraceLogSink
    from compiler_core.modelfile import load_model_file

    spec = load_model_file(model_file)
    assert spec.train_step is not None
    torch._dynamo.reset()
    with TraceLogSink(trace), stage_recorders(), inspect_config():
        compiled = torch.compile(spec.model, backend=RecordingBackend())
        spec.train_step(compiled, spec.example_inputs())
    return with_stage_artifacts(import_trace(trace), trace)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    return capture(EXAMPLES / "transformer_block.py", tmp_path_factory.mktemp("decomp") / "trace.log")


@pytest.fixture(scope="module")
def rows(session: Session) -> list[DecompRow]:
    return decomposition_table(session, "0/0")


def row(rows: list[DecompRow], op: str) -> DecompRow:
    found = [r for r in rows if r.op == op]
    assert found, f"no row for {op}: {[r.op for r in rows]}"
    return found[0]


def test_softmax_decomposes_into_the_articles_primitives(rows: list[DecompRow]) -> None:
    softmax = row(rows, "softmax")
    assert softmax.dynamo_node == "probs"
    assert softmax.source is not None and softmax.source.line == 25
    assert {"amax", "sub", "exp", "sum", "div"} <= set(softmax.forward_ops)
    assert softmax.backward_ops, "the backward of softmax must show its decomposed ops too"


def test_softmax_rewritten_into_attention_kernel(rows: list[DecompRow]) -> None:
    """Inductor's attention pattern replaces the whole decomposition; the row says by what."""
    softmax = row(rows, "softmax")
    assert softmax.replaced
    assert any("scaled_dot_product" in op for op in softmax.replaced_by)
    assert any("scaled_dot_product" in k.name for k in softmax.kernels)


def test_layer_norm_and_gelu_land_in_fused_kernels(rows: list[DecompRow]) -> None:
    ln = row(rows, "layer_norm")
    assert {"var_mean", "rsqrt", "sub", "mul", "add"} <= set(ln.forward_ops)
    assert not ln.replaced
    assert any(k.graph == "forward" and k.name.startswith("cpp_fused") and "layer_norm" in k.name
               for k in ln.kernels)
    assert ln.backward_kernels
    gelu = row(rows, "gelu")
    assert {"mul", "erf", "add"} <= set(gelu.forward_ops)
    assert any(k.graph == "forward" and k.name.startswith("cpp_fused") and "gelu" in k.name
               for k in gelu.kernels)
    assert any("gelu" in k.name for k in gelu.backward_kernels)


def test_linear_stays_an_extern_gemm(rows: list[DecompRow]) -> None:
    linear = row(rows, "linear")
    assert "addmm" in linear.forward_ops
    assert any("addmm" in k.name for k in linear.kernels)


def test_summary_counts_distinct_ops(session: Session, rows: list[DecompRow]) -> None:
    summary = decomposition_summary(session, "0/0", rows=rows)
    assert {"softmax", "layer_norm", "gelu", "linear"} <= set(summary.ops_in)
    assert {"amax", "exp", "var_mean", "rsqrt", "erf", "addmm"} <= set(summary.ops_out)
    assert len(summary.ops_out) > len(summary.ops_in)
    assert "softmax" in summary.rewritten_ops
    assert any("scaled_dot_product" in op for op in summary.introduced)


def test_selection_of_a_kernel_finds_its_rows(rows: list[DecompRow]) -> None:
    gelu = row(rows, "gelu")
    kernel = next(k for k in gelu.kernels if "gelu" in k.name)
    hits = rows_for_refs(rows, frozenset({Ref.kernel("0/0", kernel.graph, kernel.name)}))
    assert rows.index(gelu) in hits
    assert rows_for_refs(rows, frozenset()) == []


def test_op_names() -> None:
    assert op_name("aten.amax.default") == "amax"
    assert op_name("prims.convert_element_type.default") == "prims.convert_element_type"
    assert op_name("torch._VariableFunctionsClass.softmax") == "softmax"
    assert op_name("torch.ops.compilescope.add_relu.default") == "compilescope.add_relu"

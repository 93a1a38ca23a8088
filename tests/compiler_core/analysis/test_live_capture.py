"""Import real torch 2.x CPU traces of the examples: graphs, kernels, saved tensors, breaks, links."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from compiler_core.queries.summary import summarize
from compiler_core.session import LinkIndex, Ref, RefKind

ROOT = Path(__file__).resolve().parents[3]
DRIVER = Path(__file__).with_name("live_trace_driver.py")


def _trace(tmp: Path, example: str, mode: str, *extra: str) -> Path:
    env = dict(os.environ, TORCH_TRACE=str(tmp), INDUCTOR_PROVENANCE="1",
               TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0",
               PYTHONPATH=str(ROOT))  # fmt: skip
    cmd = [sys.executable, str(DRIVER), str(ROOT / "resources/examples" / example), mode, *extra]
    subprocess.run(cmd, env=env, check=True, cwd=ROOT, capture_output=True, timeout=300)
    return tmp


@pytest.fixture(scope="module")
def transformer_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _trace(tmp_path_factory.mktemp("tb"), "transformer_block.py", "train")


@pytest.mark.slow
def test_transformer_train_step(transformer_trace: Path) -> None:
    session = import_trace(transformer_trace)
    (c,) = session.compiles
    assert c.dynamo_graph is not None and c.aot is not None
    assert c.aot.forward is not None and c.aot.backward is not None and c.aot.joint is not None
    assert [o.graph for o in c.inductor] == ["forward", "backward"]
    fw = c.inductor[0]
    cpp = [k for k in fw.kernels if k.language == "cpp"]
    assert cpp and all(k.fused_nodes for k in cpp)
    assert fw.post_grad is not None and set(cpp[0].fused_nodes) <= {n.name for n in fw.post_grad.nodes}
    saved = {st.name: st for st in c.aot.saved_tensors}
    assert "tangents_1" not in saved and saved["primals_3"].bytes == 4 * 16 * 64 * 4
    assert all(st.consumers for st in saved.values())
    s = summarize(session)
    assert (
        s["graphs"] == 1
        and s["aot_backward_graphs"] == 1
        and s["kernels"] == len([k for o in c.inductor for k in o.kernels if k.language == "cpp"])
    )
    # source line of the fc1/gelu statement reaches its kernels through Dynamo, AOT and post-grad
    src = next(k for k in session.sources if k.endswith("transformer_block.py"))
    related = LinkIndex(session.links).related(Ref.source_line(src, 41))
    kinds = {r.kind for r in related}
    assert {RefKind.DYNAMO_NODE, RefKind.AOT_NODE, RefKind.POST_GRAD_NODE, RefKind.KERNEL} <= kinds


@pytest.mark.slow
def test_graph_break_recorded(tmp_path: Path) -> None:
    session = import_trace(_trace(tmp_path, "mlp_graph_break.py", "infer"))
    s = summarize(session)
    assert s["graphs"] == 2 and s["graph_breaks"] == 1
    gb = session.compiles[0].graph_breaks[0]
    assert "Tensor.item()" in gb.reason
    assert gb.location is not None and gb.location.file.endswith("mlp_graph_break.py")
    assert gb.location.line == 19
    ref = Ref.graph_break(session.compiles[0].compile_id, 0)
    assert any(r.kind == RefKind.SOURCE_LINE for r in LinkIndex(session.links).direct(ref))


@pytest.mark.slow
def test_enriched_graph_matches_text(tmp_path: Path) -> None:
    """The `compilescope_graph` artifact and the logged text describe the same nodes and edges."""
    trace = _trace(tmp_path, "mlp_graph_break.py", "infer", "--enrich")
    from compiler_core.analysis.compile_builder import build_compile
    from compiler_core.analysis.compile_records import PAYLOAD_KINDS, RankRecords, route
    from compiler_core.trace import RecordReader, trace_files

    ((path, rank),) = trace_files(trace)
    rr = RankRecords(rank, path)
    for rec in RecordReader(path, PAYLOAD_KINDS):
        route(rr, rec)
    for acc in rr.compiles.values():
        assert "dynamo" in acc.enriched
        enriched = build_compile(acc).dynamo_graph
        acc.enriched.clear()
        parsed = build_compile(acc).dynamo_graph
        assert enriched is not None and parsed is not None
        assert [n.name for n in enriched.nodes] == [n.name for n in parsed.nodes]
        assert [set(n.inputs) for n in enriched.nodes] == [set(n.inputs) for n in parsed.nodes]
        assert any(n.attrs.get("seq_nr") is not None for n in enriched.nodes)


@pytest.mark.slow
def test_cpp_kernel_lines_trace_loads_ops_and_stores(transformer_trace: Path) -> None:
    """Live CPU capture: C++ kernel lines reach the inputs they load and the ops they compute."""
    (c,) = import_trace(transformer_trace).compiles
    fw = c.inductor[0]
    assert fw.post_grad is not None
    nodes = {n.name: n for n in fw.post_grad.nodes}
    norm = next(k for k in fw.kernels if k.language == "cpp" and "layer_norm" in k.name)
    lines = norm.source.split("\n")
    linked = {lines[int(i) - 1].strip(): v for i, v in norm.line_nodes.items()}
    assert all(n in nodes for v in linked.values() for n in v)
    loads = [v for text, v in linked.items() if "loadu(in_ptr0" in text]
    assert loads and all(nodes[v[0]].op == "placeholder" for v in loads)  # the block's input
    rsqrt = [v for text, v in linked.items() if ".rsqrt()" in text and text.startswith("auto")]
    assert rsqrt and all("rsqrt" in nodes[v[0]].target for v in rsqrt)
    stores = [v for text, v in linked.items() if ".store(" in text]
    assert stores and all(set(v) <= set(norm.fused_nodes) for v in stores)

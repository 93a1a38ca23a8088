"""Every CPU example captures for real through the worker, and the session says what torch did.

One capture per example, shared by the tests of this module (compiles take seconds each).
Cross-checks come from torch itself (`torch._dynamo.explain`) and from the session's own
invariants (byte sizes, fused nodes present in the post-grad graph, links reaching user lines).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from compiler_core.session import LinkIndex, Ref, RefKind, Session
from compiler_core.worker.client import WorkerClient
from compiler_core.worker.protocol import CaptureSpec
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.slow

CPU_EXAMPLES = ("mlp_graph_break", "transformer_block", "small_cnn", "dynamic_shapes")
Captures = dict[str, tuple[Session, WorkerClient]]
ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int64": 8, "int32": 4, "bool": 1}


@pytest.fixture(scope="module")
def captures(tmp_path_factory: pytest.TempPathFactory) -> Captures:
    out = tmp_path_factory.mktemp("captures")
    cache = tmp_path_factory.mktemp("capture-cache")
    result = {}
    for name in CPU_EXAMPLES:
        spec = CaptureSpec(model_path=str(EXAMPLES / f"{name}.py"), out_path=str(out / f"{name}.json"))
        client = WorkerClient(spec, timeout_s=300, cache_dir=cache)
        assert client.run().ok, (name, client.error, client.stderr_tail[-3000:])
        session = client.recover_session()
        assert session is not None
        result[name] = (session, client)
    return result


def test_mlp_graphs_and_break_match_dynamo_explain(captures: Captures) -> None:
    import torch

    from compiler_core.modelfile import load_model_file

    spec = load_model_file(EXAMPLES / "mlp_graph_break.py")
    torch._dynamo.reset()
    explained = torch._dynamo.explain(spec.model)(*spec.example_inputs())
    session, _ = captures["mlp_graph_break"]
    graphs = [c for c in session.compiles if c.dynamo_graph is not None and c.dynamo_graph.nodes]
    breaks = [b for c in session.compiles for b in c.graph_breaks]
    assert len(graphs) == explained.graph_count == 2
    assert len(breaks) == explained.graph_break_count == 1
    expected_line = explained.break_reasons[0].user_stack[-1].lineno
    assert breaks[0].location is not None and breaks[0].location.line == expected_line
    assert "item()" in (breaks[0].location.code or "")


def test_transformer_saved_tensors_have_true_byte_sizes(captures: Captures) -> None:
    session, _ = captures["transformer_block"]
    (compiled,) = session.compiles
    assert compiled.aot is not None and compiled.aot.saved_tensors
    tensors = [t for t in compiled.aot.saved_tensors if not t.is_symint]
    assert tensors
    for t in tensors:
        numel = 1
        for d in t.meta.shape:
            assert isinstance(d, int)
            numel *= d
        assert t.bytes == numel * ITEMSIZE[t.meta.dtype], t


def test_graph_stages_come_from_recorded_fx_metadata(captures: Captures) -> None:
    session, _ = captures["transformer_block"]
    (compiled,) = session.compiles
    assert compiled.dynamo_graph is not None and compiled.aot is not None
    assert {"attn/qkv", "ln1", "fc1"} <= {n.module_path for n in compiled.dynamo_graph.nodes}
    for graph in (compiled.aot.joint, compiled.aot.forward, compiled.aot.backward):
        assert graph is not None and graph.nodes
    assert compiled.aot.forward is not None
    forward_ops = [n for n in compiled.aot.forward.nodes if n.op == "call_function"]
    with_seq = [n for n in forward_ops if n.attrs.get("seq_nr")]
    assert len(with_seq) > len(forward_ops) // 2  # autograd's op order, which pairs fw with bw
    assert all(n.attrs.get("original_aten") for n in with_seq)
    assert any(n.source and n.source.file.endswith("transformer_block.py") for n in forward_ops)
    assert {io.graph for io in compiled.inductor} == {"forward", "backward"}


@pytest.mark.parametrize("name", CPU_EXAMPLES)
def test_every_kernels_fused_nodes_exist_in_post_grad_graph(
    captures: Captures, name: str
) -> None:
    session, _ = captures[name]
    kernels = 0
    for compiled in session.compiles:
        for out in compiled.inductor:
            assert out.post_grad is not None
            names = {n.name for n in out.post_grad.nodes}
            for kernel in out.kernels:
                kernels += 1
                assert kernel.fused_nodes, kernel.name
                assert set(kernel.fused_nodes) <= names, (kernel.name, set(kernel.fused_nodes) - names)
    assert kernels > 0


def test_kernels_link_back_to_lines_of_the_model_file(captures: Captures) -> None:
    session, client = captures["transformer_block"]
    model_path = client.spec.model_path
    source_lines = set(range(1, len(session.sources[model_path].splitlines()) + 1))
    index = LinkIndex(session.links)
    (compiled,) = session.compiles
    generated = [(out.graph, k) for out in compiled.inductor for k in out.kernels if k.language != "extern"]
    assert generated
    for graph, kernel in generated:
        ref = Ref.kernel(compiled.compile_id, graph, kernel.name)
        lines = [r for r in index.related(ref) if r.kind is RefKind.SOURCE_LINE]
        assert lines, kernel.name
        for line in lines:
            assert line.path == model_path and line.line in source_lines
        # and back: a source line reaches the kernel
        assert ref in index.related(lines[0])


def test_dynamic_shapes_recompile_with_reasons(captures: Captures) -> None:
    session, _ = captures["dynamic_shapes"]
    ids = [c.compile_id for c in session.compiles]
    assert ids[0] == "0/0" and "0/1" in ids
    recompiled = session.compile("0/1")
    assert recompiled is not None and recompiled.recompile_reasons
    assert any("size mismatch" in r for r in recompiled.recompile_reasons)


def test_capture_meta_sources_and_progress(captures: Captures) -> None:
    session, client = captures["transformer_block"]
    assert session.meta.origin == "capture" and session.meta.device == "cpu" and session.meta.train
    assert session.meta.torch_version and session.meta.mode == "default"
    assert client.spec.model_path in session.sources
    stages = [(e.stage, e.state) for e in client.received if e.kind == "stage"]
    for stage in ("load", "run", "dynamo", "aot", "inductor", "build", "save"):
        assert (stage, "finished") in stages, stage
    kinds = [e.kind for e in client.received]
    assert kinds[0] == "hello" and kinds[-2:] == ["session", "done"]


def test_trace_log_is_readable_by_tlparse(captures: Captures,
                                          tmp_path: Path) -> None:
    tlparse = shutil.which("tlparse") or str(Path(__import__("sys").executable).parent / "tlparse")
    if not Path(tlparse).exists():
        pytest.skip("tlparse CLI not installed")
    _, client = captures["transformer_block"]
    done = subprocess.run([tlparse, client.spec.resolved_trace_path, "-o", str(tmp_path / "tl"),
                           "--no-browser", "--strict"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert list((tmp_path / "tl").rglob("compilescope_graph_*.json"))

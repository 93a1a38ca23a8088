"""Kernel lines → post-grad nodes on a real Triton output code (tlparse's provenance test log)."""

from __future__ import annotations

from pathlib import Path

from compiler_core.analysis import import_trace
from compiler_core.session import LinkIndex, Ref


def _kernel_lines(shared_traces: Path, name: str) -> dict[str, tuple[str, ...]]:
    session = import_trace(shared_traces / "inputs" / "inductor_provenance_jit_cuda_log.txt")
    (out,) = session.compiles[0].inductor
    kernel = next(k for k in out.kernels if k.name == name)
    lines = kernel.source.split("\n")
    return {lines[int(n) - 1].strip().split(" = ")[0]: v for n, v in kernel.line_nodes.items()}


def test_triton_loads_ops_and_store(shared_traces: Path) -> None:
    by_lhs = _kernel_lines(shared_traces, "triton_poi_fused_addmm_relu_sigmoid_0")
    assert by_lhs["tmp0"] == ("mm_default_1",)  # in_out_ptr0 = buf1, reused buf0 written by mm
    assert by_lhs["tmp1"] == ("arg1_1",)  # in_ptr0 = arg1_1, a graph input
    assert by_lhs["tmp2"] == ("add_tensor_1",)  # tmp0 + tmp1
    assert by_lhs["tmp4"] == ("relu",)  # triton_helpers.maximum
    assert by_lhs["tmp5"] == ("sigmoid",)
    assert by_lhs["tl.store(in_out_ptr0 + (x2), tmp5, xmask)"] == ("sigmoid",)
    assert "tmp3" not in by_lhs  # a constant: no node claimed


def test_repeated_ops_are_assigned_in_graph_order(shared_traces: Path) -> None:
    by_lhs = _kernel_lines(shared_traces, "triton_poi_fused_addmm_gelu_2")
    assert [by_lhs[t] for t in ("tmp4", "tmp6", "tmp10")] == [("mul_1",), ("mul_2",), ("mul_3",)]
    assert by_lhs["tmp7"] == ("erf",) and by_lhs["tmp0"] == ("mm_default",)


def test_kernel_line_links_reach_the_node(shared_traces: Path) -> None:
    session = import_trace(shared_traces / "inputs" / "inductor_provenance_jit_cuda_log.txt")
    c = session.compiles[0]
    kernel = next(k for k in c.inductor[0].kernels if k.name == "triton_poi_fused_addmm_relu_sigmoid_0")
    line = next(n for n, v in kernel.line_nodes.items() if v == ("relu",))
    ref = Ref.kernel_line(c.compile_id, "inference", kernel.name, int(line), c.rank)
    assert Ref.post_grad_node(c.compile_id, "inference", "relu", c.rank) in LinkIndex(
        session.links
    ).related(ref)

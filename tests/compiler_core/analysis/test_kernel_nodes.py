"""Kernel → post-grad node links on the real H200 logs of bench/data, held to the output code's own
record (kernel_nodes.py): an extern call is the node of its op that its comment names, a
generated kernel implements its `# Graph fragment:` nodes (and, at later calls, their images with
the same ops), and each linear's decomposition row lists exactly its own matmul.

Before the fix the n-th `extern_kernels.mm` was taken for the n-th `mm` node (wrong in the Llama
backward, which runs its matmuls out of graph order) and forward comments' Dynamo names were
taken for post-grad nodes whenever they spelled one (`mul_100`, `add_5` of another layer).
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from compiler_core.analysis.kernel_fragment import fragments
from compiler_core.analysis.kernel_lines import aten_op
from compiler_core.session.model import InductorOutput
from tests.bench_logs import bench_session

_SOURCE = re.compile(r"Source Nodes: \[([^\]]*)\]")
_WEIGHT = re.compile(r"\b(primals_\d+)\b")


def _llama(graph: str) -> InductorOutput:
    c = bench_session("hf_llama_train").compiles[0]
    return next(o for o in c.inductor if o.graph == graph)


def test_backward_extern_matmuls_are_the_nodes_their_comments_name() -> None:
    out = _llama("backward")
    assert out.post_grad is not None
    ops = {n.name: aten_op(n.target) for n in out.post_grad.nodes}
    lines = out.output_code.split("\n")
    checked = out_of_order = 0
    for k in out.kernels:
        if not k.name.startswith("extern_kernels.mm:"):
            continue
        assert k.output_code_line is not None
        comment = _SOURCE.search(lines[k.output_code_line - 2])
        assert comment, k.name
        named = [n.strip() for n in comment.group(1).split(",")]
        # the comment's last mm node is the call's own (earlier ones belong to its group)
        own = [n for n in named if ops.get(n) == "mm"][-1]
        assert k.fused_nodes == (own,), k.name
        checked += 1
        out_of_order += own != f"mm_{224 + int(k.name.split(':')[1])}"
    assert checked > 400
    assert out_of_order > 0  # the n-th call is not always the n-th node: the rule matters here
    owners = Counter(n for k in out.kernels if k.language == "extern" for n in k.fused_nodes)
    assert max(owners.values()) == 1  # no node is two calls' own


def test_forward_extern_matmuls_read_their_nodes_weights() -> None:
    """The forward's comments hold Dynamo names only; the call must read the weight its node reads
    (`mm_3 = mm(view, permute_8)`, `permute_8 = permute(primals_8)`)."""
    out = _llama("forward")
    assert out.post_grad is not None
    inputs = {n.name: n.inputs for n in out.post_grad.nodes}
    checked = 0
    for k in out.kernels:
        weights = _WEIGHT.findall(k.source) if k.name.startswith("extern_kernels.mm:") else []
        if not weights:
            continue
        (node,) = k.fused_nodes
        reads = {w for a in inputs[node] for w in [a, *inputs.get(a, ())]}
        assert weights[-1] in reads, (k.name, node, weights)
        checked += 1
    assert checked > 200


def test_a_reused_forward_kernel_implements_every_layers_counterparts() -> None:
    """The forward's comments name Dynamo nodes only (`mul_100` is another layer's post-grad
    node): the SiLU-gate kernel's 32 calls are followed by data flow from the matmuls they read,
    giving each layer's 9 nodes with exactly the fragment's ops, and no Dynamo-spelled names."""
    out = _llama("forward")
    assert out.post_grad is not None
    ops = {n.name: aten_op(n.target) for n in out.post_grad.nodes}
    k = next(k for k in out.kernels if k.name == "triton_poi_fused__unsafe_view_mul_silu_8")
    frag = [n for n in fragments(out.output_code)[k.name].nodes if n in ops]
    assert len(frag) == 9
    per_op = Counter(ops[n] for n in frag)
    assert Counter(ops[n] for n in k.fused_nodes) == Counter({op: 32 * n for op, n in per_op.items()})
    # each layer's counterparts read that layer's gate and up matmuls: 64 distinct mm nodes
    inputs = {n.name: n.inputs for n in out.post_grad.nodes}
    read = {i for n in k.fused_nodes for i in inputs[n] if i not in k.fused_nodes}
    assert len({i for i in read if ops.get(i) == "mm"}) == 64


@pytest.mark.parametrize("name", ["hf_llama_train", "hf_gpt2_train", "hf_bert_train", "tv_resnet_breaks"])
def test_generated_kernels_implement_only_their_fragments_nodes(name: str) -> None:
    """Every fused node is a fragment node or, for a reused kernel, a node with a fragment node's
    op whose count per op does not exceed the fragment's times the kernel's calls."""
    checked = 0
    for c in bench_session(name).compiles:
        for out in c.inductor:
            if out.post_grad is None:
                continue
            ops = {n.name: aten_op(n.target) for n in out.post_grad.nodes}
            for kname, frag in fragments(out.output_code).items():
                k = next(k for k in out.kernels if k.name == kname)
                mine = [n for n in frag.nodes if n in ops]
                assert set(mine) <= set(k.fused_nodes), kname
                calls = max(1, len(re.findall(rf"\b{kname}(?:\.run)?\(", out.output_code)) - 1)
                allowed = Counter({op: n * calls for op, n in Counter(ops[n] for n in mine).items()})
                got = Counter(ops[n] for n in k.fused_nodes)
                assert not got - allowed, (kname, got - allowed)
                checked += 1
    assert checked > 10


def _linear_rows() -> tuple[list[tuple[str, list[str]]], set[str]]:
    """(Dynamo linear, the forward extern kernels its row lists) per `torch._C._nn.linear` row
    (Dynamo names a linear after its assignment: o_proj is `attn_output_3`), and all the
    forward's extern kernels."""
    c = bench_session("hf_llama_train").compiles[0]
    assert c.decomposition is not None and c.dynamo_graph is not None
    linear = {n.name for n in c.dynamo_graph.nodes if n.target == "torch._C._nn.linear"}
    fw = next(o for o in c.inductor if o.graph == "forward")
    externs = {k.name for k in fw.kernels if k.language == "extern"}
    rows = [(r.dynamo_node, [k for k in r.kernels if k in externs]) for r in c.decomposition.rows]
    assert sum(1 for name, _ in rows if name in linear) == 225  # 32 layers x 7 + lm_head
    return [(name, ks) for name, ks in rows if name in linear], externs


def test_no_linear_lists_another_ops_kernels() -> None:
    """The issue's over-link: one q_proj linear listed mm:2, mm:3, mm:4 and sdpa. Now each extern
    kernel is in exactly one row and no linear lists the attention kernel."""
    c = bench_session("hf_llama_train").compiles[0]
    assert c.decomposition is not None
    rows, externs = _linear_rows()
    owners = Counter(k for r in c.decomposition.rows for k in r.kernels if k in externs)
    assert max(owners.values()) == 1
    assert len(owners) >= len(externs) - 1  # the rotary embedding's mm_default: no Dynamo op
    assert not [ks for _, ks in rows if any("attention" in k for k in ks)]


def test_each_linear_lists_exactly_its_own_matmul() -> None:
    """An AOT node linked to several Dynamo ops of one line goes to the one that reads the same
    weight (AOTAutograd's primals are the Dynamo graph's inputs in order): k_proj's mm_1 went to
    `key_states` (the transpose after it, least by name), up_proj's mm_5 to `down_proj`."""
    rows, _ = _linear_rows()
    assert [name for name, ks in rows if len(ks) != 1] == []


def test_nodes_no_record_names_are_marked_inferred_and_the_rest_are_named_by_the_code() -> None:
    """A reused kernel's later launches compute other layers' counterparts that no comment of
    Inductor names (the forward's launch comments give Dynamo's names): those are `inferred_nodes`,
    told apart in the Kernel code pane; every other claim is named by the kernel's own fragment."""
    out = _llama("forward")
    k = next(k for k in out.kernels if k.name == "triton_poi_fused__unsafe_view_mul_silu_8")
    frag = set(fragments(out.output_code)[k.name].nodes)
    assert set(k.fused_nodes) - set(k.inferred_nodes) <= frag
    assert len(k.inferred_nodes) == 31 * 9  # every layer but the fragment's own
    from explorer.panes.kernel_code_pane import fused_text

    assert "279 inferred" in fused_text(k)
    for kernel in out.kernels:  # no claim outside both the code's names and the inferred ones
        if kernel.language != "extern" and kernel.name in fragments(out.output_code):
            named = set(fragments(out.output_code)[kernel.name].nodes)
            assert set(kernel.fused_nodes) - set(kernel.inferred_nodes) <= named, kernel.name


def test_a_node_two_kernels_name_is_told_as_recomputed() -> None:
    """Llama's inference graph (H200 log): the attention kernels' fragments name the same rotary
    and mask nodes, which Inductor inlines into each; each such node is in `recomputed_nodes` of
    every kernel that names it, and the pane says so."""
    session = bench_session("hf_llama_infer")
    out = next(o for c in session.compiles for o in c.inductor if o.kernels)
    named = {k.name: set(k.fused_nodes) - set(k.inferred_nodes)
             for k in out.kernels if k.language != "extern"}  # fmt: skip
    shared = {n for k, ns in named.items() for n in ns if sum(n in other for other in named.values()) > 1}
    assert shared
    for k in out.kernels:
        if k.language != "extern":
            assert set(k.recomputed_nodes) == named[k.name] & shared, k.name
    from explorer.panes.kernel_code_pane import fused_text

    kernel = next(k for k in out.kernels if k.recomputed_nodes)
    assert "also computed by other kernels" in fused_text(kernel)

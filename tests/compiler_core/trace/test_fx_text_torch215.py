"""torch 2.15 prints a backward node's location as `# Backward of forward node: File: ...`
(torch/fx/graph.py); older torch printed `# File: ...`. Both give the node its source line, which
pairs backward ops with their forward ops in logs without seq_nr (analysis/backward_links.py)."""

from __future__ import annotations

from compiler_core.trace.fx_text import parse_graph

# Verbatim from torch 2.15.0's aot_backward_graph of resources/examples/transformer_block.py.
BACKWARD_215 = "\n".join([
    "class GraphModule(torch.nn.Module):",
    "    def forward(",
    "        self,",
    '        primals_12: "f32[64, 256][256, 1]cpu",',
    '        tangents_1: "f32[4, 16, 64][1024, 64, 1]cpu",  # TangentAOTInput(output=PlainAOTOutput(idx=0))',
    "    ):",
    "        # Backward of forward node: File: /work/main/resources/examples/transformer_block.py:42 "
    "in forward, code: return x + self.fc2(h)",
    '        view_16: "f32[64, 64][64, 1]cpu" = torch.ops.aten.view.default(tangents_1, [64, 64])',
    '        permute_8: "f32[256, 64][1, 256]cpu" = torch.ops.aten.permute.default(primals_12, [1, 0]);  '
    "primals_12 = None",
    "        return (view_16, permute_8)",
    "",
])


def test_backward_of_forward_node_comment_gives_the_source_line() -> None:
    g = parse_graph(BACKWARD_215, "aot_backward")
    calls = [n for n in g.nodes if n.op == "call_function"]
    assert [n.name for n in calls] == ["view_16", "permute_8"]
    for n in calls:
        assert n.source is not None
        assert (n.source.file.endswith("transformer_block.py"), n.source.line, n.source.function) == \
            (True, 42, "forward")
        assert n.source.code == "return x + self.fc2(h)"

"""Module paths derived for imported logs, which print graphs without `nn_module_stack`.

Real logs from an H200 (bench/data): the 32-layer HF Llama training step (joint graph 8.8k nodes)
and torchvision ResNet-50 with graph breaks. Every stage must place ≥ 95 % of its call nodes.
"""

from __future__ import annotations

import pytest

from compiler_core.analysis.module_paths import call_node_coverage, param_module
from compiler_core.session import Graph, Session
from tests.bench_logs import bench_session


@pytest.fixture(scope="module")
def llama() -> Session:
    return bench_session("hf_llama_train")


def _stages(s: Session) -> list[tuple[str, Graph]]:
    c = max(s.compiles, key=lambda c: len(c.dynamo_graph.nodes) if c.dynamo_graph else 0)
    out = [("dynamo", c.dynamo_graph)]
    if c.aot is not None:
        out += [(k, getattr(c.aot, k)) for k in ("joint", "forward", "backward", "inference")]
    out += [(f"post_grad {o.graph}", o.post_grad) for o in c.inductor]
    return [(k, g) for k, g in out if g is not None]


def test_param_names_give_modules() -> None:
    name = "l_self_modules_model_modules_layers_modules_10_modules_self_attn_modules_q_proj_parameters_" \
        "weight_"
    assert param_module(name) == "model/layers/10/self_attn/q_proj"
    assert param_module("L_self_modules_bert_modules_encoder_modules_layer_modules_0_modules_attention_"
                        "modules_self_modules_query_parameters_bias_") == \
        "bert/encoder/layer/0/attention/self/query"  # fmt: skip
    assert param_module("l_x_") == ""


def test_every_stage_of_deep_llama_has_module_paths(llama: Session) -> None:
    stages = dict(_stages(llama))
    want = {"dynamo", "joint", "forward", "backward", "post_grad forward", "post_grad backward"}
    assert want <= set(stages)
    for kind, g in stages.items():
        assert call_node_coverage(g) >= 0.95, kind
        layers = {n.module_path.split("/")[2] for n in g.nodes if n.module_path.startswith("model/layers/")}
        assert layers == {str(i) for i in range(32)}, kind


def test_derived_paths_match_the_code(llama: Session) -> None:
    """Spot checks against what nn_module_stack would say, on layer 7 of each stage."""
    stages = dict(_stages(llama))
    dyn = stages["dynamo"]
    by_line = {}
    for n in dyn.nodes:
        if n.source is not None and n.module_path.startswith("model/layers/7/"):
            by_line.setdefault(n.source.code.strip(), set()).add(n.module_path)
    # the RMSNorm's variance (no parameter on that line) sits in the norm, found by its run of lines
    norm = {p for c, ps in by_line.items() if "variance" in c for p in ps}
    assert "model/layers/7/input_layernorm" in norm
    # the q projection reads a parameter; its view/transpose sit in the attention that called it
    q_line = next(ps for c, ps in by_line.items() if "self.q_proj(" in c)
    assert q_line == {"model/layers/7/self_attn/q_proj", "model/layers/7/self_attn"}
    # rotary helper functions (no module of their own) join the calling attention
    assert any(ps == {"model/layers/7/self_attn"} for c, ps in by_line.items() if "rotate_half" in c)
    # backward nodes inherit from the joint graph by name and land in the same layers
    bw = stages["backward"]
    joint = {n.name: n.module_path for n in stages["joint"].nodes}
    same = [n for n in bw.nodes if n.op == "call_function" and n.name in joint]
    assert same and all(n.module_path == joint[n.name] for n in same)


def test_resnet_stages_have_module_paths() -> None:
    s = bench_session("tv_resnet_breaks")
    for kind, g in _stages(s):
        assert call_node_coverage(g) >= 0.95, kind
        paths = {n.module_path for n in g.nodes}
        assert {"net/layer1/0", "net/layer4/2"} <= {"/".join(p.split("/")[:3]) for p in paths}, kind

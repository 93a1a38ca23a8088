"""A Dynamo graph input (the model's input `l_x_`, a lifted weight) links to the AOT input it
becomes (`primals_k` is the k-th Dynamo placeholder): clicking the conv1 weight in the Dynamo
pane lit nothing anywhere, though AOTAutograd saves that very tensor for the backward."""

from __future__ import annotations

from compiler_core.session import LinkIndex, Ref, RefKind
from tests.bench_logs import bench_session


def test_dynamo_placeholders_link_to_aot_primals_and_their_saved_tensor() -> None:
    session = bench_session("tv_resnet_breaks")
    links = LinkIndex(session.links)
    c = session.compiles[0]
    assert c.dynamo_graph is not None and c.aot is not None and c.aot.forward is not None
    dyn = [n.name for n in c.dynamo_graph.nodes if n.op == "placeholder"]
    fwd = [n.name for n in c.aot.forward.nodes if n.op == "placeholder"]
    weight = next(i for i, name in enumerate(dyn) if "conv1_parameters_weight" in name)
    assert fwd[weight] == f"primals_{weight + 1}"
    ref = Ref(RefKind.DYNAMO_NODE, c.compile_id, name=dyn[weight], rank=c.rank)
    related = links.related_all(frozenset({ref}))
    assert any(r.kind is RefKind.AOT_NODE and (r.graph, r.name) == ("forward", fwd[weight]) for r in related)
    assert any(r.kind is RefKind.SAVED_TENSOR and r.name == fwd[weight] for r in related)
    x = Ref(RefKind.DYNAMO_NODE, c.compile_id, name="l_x_", rank=c.rank)
    assert any(r.kind is RefKind.AOT_NODE for r in links.related_all(frozenset({x})))

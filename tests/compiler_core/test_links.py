"""Link closure walks away from the selected stage, never sideways through a shared line."""

from __future__ import annotations

from compiler_core.session import LinkBuilder, LinkIndex, Ref, RefKind, load
from tests.conftest import FIXTURES


def _r(kind: RefKind, key: str) -> Ref:
    """A ref from its storage key (`"m.py:3"`, `"forward:k1"`), as a session file holds it."""
    return Ref.decode(Ref.prefix(kind, "" if kind is RefKind.SOURCE_LINE else "0/0", None) + key)


def test_related_is_monotonic_along_the_pipeline() -> None:
    b = LinkBuilder()
    line = _r(RefKind.SOURCE_LINE, "m.py:3")
    n1, n2 = _r(RefKind.DYNAMO_NODE, "add"), _r(RefKind.DYNAMO_NODE, "mul")
    k1, k2 = _r(RefKind.KERNEL, "forward:k1"), _r(RefKind.KERNEL, "forward:k2")
    b.add_many(line, [n1, n2])
    b.add(n1, k1)
    b.add(n2, k2)
    index = LinkIndex(b.freeze())
    assert index.related(line) == {n1, n2, k1, k2}
    # from a kernel: up to its node and line, but not across to the other node's kernel
    assert index.related(k1) == {n1, line}
    assert index.direct(n1) == {line, k1}


def test_a_kernel_is_reached_but_not_walked_through() -> None:
    """A kernel line lights its own node and its kernel, not every node the kernel fuses; a
    post-grad node lights its own kernel lines, not all of its kernel's."""
    b = LinkBuilder()
    rsqrt, mul = _r(RefKind.POST_GRAD_NODE, "forward:rsqrt"), _r(RefKind.POST_GRAD_NODE, "forward:mul")
    k = _r(RefKind.KERNEL, "forward:k7")
    line_rsqrt, line_mul = _r(RefKind.KERNEL_LINE, "forward:k7:46"), _r(RefKind.KERNEL_LINE, "forward:k7:48")
    aot_rsqrt = _r(RefKind.AOT_NODE, "forward:rsqrt")
    b.add_many(k, [rsqrt, mul, line_rsqrt, line_mul])
    b.add(line_rsqrt, rsqrt)
    b.add(line_mul, mul)
    b.add(rsqrt, aot_rsqrt)
    index = LinkIndex(b.freeze())
    assert index.related(line_rsqrt) == {rsqrt, k, aot_rsqrt}
    assert index.related(rsqrt) == {k, line_rsqrt, aot_rsqrt}
    assert index.related(aot_rsqrt) == {rsqrt, k, line_rsqrt}
    # the kernel itself still reaches all it fuses and all its lines
    assert index.related(k) == {rsqrt, mul, line_rsqrt, line_mul, aot_rsqrt}


def test_one_way_walks_and_typed_queries() -> None:
    """`upstream`/`downstream` walk one direction and filter by kind; `direct` by kind answers
    the same before and after the integer index is built; `of_kind` lists one kind's refs."""
    b = LinkBuilder()
    line = _r(RefKind.SOURCE_LINE, "m.py:3")
    dyn = _r(RefKind.DYNAMO_NODE, "add")
    aot = _r(RefKind.AOT_NODE, "forward:add")
    post = _r(RefKind.POST_GRAD_NODE, "forward:add")
    k = _r(RefKind.KERNEL, "forward:k1")
    b.add(line, dyn)
    b.add(dyn, aot)
    b.add(aot, post)
    b.add(post, k)
    links = b.freeze()
    index = LinkIndex(links)
    assert index.direct(post, RefKind.KERNEL) == {k}  # read from the mapping: no index built yet
    assert index.direct(post, RefKind.SOURCE_LINE) == frozenset()
    assert index.of_kind(RefKind.SOURCE_LINE) == (line,)
    assert index.upstream(post, RefKind.SOURCE_LINE) == {line}
    assert index.upstream(post) == {line, dyn, aot}
    assert index.downstream(dyn) == {aot, post, k}
    assert index.downstream(dyn, RefKind.KERNEL) == {k}
    assert index.direct(post, RefKind.KERNEL) == {k}  # now through the integer index
    assert index.direct(post) == {aot, k}
    assert LinkIndex(links).direct(Ref.kernel("0/0", "forward", "nope")) == frozenset()


def test_names_linked_answers_as_direct_does_within_one_compile() -> None:
    """The builder's by-name hop gives the names `direct` gives, filtered to the same compile,
    rank and graph, on a real session's every post-grad node and AOT node; another rank's,
    compile's or graph's links stay out."""
    session = load(FIXTURES / "transformer_block.json")
    index = LinkIndex(session.links)
    asked = found = 0
    for c in session.compiles:
        cid, rank = c.compile_id, c.rank
        for o in c.inductor:
            kernels_of = index.names_linked(RefKind.POST_GRAD_NODE, RefKind.KERNEL, cid, rank,
                                            graph=o.graph, target_graph=o.graph)  # fmt: skip
            for n in o.post_grad.nodes if o.post_grad is not None else ():
                ref = Ref.post_grad_node(cid, o.graph, n.name, rank)
                oracle = {r.name for r in index.direct(ref, RefKind.KERNEL)
                          if r.compile_id == cid and r.rank == rank and r.graph == o.graph}  # fmt: skip
                assert set(kernels_of(n.name)) == oracle
                asked, found = asked + 1, found + bool(oracle)
        if c.aot is not None and c.aot.joint is not None:
            ops_of = index.names_linked(RefKind.AOT_NODE, RefKind.DYNAMO_NODE, cid, rank, graph="joint")
            for n in c.aot.joint.nodes:
                ref = Ref.aot_node(cid, "joint", n.name, rank)
                oracle = {r.name for r in index.direct(ref, RefKind.DYNAMO_NODE)
                          if r.compile_id == cid and r.rank == rank}  # fmt: skip
                assert set(ops_of(n.name)) == oracle
                asked, found = asked + 1, found + bool(oracle)
    assert asked > 100 and found > 50  # the fixture's links were really asked

    b = LinkBuilder()
    post = Ref.post_grad_node("0/0", "forward", "add", 0)
    b.add(post, Ref.kernel("0/0", "forward", "k1", 0))
    b.add(post, Ref.kernel("0/0", "forward", "k2", 1))  # another rank's
    b.add(post, Ref.kernel("0/1", "forward", "k3", 0))  # another compile's
    b.add(post, Ref.kernel("0/0", "backward", "k4", 0))  # another graph's
    b.add(post, Ref.kernel_line("0/0", "forward", "k1", 7, 0))  # another kind's
    lookup = LinkIndex(b.freeze()).names_linked(RefKind.POST_GRAD_NODE, RefKind.KERNEL, "0/0", 0,
                                                graph="forward", target_graph="forward")  # fmt: skip
    assert lookup("add") == ["k1"]
    assert lookup("mul") == []

"""Direct links between the stages of one compile (see session/links.py for how they expand).

Rules, most exact first:
- source line ↔ Dynamo node: the node's `# File:` location (or enriched stack).
- Dynamo node ↔ AOT node: enriched `from_node` chains when present; else provenance `preToPost`
  (its keys are Dynamo/pre-grad names, its values post-grad names, which equal AOT names); else
  the same occurrence of the same source line (`_aligned_runs`: the k-th call of a layer line in
  AOT is the k-th in Dynamo), narrowed to Dynamo nodes whose op name shares a word with the AOT op.
- AOT joint ↔ forward/backward node and AOT node ↔ post-grad node: same name in the partition.
- post-grad node ↔ kernel: `Kernel.fused_nodes`; kernel ↔ kernel line for every source line;
  kernel line ↔ post-grad node where `line_nodes` says so.
- saved tensor ↔ producer (forward) and consumers (backward); graph break ↔ its source line;
  guard ↔ source line when the guard text names a user file the session holds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from compiler_core.analysis.backward_links import link_backward
from compiler_core.session.links import LinkBuilder
from compiler_core.session.model import AotInfo, Compile, Graph, Node, SourceLoc
from compiler_core.session.refs import Ref, RefKind, graph_key, source_line

_WORD = re.compile(r"[a-z]+")
MakeRef = Callable[[RefKind, str], str]  # an encoded Ref (see Ref.prefix)


def link_compile(lb: LinkBuilder, c: Compile, pre_to_post: dict[str, list[str]],
                 user_files: set[str]) -> None:  # fmt: skip
    cid, rank = c.compile_id, c.rank
    prefixes = {kind: Ref.prefix(kind, cid, rank) for kind in RefKind}

    def ref(kind: RefKind, key: str) -> str:
        return prefixes[kind] + key

    def src_line(path: str, number: int) -> str:
        return source_line(path, number, rank).encode()

    dyn = c.dynamo_graph
    post_to_pre = _invert(pre_to_post)
    if dyn is not None:
        for n in dyn.nodes:
            if n.source is not None:
                lb.add_encoded(src_line(n.source.file, n.source.line), ref(RefKind.DYNAMO_NODE, n.name))
    if c.aot is not None:
        _link_aot(lb, c.aot, dyn, pre_to_post, ref)
        link_backward(lb, c.aot, prefixes)
    add = lb.add_encoded
    # Refs are prefix + key; the prefixes bound once (a deep compile makes very many refs here).
    aot_p, dyn_p = prefixes[RefKind.AOT_NODE], prefixes[RefKind.DYNAMO_NODE]
    post_p = prefixes[RefKind.POST_GRAD_NODE]
    kernel_p, line_p = prefixes[RefKind.KERNEL], prefixes[RefKind.KERNEL_LINE]
    for out in c.inductor:
        aot_graph = _aot_partition(c.aot, out.graph)
        aot_index = aot_graph.node_index if aot_graph is not None else {}
        if out.post_grad is not None:
            for n in out.post_grad.nodes:
                pg = post_p + graph_key(out.graph, n.name)
                if n.name in aot_index:
                    add(aot_p + graph_key(out.graph, n.name), pg)
                elif dyn is not None:
                    for d in [*_from_node_names(n), *post_to_pre.get(n.name, [])]:
                        if dyn.node(d) is not None:
                            add(dyn_p + d, pg)
        for k in out.kernels:
            kref = kernel_p + graph_key(out.graph, k.name)
            for fused in k.fused_nodes:
                add(post_p + graph_key(out.graph, fused), kref)
            line_head = f"{line_p}{out.graph}:{k.name}:"
            lines = k.source.count("\n") + 1 if k.source else 0
            lb.add_star(kref, [f"{line_head}{i}" for i in range(1, lines + 1)])
            for line, nodes in k.line_nodes.items():
                lref = line_head + line
                for name in nodes:
                    add(lref, post_p + graph_key(out.graph, name))
    for i, gb in enumerate(c.graph_breaks):
        if gb.location is not None:
            lb.add_encoded(ref(RefKind.GRAPH_BREAK, str(i)), src_line(gb.location.file, gb.location.line))
    for i, g in enumerate(c.guards):
        path = _user_path(g.source, user_files)
        if path is not None and g.source is not None:
            lb.add_encoded(ref(RefKind.GUARD, str(i)), src_line(path, g.source.line))


def _invert(pre_to_post: dict[str, list[str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for pre, posts in pre_to_post.items():
        for p in posts:
            out.setdefault(p, []).append(pre)
    return out


def _aot_partition(aot: AotInfo | None, name: str) -> Graph | None:
    if aot is None:
        return None
    return {"forward": aot.forward, "backward": aot.backward, "inference": aot.inference}.get(name)


def _link_aot(lb: LinkBuilder, aot: AotInfo, dyn: Graph | None, pre_to_post: dict[str, list[str]],
              mk: MakeRef) -> None:  # fmt: skip
    post_to_pre = _invert(pre_to_post)
    by_line = _aligned_runs(aot, dyn) if dyn is not None else {}
    add = lb.add_encoded
    aot_prefix, dyn_prefix = mk(RefKind.AOT_NODE, ""), mk(RefKind.DYNAMO_NODE, "")  # ~50k refs each
    words: dict[str, set[str]] = {}  # op target -> its words, once per distinct target
    # (run, op target) -> the run's nodes of that op: the nodes of one run share one candidate
    # list (`_aligned_runs`), as a joint node shares its partition twin's, so most repeat
    narrowed: dict[tuple[int, str], list[str]] = {}
    partitions = [(other, og.node_index) for other, og in (("forward", aot.forward),
                  ("backward", aot.backward)) if og is not None]  # fmt: skip
    inputs = [d.name for d in dyn.nodes if d.op == "placeholder"] if dyn is not None else []
    for gname, g in (("joint", aot.joint), ("forward", aot.forward), ("backward", aot.backward),
                     ("inference", aot.inference)):  # fmt: skip
        if g is None:
            continue
        for n in g.nodes:
            a = aot_prefix + graph_key(gname, n.name)
            if gname == "joint":
                for other, index in partitions:
                    if n.name in index:
                        add(a, aot_prefix + graph_key(other, n.name))
            if n.op == "placeholder" and gname != "backward":
                k = _aot_input_index(n)  # the k-th Dynamo input: the model's input, a weight
                if k is not None and 0 <= k < len(inputs):
                    add(dyn_prefix + inputs[k], a)
            if dyn is None or n.op in ("placeholder", "output"):
                continue
            for d in _dynamo_matches(n, dyn, post_to_pre, by_line.get((gname, n.name), ()), words, narrowed):
                add(dyn_prefix + d, a)
    for st in aot.saved_tensors:
        s = mk(RefKind.SAVED_TENSOR, st.name)
        if st.producer:
            lb.add_encoded(s, mk(RefKind.AOT_NODE, graph_key("forward", st.producer)))
        for cons in st.consumers:
            lb.add_encoded(s, mk(RefKind.AOT_NODE, graph_key("backward", cons)))


_AOT_IDX = re.compile(r"PlainAOTInput\(idx=(\d+)\)")
_INPUT_NAME = re.compile(r"^(?:primals_(\d+)|arg(\d+)_1)$")


def _aot_input_index(n: Node) -> int | None:
    """Which Dynamo placeholder an AOT input is: `PlainAOTInput(idx=k)` where the log says so,
    else by name (`primals_k` is input k-1, `argK_1` input K), as module_paths.py reads them."""
    m = _AOT_IDX.search(n.attrs.get("aot_input", ""))
    if m:
        return int(m.group(1))
    m = _INPUT_NAME.match(n.name)
    if m is None:
        return None
    return int(m.group(1)) - 1 if m.group(1) is not None else int(m.group(2))


def _from_node_names(n: Node) -> list[str]:
    chain = n.attrs.get("from_node", "")
    if not chain:
        return []
    return [p.strip() for p in re.split(r"[,\s>]+", chain) if p.strip()]


def _dynamo_matches(n: Node, dyn: Graph, post_to_pre: dict[str, list[str]],
                    cands: Sequence[Node], words: dict[str, set[str]] | None = None,
                    narrowed: dict[tuple[int, str], list[str]] | None = None) -> list[str]:  # fmt: skip
    """Dynamo nodes for AOT node `n`: exact provenance first, else the nodes of the one occurrence
    of `n`'s source line that `_aligned_runs` paired it with, narrowed by op name. `words` caches
    each target's words across calls (a deep graph has a few hundred distinct targets);
    `narrowed` caches the narrowing per candidate list (by identity: the caller keeps the lists
    alive) and op target. Callers only read the returned list."""
    if "from_node" in n.attrs:
        exact = [d for d in _from_node_names(n) if dyn.node(d) is not None]
        if exact:
            return exact
    if n.name in post_to_pre:
        via = [d for d in post_to_pre[n.name] if dyn.node(d) is not None]
        if via:
            return via
    if len(cands) <= 1:
        return [d.name for d in cands]
    key = (id(cands), n.target)
    if narrowed is not None:
        found = narrowed.get(key)
        if found is not None:
            return found
    cache: dict[str, set[str]] = {} if words is None else words
    own = _aot_words(n.target, cache)
    names = [d.name for d in cands if own & _dyn_words(d.target, cache)] or [d.name for d in cands]
    if narrowed is not None:
        narrowed[key] = names
    return names


def _aot_words(target: str, cache: dict[str, set[str]]) -> set[str]:
    """`torch.ops.aten.add.Tensor` -> {add}: the words of the op name (the part before the overload)."""
    key = "a:" + target
    found = cache.get(key)
    if found is None:
        found = cache[key] = set(_WORD.findall(target.rsplit(".", 2)[-2] if "." in target else target))
    return found


def _dyn_words(target: str, cache: dict[str, set[str]]) -> set[str]:
    """`torch.nn.functional.linear` -> {linear}: the words of the last dotted part."""
    key = "d:" + target
    found = cache.get(key)
    if found is None:
        found = cache[key] = set(_WORD.findall(target.rsplit(".", 1)[-1]))
    return found


LineKey = tuple[str, int]


def _line_runs(nodes: Iterable[Node]) -> dict[LineKey, list[list[Node]]]:
    """Per source line, its occurrences: maximal stretches of consecutive nodes on that line.

    A 32-layer model runs each line of its layer class 32 times; every run is one call. Without
    this split an AOT node on a layer line linked to that line's nodes in all 32 layers (1.5
    million links for one Llama compile, and a click highlighted every layer)."""
    runs: dict[LineKey, list[list[Node]]] = {}
    prev: LineKey | None = None
    for n in nodes:
        if n.source is None or n.op in ("placeholder", "output", "get_attr"):
            prev = None
            continue
        key = (n.source.file, n.source.line)
        if key == prev:
            runs[key][-1].append(n)
        else:
            runs.setdefault(key, []).append([n])
        prev = key
    return runs


def _aligned_runs(aot: AotInfo, dyn: Graph) -> dict[tuple[str, str], list[Node]]:
    """(AOT graph, node name) -> the Dynamo nodes of the same line *occurrence*.

    Execution order is kept by tracing: the k-th run of a line in the forward graph is the k-th
    run of that line in the Dynamo graph; the backward runs it in reverse. When the counts differ
    (decompositions split or merge runs) the run is mapped proportionally, which still lands in
    the right layer of a deep stack. Joint nodes take their partition twin's match."""
    dyn_runs = _line_runs(dyn.nodes)
    out: dict[tuple[str, str], list[Node]] = {}

    def align(gname: str, nodes: Iterable[Node], reverse: bool) -> None:
        for key, runs in _line_runs(nodes).items():
            druns = dyn_runs.get(key)
            if not druns:
                continue
            n_aot, n_dyn = len(runs), len(druns)
            for k, run in enumerate(runs):
                j = k if n_aot == n_dyn else min(n_dyn - 1, (2 * k + 1) * n_dyn // (2 * n_aot))
                target = druns[n_dyn - 1 - j] if reverse else druns[j]
                for node in run:
                    out[(gname, node.name)] = target

    for gname, g, reverse in (("forward", aot.forward, False), ("backward", aot.backward, True),
                              ("inference", aot.inference, False)):  # fmt: skip
        if g is not None:
            align(gname, g.nodes, reverse)
    if aot.joint is not None:
        rest: list[Node] = []
        for n in aot.joint.nodes:
            twin = out.get(("forward", n.name)) or out.get(("backward", n.name))
            if twin is not None:
                out[("joint", n.name)] = twin
            else:
                rest.append(n)
        align("joint", rest, False)
    return out


def _user_path(loc: SourceLoc | None, user_files: set[str]) -> str | None:
    if loc is None:
        return None
    if loc.file in user_files:
        return loc.file
    for f in user_files:
        if f.endswith("/" + loc.file):
            return f
    return None

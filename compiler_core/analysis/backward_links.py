"""Forward op ↔ backward ops, and what the partitioner recomputed: computed once, stored as links.

AOTAutograd traces the joint graph with autograd's sequence number on every node: a forward op
and the backward ops autograd derived from it carry the same `seq_nr`, and the partitioner tags
every node `is_forward`/`is_backward` (`partitioner_tag`). Live capture records both in node
metadata (capture/graph_records.py, torch 2.11 and 2.13 alike). A forward op that reappears in
the backward graph under its forward name was *recomputed* there rather than saved
(`recomputed_nodes` says why that is the partitioner's own count).

How partners are found, most exact first (`AotInfo.backward_via` names the rule per node):

- `seq_nr`: backward nodes (not recomputed) with the forward node's `seq_nr`.
- `original_aten`: nodes that lost their `seq_nr` (Inductor's joint-graph pattern rewrites, e.g.
  the SDPA fusion, make fresh nodes) pair with backward nodes that also lack one and whose
  `original_aten` is the same op or its `_backward` (`_scaled_dot_product_flash_attention` ↔
  `_scaled_dot_product_flash_attention_backward`). Several such nodes of one op pair all-to-all.
- `via_user`: a floating-point forward node whose own backward was folded away (a weight's
  `t()`, whose transpose Inductor's joint passes merged into the matmul's backward; a residual
  `add` whose gradient is the identity) inherits the partners of its nearest forward users: the
  backward ops that compute its gradient.
- `source_line`: torch's own trace logs print graphs as text without `seq_nr` or tags. Backward
  nodes keep the forward op's stack trace, so a forward node pairs with the backward nodes of the
  same source line: each run of the line in the forward (one per layer) with the run(s) of the
  same layer in the backward, which replays layers in reverse (`_by_source_line`); coarser than
  `seq_nr`, as every op of one run pairs with every op of the matching run.

Bytes avoided by recomputing: the recomputed values that non-recomputed backward nodes read,
i.e. what the forward would otherwise have had to save.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from compiler_core.analysis.saved_tensors import tensor_bytes
from compiler_core.session.links import LinkBuilder
from compiler_core.session.model import AotInfo, Graph, Node
from compiler_core.session.refs import RefKind, graph_key

_FLOAT = ("float", "bfloat16", "complex")
_INHERIT_DEPTH = 6


@dataclass
class BackwardInfo:
    backward_of: dict[str, tuple[str, ...]] = field(default_factory=dict)
    via: dict[str, str] = field(default_factory=dict)
    recomputed: tuple[str, ...] = ()
    recomputed_bytes: int = 0


def _calls(g: Graph | None) -> list[Node]:
    return [n for n in g.nodes if n.op.startswith("call_")] if g is not None else []


def _is_float(n: Node) -> bool:
    return any(m.dtype.startswith(_FLOAT) for m in n.outputs)


def _aten_key(n: Node) -> str:
    """`aten._scaled_dot_product_flash_attention_backward.default` → `_scaled_dot_product_flash_attention`."""
    parts = n.attrs.get("original_aten", "").replace("torch.ops.", "").split(".")
    op = parts[1] if len(parts) >= 2 and parts[0] in ("aten", "prims") else ""
    return op.removesuffix("_backward")


def recomputed_nodes(fw: Graph | None, bw: Graph | None) -> tuple[str, ...]:
    """Backward call nodes the partitioner recomputed: those whose name is also a call node of
    the forward graph, in backward order.

    This is the partitioner's own definition, not an approximation of it: with
    `AOT_PARTITIONER_DEBUG=1`, `min_cut_rematerialization_partition` logs `# remat/fw/bw: R/F/B`
    with R = the call_function names its forward module and its backward module share (both are
    extracted from the joint graph by `_extract_graph_with_inputs_outputs`, which copies a node
    under its joint name, so a forward op computed again in the backward keeps its name). It
    needs no metadata, so a live capture and a torch trace log (graphs as text, no tags) count
    alike. The `is_forward` partitioner tag is no substitute: every forward node of the joint
    carries it, so a backward node with it may be a forward op the forward never computed (moved,
    not recomputed). Views and casts count: the partitioner recomputes them rather than save
    them (`recompute_views`), e.g. 390 of the 797 in the 32-layer Llama training step are
    `permute`/`view`. The test `tests/compiler_core/analysis/test_recomputed_nodes.py` compares this
    count with the partitioner's log line on real CPU compiles.
    """
    fw_names = {n.name for n in _calls(fw)}
    return tuple(n.name for n in _calls(bw) if n.name in fw_names)


def backward_info(fw: Graph | None, bw: Graph | None) -> BackwardInfo:
    """Partners of every forward call node, recomputed nodes and the bytes they avoid saving."""
    info = BackwardInfo()
    if fw is None or bw is None:
        return info
    recomputed = recomputed_nodes(fw, bw)
    info.recomputed = recomputed
    rec = set(recomputed)
    others = [n for n in _calls(bw) if n.name not in rec]
    bw_nodes = {n.name: n for n in bw.nodes}
    avoided = {i for n in others for i in n.inputs if i in rec}
    # backward ops proper, the partner candidates: not a forward op the partitioner moved to the
    # backward without the forward computing it (tagged `is_forward` where tags were recorded)
    real = [n for n in others if n.attrs.get("partitioner_tag") != "is_forward"]
    info.recomputed_bytes = sum(sum(tensor_bytes(m) for m in bw_nodes[r].outputs) for r in avoided)
    fw_calls = _calls(fw)
    # seq_nr only pairs where both graphs carry it: a capture can hold its own record of the
    # forward (with seq_nr) beside torch's text of the backward (without)
    if any("seq_nr" in n.attrs for n in fw_calls) and any("seq_nr" in n.attrs for n in real):
        _by_seq_nr(fw_calls, real, info)
    else:
        _by_source_line(fw_calls, real, info)
    _inherit_from_users(fw, info)
    return info


def _by_seq_nr(fw_calls: list[Node], real: list[Node], info: BackwardInfo) -> None:
    by_seq: dict[str, list[str]] = {}
    by_op: dict[str, list[str]] = {}
    for n in real:
        seq = n.attrs.get("seq_nr")
        if seq is not None:
            by_seq.setdefault(seq, []).append(n.name)
        elif _aten_key(n):
            by_op.setdefault(_aten_key(n), []).append(n.name)
    for n in fw_calls:
        seq = n.attrs.get("seq_nr")
        if seq is not None and seq in by_seq:
            info.backward_of[n.name] = tuple(by_seq[seq])
            info.via[n.name] = "seq_nr"
        elif seq is None and by_op.get(_aten_key(n)):
            info.backward_of[n.name] = tuple(by_op[_aten_key(n)])
            info.via[n.name] = "original_aten"


def _by_source_line(fw_calls: list[Node], real: list[Node], info: BackwardInfo) -> None:
    """Pair statement blocks of one source line: a model that repeats a line (one per layer)
    runs its backward blocks in reverse layer order, so with `nf` forward blocks and `r * nf`
    backward blocks, backward block j belongs to forward block `nf - 1 - j // r`. Other counts
    (a decomposition that splits or merges a block) pair in proportion, each backward block with
    one forward block, as `linking._aligned_runs` does for Dynamo: pairing every block with every
    other made a 24-layer BERT line's forward ops partners of all 24 layers' backward ops
    (540k links, a session four times its log)."""
    fw_blocks, bw_blocks = _blocks(fw_calls), _blocks(real)
    for line, fbs in fw_blocks.items():
        bbs = bw_blocks.get(line, [])
        if not bbs:
            continue
        nf, nb = len(fbs), len(bbs)
        for i, fb in enumerate(fbs):
            mine = tuple(b.name for j in _partner_blocks(i, nf, nb) for b in bbs[j])
            for n in fb:
                if _is_float(n):
                    info.backward_of[n.name] = mine
                    info.via[n.name] = "source_line"


def _partner_blocks(i: int, nf: int, nb: int) -> range:
    """Backward blocks of forward block `i` of `nf`, with `nb` backward blocks in reverse order:
    backward block j belongs to forward block `nf - 1 - floor(j * nf / nb)` (r blocks each when
    nb = r * nf). With fewer backward blocks than forward ones, each forward block takes the one
    backward block at its proportional place, so none is left without partners."""
    k = nf - 1 - i
    if nb >= nf:
        return range(-(-k * nb // nf), -(-(k + 1) * nb // nf))
    j = k * nb // nf
    return range(j, j + 1)


def _blocks(nodes: list[Node]) -> dict[tuple[str, int], list[list[Node]]]:
    """Runs of consecutive nodes from one source line, per line, in graph order."""
    out: dict[tuple[str, int], list[list[Node]]] = {}
    last: tuple[str, int] | None = None
    for n in nodes:
        if n.source is None:
            last = None
            continue
        key = (n.source.file, n.source.line)
        if key != last:
            out.setdefault(key, []).append([])
        out[key][-1].append(n)
        last = key
    return out


def _inherit_from_users(fw: Graph, info: BackwardInfo) -> None:
    """Floating-point forward nodes without partners take their nearest users' (BFS, bounded)."""
    users: dict[str, list[str]] = {}
    for n in fw.nodes:
        for i in n.inputs:
            users.setdefault(i, []).append(n.name)
    direct = dict(info.backward_of)
    for n in _calls(fw):
        if n.name in direct or not _is_float(n):
            continue
        found: list[str] = []
        seen = {n.name}
        queue = deque([(u, 1) for u in users.get(n.name, [])])
        depth_found = None
        while queue:
            name, depth = queue.popleft()
            if name in seen or (depth_found is not None and depth > depth_found) or depth > _INHERIT_DEPTH:
                continue
            seen.add(name)
            if name in direct:
                found.extend(direct[name])
                depth_found = depth
                continue
            queue.extend((u, depth + 1) for u in users.get(name, []))
        if found:
            info.backward_of[n.name] = tuple(dict.fromkeys(found))
            info.via[n.name] = "via_user"


def link_backward(lb: LinkBuilder, aot: AotInfo, prefix: dict[RefKind, str]) -> None:
    """Forward node ↔ its backward partners, recomputed backward node ↔ the forward node it
    copies, forward node ↔ saved tensors its partners read. `prefix` is `Ref.prefix` per kind."""
    aot_p, saved_p = prefix[RefKind.AOT_NODE], prefix[RefKind.SAVED_TENSOR]
    fw_names = {n.name for n in aot.forward.nodes} if aot.forward is not None else set()
    readers: dict[str, list[str]] = {}
    for st in aot.saved_tensors:
        for cons in st.consumers:
            readers.setdefault(cons, []).append(st.name)
    add = lb.add_encoded
    bw_refs: dict[str, str] = {}  # a backward op is a partner of many forward ops: one string each
    for fw_name, partners in aot.backward_of.items():
        f = aot_p + graph_key("forward", fw_name)
        linked: list[str] = []  # added in one call: a forward op has ~7 partners, 18k links in all
        for b in partners:
            ref = bw_refs.get(b)
            if ref is None:
                ref = bw_refs[b] = aot_p + graph_key("backward", b)
            linked.append(ref)
            for saved_name in readers.get(b, ()):
                linked.append(saved_p + saved_name)
        lb.add_star(f, linked)
    for name in aot.recomputed:
        if name in fw_names:
            add(aot_p + graph_key("backward", name), aot_p + graph_key("forward", name))

"""Module paths (`Node.module_path`, `model/layers/3/self_attn`) for every graph of a compile.

Trace logs print graphs as text, and the text has no `nn_module_stack`; live capture records it
for Dynamo graphs only. Yet grouping by module is what makes a 9k-node graph readable, so the
builder derives a path for every node, once, in this order of trust:

1. Recorded: a `module_path` the graph already carries (captures: innermost `nn_module_stack`).
2. Inherited by name: AOT forward/backward nodes from the joint graph, post-grad nodes from their
   AOT partition, pre-grad nodes from the Dynamo graph (the stages keep FX names).
3. Parameters: Dynamo lifts `self.model.layers[10].q_proj.weight` into a placeholder named
   `l_self_modules_model_modules_layers_modules_10_modules_q_proj_parameters_weight_`; AOT's
   `primals_k` (`PlainAOTInput(idx=k-1)`) and `argK_1` are the Dynamo placeholders in order.
   A node that reads a parameter (directly or through views of it) is in the parameter's module.
4. Source lines: the `# File: f.py:254 in forward, code: q = self.q_proj(x)` comment gives each
   node's innermost user line. A parameter reader's line belongs to its module, or to the parent
   when the line calls the module (`self.q_proj(`). Other nodes on that line take the nearest
   such owner in graph order (the line runs once per layer). AOT and post-grad nodes whose line
   has no parameter reader take the Dynamo modules seen on that line; when several (one per
   layer), the one sharing most with the surrounding nodes' paths.
5. Data flow / execution order: what is left sits between two placed nodes; it joins the next
   (or previous) one when it is in the same function with monotone lines up to it (the lines of
   an RMSNorm before its weight multiply), else their deepest common module.

Nearly every call node of every stage gets a path (tests/compiler_core/analysis/test_module_paths.py
checks the share on real logs), at a small part of the whole import's time (bench/readable_graphs.py).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
import re
from collections.abc import Sequence
from dataclasses import replace

from compiler_core.session.model import AotInfo, Compile, Graph, InductorOutput, Node
from compiler_core.session.vocab import GraphKind

_CALL_OPS = ("call_function", "call_method", "call_module")
_PARAM_SPLIT = re.compile(r"_(?:parameters|buffers)_")
_AOT_IDX = re.compile(r"AOTInput\(idx=(\d+)\)")
_AOT_TARGET = re.compile(r"AOTInput\(target='([^']+)'\)")
_PRIMALS = re.compile(r"^primals_(\d+)$")
_ARG = re.compile(r"^arg(\d+)_1$")
# Ops that only re-view or re-type a tensor: a view of a parameter still "is" the parameter.
_VIEWISH = frozenset(
    ["t", "permute", "transpose", "view", "reshape", "expand", "unsqueeze", "squeeze", "_to_copy", "to",
     "float", "convert_element_type", "_unsafe_view", "alias", "contiguous", "clone", "detach", "getitem",
     "type_as"]
)  # fmt: skip


def graphs_of(c: Compile) -> tuple[Graph | None, ...]:
    """Every graph of a compile in a fixed order (the key `with_module_paths` can be memoised on:
    the builder shares parsed graphs between compiles that logged the same text)."""
    aot = c.aot
    parts = (aot.joint, aot.forward, aot.backward, aot.inference) if aot is not None else (None,) * 4
    return (c.dynamo_graph, *parts, *(g for o in c.inductor for g in (o.post_grad, o.pre_grad)))


def with_graphs(c: Compile, graphs: tuple[Graph | None, ...]) -> Compile:
    """`c` with its graphs replaced, in `graphs_of` order."""
    aot = c.aot
    if aot is not None:
        aot = replace(aot, joint=graphs[1], forward=graphs[2], backward=graphs[3], inference=graphs[4])
    outs = tuple(replace(o, post_grad=graphs[5 + 2 * i], pre_grad=graphs[6 + 2 * i])
                 for i, o in enumerate(c.inductor))  # fmt: skip
    return replace(c, dynamo_graph=graphs[0], aot=aot, inductor=outs)


def with_module_paths(c: Compile) -> Compile:
    """`c` with a module path on every node it can place (see the module docstring)."""
    dyn = _derive(c.dynamo_graph, {}, None, None) if c.dynamo_graph is not None else None
    dyn_loc = _paths_by_line(dyn) if dyn is not None else {}
    dyn_params = _placeholder_paths(dyn) if dyn is not None else []
    aot = _aot(c.aot, dyn_loc, dyn_params) if c.aot is not None else None
    parts = {"forward": aot.forward, "backward": aot.backward, "inference": aot.inference} if aot else {}
    inductor = tuple(_inductor(out, parts.get(out.graph), dyn, dyn_loc, dyn_params) for out in c.inductor)
    return replace(c, dynamo_graph=dyn, aot=aot, inductor=inductor)


def call_node_coverage(g: Graph) -> float:
    """Share of call nodes with a module path (1.0 for a graph without calls)."""
    calls = [n for n in g.nodes if n.op in _CALL_OPS]
    return sum(1 for n in calls if n.module_path) / len(calls) if calls else 1.0


def param_module(placeholder: str) -> str:
    """`l_self_modules_model_modules_layers_modules_0_modules_mlp_..._parameters_weight_` →
    `model/layers/0/mlp` (`l_fn_modules_0_...` → `0`); "" for a name that is not a lifted
    parameter or buffer."""
    name = placeholder.lstrip("lL_")
    if name.startswith("fn_modules_"):  # torch's wrapper frame (`L['fn']`): an nn.Sequential
        name = "self" + name[len("fn") :]
    if not name.startswith("self_modules_") or not _PARAM_SPLIT.search(name):
        return ""
    head = _PARAM_SPLIT.split(name)[0] if name.count("_parameters_") + name.count("_buffers_") == 1 \
        else name[: [m.start() for m in _PARAM_SPLIT.finditer(name)][-1]]  # fmt: skip
    parts = head[len("self") :].split("_modules_")
    return "/".join(p for p in parts if p)


def param_short_name(placeholder: str) -> str:
    """`..._modules_bn1_buffers_running_mean_` → `running_mean`; "" when not a lifted parameter."""
    if not param_module(placeholder):
        return ""
    return _PARAM_SPLIT.split(placeholder)[-1].strip("_")


def _aot(aot: AotInfo, dyn_loc: dict[tuple[str, int], list[tuple[int, str]]],
         dyn_params: list[str]) -> AotInfo:  # fmt: skip
    joint = _derive(aot.joint, {}, dyn_loc, dyn_params) if aot.joint is not None else None
    seeds = _by_name(joint)
    fw = _derive(aot.forward, seeds, dyn_loc, dyn_params) if aot.forward is not None else None
    bw_seeds = {**seeds, **_by_name(fw)}
    bw = _derive(aot.backward, bw_seeds, dyn_loc, dyn_params) if aot.backward is not None else None
    inf = _derive(aot.inference, {}, dyn_loc, dyn_params) if aot.inference is not None else None
    return replace(aot, joint=joint, forward=fw, backward=bw, inference=inf)


def _inductor(out: InductorOutput, aot_graph: Graph | None, dyn: Graph | None,
              dyn_loc: dict[tuple[str, int], list[tuple[int, str]]],
              dyn_params: list[str]) -> InductorOutput:  # fmt: skip
    post = out.post_grad
    if post is not None:
        post = _derive(post, _by_name(aot_graph), dyn_loc, dyn_params)
    pre = out.pre_grad
    if pre is not None:
        pre = _derive(pre, _by_name(dyn), dyn_loc, None)
    return replace(out, post_grad=post, pre_grad=pre)


def _by_name(g: Graph | None) -> dict[str, str]:
    return {n.name: n.module_path for n in g.nodes if n.module_path} if g is not None else {}


def _placeholder_paths(g: Graph) -> list[str]:
    return [n.module_path for n in g.nodes if n.op == "placeholder"]


def _paths_by_line(g: Graph) -> dict[tuple[str, int], list[tuple[int, str]]]:
    """(file, line) -> [(node index, path)] of the call nodes placed on that line."""
    out: dict[tuple[str, int], list[tuple[int, str]]] = {}
    for i, n in enumerate(g.nodes):
        if n.source is not None and n.module_path and n.op in _CALL_OPS:
            out.setdefault((n.source.file, n.source.line), []).append((i, n.module_path))
    return out


@functools.lru_cache(maxsize=1 << 16)
def _lca(a: str, b: str) -> str:
    pa, pb = a.split("/"), b.split("/")
    k = 0
    while k < min(len(pa), len(pb)) and pa[k] == pb[k]:
        k += 1
    return "/".join(pa[:k])


@functools.lru_cache(maxsize=1 << 16)
def _shared(a: str, b: str) -> int:
    return len([p for p in _lca(a, b).split("/") if p]) if a and b else 0


def _line_owner(node: Node, path: str) -> str:
    """The module whose code holds `node`'s line: the parent of the module the line calls
    (`self.q_proj(x)` → the attention), else the node's own module (`self.weight * x`)."""
    code = node.source.code if node.source is not None else ""
    if not code or "self." not in code:
        return path
    return _code_owner(code, path)


@functools.lru_cache(maxsize=1 << 14)
def _code_owner(code: str, path: str) -> str:
    """`_line_owner` for a line's code, cached: the same (line, module) pair recurs in each graph
    of a compile (Dynamo, joint, forward, post-grad), and each module name's pattern is compiled
    once (re.search with a built pattern compiles or looks it up on every call)."""
    parts = path.split("/")
    for k in range(len(parts) - 1, -1, -1):
        if _attr_call(parts[k]).search(code):
            return "/".join(parts[:k])
    return path


@functools.lru_cache(maxsize=1 << 12)
def _attr_call(name: str) -> re.Pattern[str]:
    """`self.<name>(` or `self.<name>[`, compiled once per module name."""
    return re.compile(rf"self\.{re.escape(name)}\s*[\(\[]")


def _derive(g: Graph, seeds: dict[str, str], dyn_loc: dict[tuple[str, int], list[tuple[int, str]]] | None,
            dyn_params: Sequence[str] | None) -> Graph:  # fmt: skip
    """Paths for `g`'s nodes. `seeds` are inherited by name; `dyn_loc`/`dyn_params` come from the
    Dynamo graph (None when `g` is the Dynamo graph itself)."""
    nodes = g.nodes
    n = len(nodes)
    path = [nd.module_path or seeds.get(nd.name, "") for nd in nodes]
    owner = list(path)
    index = {nd.name: i for i, nd in enumerate(nodes)}
    is_param = [False] * n
    placeholders = 0
    for i, nd in enumerate(nodes):  # 3. parameters and the nodes that read them
        if nd.op == "placeholder":
            if not path[i]:
                path[i] = _placeholder_module(nd, placeholders, dyn_params)
            is_param[i] = bool(path[i])
            owner[i] = path[i]
            placeholders += 1
            continue
        if path[i] or nd.op not in _CALL_OPS:
            continue
        ins = [index[s] for s in nd.inputs if s in index and is_param[index[s]]]
        if not ins:
            continue
        p = path[ins[0]]
        for j in ins[1:]:
            p = _lca(p, path[j])
        if not p:
            continue
        path[i] = p
        owner[i] = _line_owner(nd, p)
        op = nd.target.rsplit(".", 2)
        is_param[i] = len(nd.inputs) == 1 and (op[-1] in _VIEWISH or op[-2:-1] == [""] or
                                               (len(op) > 1 and op[-2] in _VIEWISH))  # fmt: skip
    _by_line(nodes, path, owner, dyn_loc)
    # Only graphs that run a backward replay forward lines in reverse; in a forward graph a run
    # whose lines fall is one loop iteration ending and the next starting (a layer's closing
    # residual add, then the next layer's norm), not one stretch of code.
    falling = g.kind not in (GraphKind.DYNAMO, GraphKind.AOT_FORWARD, GraphKind.AOT_INFERENCE,
                             GraphKind.PRE_GRAD)
    _fill_between(nodes, path, owner, falling)
    new = [nd if nd.module_path == p else _with_path(nd, p) for nd, p in zip(nodes, path, strict=True)]
    if all(map(operator.is_, new, nodes)):  # nothing placed that was not already
        return g
    return Graph(kind=g.kind, nodes=tuple(new), text=g.text, name=g.name)


def _with_path(nd: Node, path: str) -> Node:
    """`replace(nd, module_path=path)` without dataclasses' per-call field introspection, which
    dominates over tens of thousands of nodes; a shallow copy keeps any field added to Node later."""
    new = object.__new__(Node)
    new.__dict__.update(nd.__dict__)
    new.__dict__["module_path"] = path
    return new


def _placeholder_module(nd: Node, position: int, dyn_params: Sequence[str] | None) -> str:
    direct = param_module(nd.name) or param_module(nd.target)
    if direct or dyn_params is None:
        return direct
    comment = nd.attrs.get("aot_input", "")
    m = _AOT_TARGET.search(comment)
    if m:
        return "/".join(m.group(1).split(".")[:-1])
    m = _AOT_IDX.search(comment)
    k: int | None = int(m.group(1)) if m else None
    if k is None:
        pm = _PRIMALS.match(nd.name) or _ARG.match(nd.name)
        if pm:
            k = int(pm.group(1)) - (1 if nd.name.startswith("primals_") else 0)
    return dyn_params[k] if k is not None and 0 <= k < len(dyn_params) else ""


def _by_line(nodes: Sequence[Node], path: list[str], owner: list[str],
             dyn_loc: dict[tuple[str, int], list[tuple[int, str]]] | None) -> None:  # fmt: skip
    """4. Nodes on a line that a placed node of this graph also sits on take the nearest owner;
    then (AOT, post-grad) lines the Dynamo graph placed."""
    own_lines: dict[tuple[str, int], tuple[list[int], list[str]]] = {}
    for i, nd in enumerate(nodes):
        if owner[i] and nd.source is not None and nd.op in _CALL_OPS:
            pos, owners = own_lines.setdefault((nd.source.file, nd.source.line), ([], []))
            pos.append(i)
            owners.append(owner[i])
    pending: list[tuple[int, tuple[str, ...]]] = []
    distinct: dict[tuple[str, int], tuple[str, ...]] = {}
    same: dict[tuple[str, ...], tuple[str, ...]] = {}  # one object per candidate list
    placed_before, placed_after = _neighbours(path, nodes)  # by parameters only (rule 3)
    for i, nd in enumerate(nodes):
        if path[i] or nd.source is None or nd.op not in _CALL_OPS:
            continue
        key = (nd.source.file, nd.source.line)
        hit = own_lines.get(key)
        if hit is not None:
            pos, owners = hit
            k = bisect.bisect_left(pos, i)  # pos[k-1] < i < pos[k]: the nearer one, the earlier on a tie
            near = k if k == 0 or (k < len(pos) and pos[k] - i < i - pos[k - 1]) else k - 1
            # A line whose parameter reader runs in some copies only (a U-Net block's
            # `h + self.skip(x)`: a conv in the blocks that change channels, Identity in the
            # others) is no evidence for the copies without one: keep the owner only when each
            # numbered block it lies in holds one of the node's placed neighbours.
            near_paths = [path[k] for k in (placed_before[i], placed_after[i]) if k >= 0]
            if all(any(_inside(p, b) for p in near_paths) for b in _numbered_blocks(owners[near])):
                path[i] = owner[i] = owners[near]
        elif dyn_loc is not None and key in dyn_loc:
            cands = distinct.get(key)
            if cands is None:
                found = tuple(dict.fromkeys(p for _, p in dyn_loc[key]))
                cands = distinct[key] = same.setdefault(found, found)
            if len(cands) == 1:
                path[i] = owner[i] = cands[0]
            else:
                pending.append((i, cands))
    if not pending:
        return
    prev, nxt = _neighbours(path, nodes)
    # The choice depends on the candidates and the neighbours only: the lines of one layer share
    # one candidate list (the layer's 32 copies), so a context is chosen once, not once per line.
    chosen: dict[tuple[tuple[str, ...], str, str], str] = {}
    for i, cands in pending:
        before = owner[prev[i]] if prev[i] >= 0 else ""
        after = owner[nxt[i]] if nxt[i] >= 0 else ""
        ctx = (cands, before, after)
        if ctx not in chosen:
            chosen[ctx] = max(cands, key=lambda c: _shared(c, before) + _shared(c, after))
        path[i] = owner[i] = chosen[ctx]


def _neighbours(path: list[str], nodes: Sequence[Node]) -> tuple[list[int], list[int]]:
    n = len(path)
    prev, nxt = [-1] * n, [-1] * n
    last = -1
    for i in range(n):
        prev[i] = last
        if path[i] and nodes[i].op in _CALL_OPS:
            last = i
    last = -1
    for i in range(n - 1, -1, -1):
        nxt[i] = last
        if path[i] and nodes[i].op in _CALL_OPS:
            last = i
    return prev, nxt


def _fill_between(nodes: Sequence[Node], path: list[str], owner: list[str], falling: bool = True) -> None:
    """5. A node between two placed ones joins the one it shares a straight run of lines of one
    function with, else their deepest common module."""
    prev, nxt = _neighbours(path, nodes)
    index = {nd.name: k for k, nd in enumerate(nodes)}
    filled: set[int] = set()
    entries = _BlockEntries(nodes, owner, index)
    reads: dict[int, frozenset[str]] = {}  # owners a filled node reads, through filled inputs too
    for i, nd in enumerate(nodes):
        if path[i] or nd.op not in _CALL_OPS:
            continue
        filled.add(i)
        ins = [k for k in (index.get(name) for name in nd.inputs) if k is not None]
        reads[i] = frozenset(owner[k] for k in ins if k not in reads).union(
            *(reads[k] for k in ins if k in reads))
        a, b = prev[i], nxt[i]
        if b >= 0 and _same_run(nodes, i, b, falling):
            path[i] = owner[b]
        elif a >= 0 and _same_run(nodes, a, i, falling):
            path[i] = owner[a]
        elif a >= 0 and b >= 0:
            path[i] = (_between_blocks(nd, reads[i], owner[a], owner[b], entries)
                       or _lca(owner[a], owner[b]))
        else:
            path[i] = owner[a] if a >= 0 else (owner[b] if b >= 0 else "")
        owner[i] = path[i]
    _feeding(nodes, path, owner, filled, prev, nxt, index)
    _enclosed(nodes, path, owner, filled)


def _feeding(nodes: Sequence[Node], path: list[str], owner: list[str], filled: set[int],
             prev: list[int], nxt: list[int], index: dict[str, int]) -> None:
    """A node this rule placed joins a deeper module that a node of the same gap (same placed
    neighbours) it feeds was placed in: stochastic depth's `torch.empty(...).bernoulli_()` has no
    input to place it by, and sat at the common parent of two blocks (`features`) while the
    multiply and residual add it feeds close block `features/2/1`, splitting `features/2` in two.
    Consumers first (reverse order), so a chain of such nodes follows its end."""
    consumers: dict[int, list[int]] = {}
    for j in filled:
        for name in nodes[j].inputs:
            k = index.get(name)
            if k is not None and k in filled and (prev[k], nxt[k]) == (prev[j], nxt[j]):
                consumers.setdefault(k, []).append(j)
    for i in sorted(consumers, reverse=True):
        deeper = [path[j] for j in consumers[i] if path[j].startswith(path[i] + "/") or not path[i]]
        if deeper:
            path[i] = owner[i] = max(deeper, key=len)


def _enclosed(nodes: Sequence[Node], path: list[str], owner: list[str], filled: set[int]) -> None:
    """A node this rule placed at an ancestor of the module its neighbours on both sides share
    joins that module: an input-less `arange` inside an MoE layer's expert combine was drawn at
    `layers`, splitting the layer in two; torchvision's input-less `_log_api_usage_once` call in
    stochastic depth sat at `features`, between two nodes of `features/2/1`. Nodes placed by the
    earlier rules stay."""
    calls = [i for i, nd in enumerate(nodes) if nd.op in _CALL_OPS and path[i]]
    for before, i, after in zip(calls, calls[1:], calls[2:], strict=False):
        if i not in filled:
            continue
        shared = _lca(path[before], path[after])
        if not shared.startswith(path[i] + "/"):
            continue
        # their common module itself, or one inside a numbered block below the node's path (a
        # block of EfficientNet's stage, `features/2/1`, not the `layers` list of a decoder)
        below = shared[len(path[i]) + 1:].split("/")
        if path[before] == path[after] or any(part[-1:].isdigit() for part in below):
            path[i] = owner[i] = shared


class _BlockEntries:
    """The values that enter a module from outside it (read by its nodes, made elsewhere),
    computed once per module asked about."""

    def __init__(self, nodes: Sequence[Node], owner: list[str], index: dict[str, int]) -> None:
        self.nodes, self.owner, self.index = nodes, owner, index
        self._memo: dict[str, frozenset[str]] = {}
        self._by_function: dict[tuple[str, str], list[int]] = {}  # (file, function) -> node indices
        for k, other in enumerate(nodes):
            if other.source is not None:
                self._by_function.setdefault((other.source.file, other.source.function), []).append(k)

    def runs_in(self, block: str, nd: Node) -> bool:
        """Another node of `nd`'s function (file and name) already sits in `block`: the function
        runs inside the block (a decoder layer's first residual add, before its closing one)."""
        src = nd.source
        if src is None:
            return False
        return any(self.nodes[k] is not nd and _inside(self.owner[k], block)
                   for k in self._by_function.get((src.file, src.function), ()))

    def __call__(self, block: str) -> frozenset[str]:
        found = self._memo.get(block)
        if found is None:
            inside = block + "/"
            names = set()
            for k, nd in enumerate(self.nodes):
                if self.owner[k] == block or self.owner[k].startswith(inside):
                    for name in nd.inputs:
                        j = self.index.get(name)
                        if j is not None and self.owner[j] != block and not self.owner[j].startswith(inside):
                            names.add(name)
            found = self._memo[block] = frozenset(names)
        return found


def _numbered_blocks(path: str) -> list[str]:
    """`layers/3` and `layers/3/experts/7` for `layers/3/experts/7/w1`: each copy `path` is in."""
    parts = path.split("/")
    return ["/".join(parts[:k + 1]) for k, part in enumerate(parts) if part[-1:].isdigit()]


def _inside(path: str, block: str) -> bool:
    return path == block or path.startswith(block + "/")


def _between_blocks(nd: Node, read: frozenset[str], before: str, after: str,
                    entries: _BlockEntries) -> str:
    """A node right after a numbered block (`layers/3/...`, before `layers/4/...` or the final
    norm) that reads the block's values belongs to it: a layer's closing residual add, an MoE
    layer's expert combine in a library function. Their common parent (`layers`, the model)
    would draw it outside every layer. Where numbered blocks nest (EfficientNet's
    `features/2/1`, block 1 of stage 2), the deepest one whose own input the node also reads
    (a residual add joins a block's input to its result) is the one it closes. `read`: the
    modules whose values the node reads, directly or through other nodes of the gap. "" when
    `before` is in no numbered block or the node reads none of its values."""
    common = _lca(before, after)
    prefix = common + "/" if common else ""
    if not before.startswith(prefix):
        return ""
    parts = before[len(prefix):].split("/")
    # the numbered modules below the common one, outermost first: `layers/3` under `model`
    blocks = [prefix + "/".join(parts[:k + 1]) for k, part in enumerate(parts) if part[-1:].isdigit()]
    blocks = [b for b in blocks if not _inside(after, b)]
    if not blocks:
        return ""
    for block in reversed(blocks[1:]):
        if any(_inside(o, block) for o in read) and entries(block) & set(nd.inputs):
            return block
    if not any(_inside(o, blocks[0]) for o in read):
        return ""
    # ...and is code of the block: its function runs there, or it joins the block's input to
    # its result. ConvNeXt's `x = self.avgpool(x)` in the model's own forward reads the last
    # block's output but is no part of it.
    return blocks[0] if entries.runs_in(blocks[0], nd) or entries(blocks[0]) & set(nd.inputs) else ""


_MAX_STEP = 40  # lines between two consecutive nodes of one run (a U-Net block's closing add at
# line 47, the model's `h = down(h)` at line 110, both in a `forward` of one file)


def _same_run(nodes: Sequence[Node], i: int, j: int, falling: bool = True) -> bool:
    """Nodes i..j all in one function of one file with lines that only rise (or, with `falling`,
    only fall: backward graphs replay forward lines in reverse)."""
    if j - i > 64:
        return False
    locs = [nodes[k].source for k in range(i, j + 1)]
    if any(s is None for s in locs):
        return False
    first = locs[0]
    assert first is not None
    lines = []
    for s in locs:
        assert s is not None
        if s.file != first.file or s.function != first.function:
            return False
        lines.append(s.line)
    # a source location names its function, not its class: two `forward`s of one file look
    # alike, so a jump of more lines than a method body spans is not one stretch of code
    if any(abs(y - x) > _MAX_STEP for x, y in itertools.pairwise(lines)):
        return False
    rising = all(x <= y for x, y in itertools.pairwise(lines))
    return rising or (falling and all(x >= y for x, y in itertools.pairwise(lines)))

"""How a kernel's calls in `call()` pass buffers: which nodes each argument holds, and what a
call leaves in the buffers it writes.

Inductor deduplicates kernels: one kernel serves every layer, each call with its own arguments.
`kernel_marks` walks `call()` in execution order; these are the pieces it asks: the nodes a
call's `Source Nodes` comment names, a node's counterpart in another call of the same kernel
(by the comment's ranks, or by data flow from the two calls' arguments), the node an extern
call computes, and a kernel's parameter names.
"""

from __future__ import annotations

import re

from compiler_core.analysis.kernel_line_kinds import PTR
from compiler_core.analysis.kernel_op_spellings import aten_op
from compiler_core.session.model import Graph, Kernel
from compiler_core.trace.output_code import split_extern_name

_PARAMS = re.compile(r"^\s*(?:def \w+|extern \"C\"[^(]*\w+)\s*\(([^)]*)\)", re.M)
# A kernel's matched call: what each parameter read, the nodes its comment named, what it stored.
Matched = tuple[dict[str, list[str]], set[str], dict[str, list[str]]]


def written(kernel: Kernel, param: str, ref: Matched | None,
             reads: dict[str, list[str]], exact: set[str], flow: CallFlow, order: dict[str, int],
             ops: dict[str, str]) -> list[str]:  # fmt: skip
    """The nodes whose value a call leaves in its argument for output `param`: of the values the
    call must write (its nodes read outside it), those the matched call's store lines into `param`
    are marked with, carried over to this call's counterparts; else all of them (the reading
    kernel keeps the one it consumes); else `fused_nodes[-1]`."""
    last = [n for n in kernel.fused_nodes[-1:] if n in order]
    if ref is None:
        return last
    ref_reads, ref_exact, stored = ref
    nodes = stored.get(param, []) + last
    if reads is ref_reads:
        group = ref_exact or {n for n in kernel.fused_nodes if n in order}
    elif exact and ref_exact:
        # (`fused_nodes[-1]` may be another call's node: a union over calls has no one last)
        nodes = [c for n in stored.get(param, []) if (c := counterpart(n, ref_exact, exact, order, ops))]
        group = exact
    else:
        image = flow.image(kernel, ref_reads, reads, order)
        nodes = [image[n] for n in nodes if n in image]
        group = {image[n] for n in kernel.fused_nodes if n in image}
    sinks = flow.sinks(group, order)
    return [n for n in nodes if n in sinks][:1] or sinks or last


def call_nodes(names: list[str] | None, order: dict[str, int], pre_to_post: dict[str, list[str]],
                partial: bool) -> set[str]:  # fmt: skip
    """The post-grad nodes a call's `Source Nodes` comment names: post-grad names as they are,
    others (Dynamo names) through provenance `preToPost`. A forward comment holds Dynamo names,
    some of which spell a different post-grad node (`add_9`), so one unknown name voids it; a
    backward comment holds post-grad names plus a few Dynamo ones of recomputed forward ops,
    which are left out (every call of the kernel leaves out the same ones)."""
    out: set[str] = set()
    for name in names or ():
        nodes = [name] if name in order else [n for n in pre_to_post.get(name, ()) if n in order]
        if not nodes and not partial:
            return set()
        out.update(nodes)
    return out


def counterpart(node: str, ref: set[str], mine: set[str], order: dict[str, int],
                 ops: dict[str, str]) -> str | None:  # fmt: skip
    """`node` of the matched call's comment nodes `ref` → the node of this call's `mine` with the
    same op at the same rank (graph order) among that op's nodes."""
    if node not in ref:
        return node if node in mine else None
    op = ops.get(node, "")
    theirs = sorted((n for n in ref if ops.get(n) == op), key=order.__getitem__)
    same = sorted((n for n in mine if ops.get(n) == op), key=order.__getitem__)
    rank = theirs.index(node)
    return same[rank] if rank < len(same) else None


class CallFlow:
    """Maps a deduplicated kernel's `fused_nodes` (its first call's) onto a later call's nodes by
    data flow, where no comment names them exactly (Dynamo names, no `preToPost`): the args of the
    two calls pair per parameter, and each fused node's image is the consumer of its input's
    image with the same op at the same rank among that input's consumers of that op."""

    def __init__(self, post: Graph, ops: dict[str, str]) -> None:
        self.ops = ops
        self.inputs = {n.name: n.inputs for n in post.nodes}
        consumers: dict[tuple[str, str], list[str]] = {}
        self.rank: dict[tuple[str, str], int] = {}  # (input, consumer) -> rank among same-op consumers
        for n in post.nodes:
            op = ops.get(n.name, "")
            for x in dict.fromkeys(n.inputs):
                group = consumers.setdefault((x, op), [])
                self.rank[(x, n.name)] = len(group)
                group.append(n.name)
        self.consumers = consumers
        self.users: dict[str, list[str]] = {}
        for n in post.nodes:
            for x in n.inputs:
                self.users.setdefault(x, []).append(n.name)
        self.sorted: dict[str, list[str]] = {}

    def sinks(self, nodes: set[str], order: dict[str, int]) -> list[str]:
        """Nodes of a call that something outside it reads: the values it must write, one of
        which its buffer holds (the reading kernel picks the one it consumes)."""
        return sorted((n for n in nodes if any(u not in nodes for u in self.users.get(n, ()))),
                      key=order.__getitem__)  # fmt: skip

    def image(self, kernel: Kernel, ref: dict[str, list[str]], reads: dict[str, list[str]],
              order: dict[str, int]) -> dict[str, str]:  # fmt: skip
        """Fused node (or node the first call read) → its counterpart in this call."""
        image: dict[str, str] = {}
        for p, nodes in ref.items():
            for a, b in zip(nodes, reads.get(p, ()), strict=False):
                image.setdefault(a, b)
        fused = self.sorted.get(kernel.name)
        if fused is None:
            fused = self.sorted[kernel.name] = sorted(
                (n for n in kernel.fused_nodes if n in order), key=order.__getitem__
            )
        # Forward from the inputs that differ between the two calls (a buffer both calls read,
        # such as the dropout seeds, names the same node in both and says nothing about which
        # of its consumers this call's is); then backward from users whose image is known
        # (dropout's `gt` is the mask input of the `mul` whose other input is this layer's
        # matmul); then forward from shared inputs for what is left.
        self._forward(fused, image, informative=True)
        for f in reversed(fused):
            if f in image:
                continue
            op = self.ops.get(f, "")
            for u in self.users.get(f, ()):
                if u in image and image[u] != u:
                    mine = [x for x in self.inputs.get(u, ()) if self.ops.get(x) == op]
                    theirs = [x for x in self.inputs.get(image[u], ()) if self.ops.get(x) == op]
                    if f in mine and len(mine) == len(theirs):
                        image[f] = theirs[mine.index(f)]
                        break
        self._forward(fused, image, informative=False)
        return image

    def _forward(self, fused: list[str], image: dict[str, str], informative: bool) -> None:
        for f in fused:
            if f in image:
                continue
            op = self.ops.get(f, "")
            for x in self.inputs.get(f, ()):
                if x in image and (image[x] != x or not informative):
                    group = self.consumers.get((image[x], op), [])
                    r = self.rank.get((x, f), len(group))
                    if r < len(group):
                        image[f] = group[r]
                        break


def callee_op(name: str) -> str:
    """`extern_kernels.mm:2` → `mm`; `torch.ops.aten.convolution_backward.default:1` →
    `convolution_backward`."""
    callee = (split_extern_name(name) or (name, 1))[0]
    return callee.rsplit(".", 1)[-1] if callee.startswith("extern_kernels.") else aten_op(callee)


def extern_nodes(kernel: Kernel, by_op: dict[str, list[str]]) -> list[str]:
    """An extern call's own node when no comment names it: the n-th post-grad node with the
    callee's op for the n-th call (`extern_kernels.mm:2` → the second `aten.mm` node). Inductor
    may run them out of graph order (the Llama backward does), so a comment wins."""
    nth = (split_extern_name(kernel.name) or (kernel.name, 1))[1]
    same_op = by_op.get(callee_op(kernel.name), [])
    return same_op[nth - 1 : nth] or list(kernel.fused_nodes[:1])



def param_names(source: str) -> tuple[str, ...]:
    """A kernel's parameter names (`kernel_marks` keeps them per kernel: a deep model calls each
    kernel once per layer, and finding the signature searches the whole source)."""
    m = _PARAMS.search(source)
    if not m:
        return ()
    return tuple(_param_name(p) for p in m.group(1).split(",") if p.strip())


def _param_name(decl: str) -> str:
    """`const float* in_ptr0` / `XBLOCK : tl.constexpr` / `xnumel` → the parameter's name."""
    ptr = PTR.search(decl)
    if ptr:
        return ptr.group(1)
    words = re.findall(r"\w+", decl.split(":")[0])
    return words[-1] if words else ""


def split_args(text: str) -> list[str]:
    """Top-level comma-separated arguments (nested calls such as `reinterpret_tensor(...)` kept)."""
    if "(" not in text and "[" not in text and "{" not in text and ")" not in text and "]" not in text \
            and "}" not in text:  # fmt: skip
        # no nesting (most calls): every comma splits, as the loop below would
        *parts, last = text.split(",")
        out = [x.strip() for x in parts]
        last = last.strip()
        if last:
            out.append(last)
        return out
    out = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out

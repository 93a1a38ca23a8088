"""Which post-grad nodes each kernel implements (`Kernel.fused_nodes`), from Inductor's own record.

Where a log carries no provenance maps (the H200 logs of bench/data do not), the output code still
says it, but not in the place a name guess looks:

- A generated kernel's `# Graph fragment:` comment lists the post-grad nodes Inductor lowered into
  it, for its first call. A kernel reused by other layers runs their counterparts at later calls;
  each call's `Source Nodes` comment names the group of statements around it: in the backward the
  kernel's own nodes among the nodes of the buffers it reads (`view_655`, `add_232`) and Dynamo
  names of recomputed forward ops; in the forward only Dynamo names, several of which spell an
  unrelated post-grad node (`mul_100`, `add_5` of another layer). So a later call's nodes are the
  fragment's image: its sinks (fragment nodes no fragment node reads) go to the latest named node
  of the same op, and each fragment node's argument at position i goes to the image's argument at
  position i when the ops agree. A forward comment (Dynamo names) is read only through provenance
  `preToPost`; without it (or with no named node of the fragment's ops) the call is followed by
  data flow: its arguments pair by position with the first call's, an argument's node being a
  graph value by name or the node of the extern call that wrote the buffer last, and a fragment
  node goes to the consumer of its input's image with its op, at the same rank among that
  input's consumers of that op. Buffers written by generated kernels are not followed, so a
  kernel that reads only those (the forward's `clone_expand_unsqueeze` after the rotary kernel)
  keeps its fragment's nodes. Line marks are still made from the fragment's own call
  (`compile_builder`): other layers' nodes would only be wrong candidates for its lines.
- An extern call's own node is the one node of its callee's op that its comment names and no
  earlier call took: Inductor runs the Llama backward's matmuls out of graph order, so the n-th
  `extern_kernels.mm` is not the n-th `mm` node. With no such node (forward: Dynamo names), the
  n-th untaken node of the op (the forward runs them in graph order: its calls read the
  `primals_k` weights of the nodes this picks, tests/compiler_core/analysis/test_kernel_nodes.py).
"""

from __future__ import annotations

import re
from bisect import bisect
from collections.abc import Mapping, Sequence

from compiler_core.analysis.kernel_lines import aten_op
from compiler_core.session.model import Graph
from compiler_core.trace.output_code import ParsedKernel, split_extern_name

_OUT = re.compile(r"^(buf\d+) = |\bout=(buf\d+)")
_ARG = re.compile(r"^\s*(?:reinterpret_tensor\(\s*)?(\w+)")


class KernelNodes:
    """One partition's post-grad graph, indexed for naming the nodes of its kernels."""

    def __init__(self, post: Graph | None, pre_to_post: Mapping[str, Sequence[str]], backward: bool) -> None:
        nodes = post.nodes if post is not None else ()
        self.order = {n.name: i for i, n in enumerate(nodes)}
        self.ops = {n.name: aten_op(n.target) for n in nodes}
        self.inputs = {n.name: n.inputs for n in nodes}
        self.by_op: dict[str, list[str]] = {}
        for n in nodes:
            self.by_op.setdefault(self.ops[n.name], []).append(n.name)
        self.pre_to_post = pre_to_post
        self.backward = backward
        self.taken: set[str] = set()  # extern nodes already given to a call
        self.consumers: dict[str, list[str]] = {}
        for n in nodes:
            for i in dict.fromkeys(n.inputs):
                self.consumers.setdefault(i, []).append(n.name)
        self.writes: dict[str, tuple[list[int], list[str]]] = {}  # buf -> extern calls' lines, nodes
        self.first_call: dict[str, list[str]] = {}  # kernel -> its fragment's (first call's) nodes

    def named(self, names: Sequence[str]) -> list[str]:
        """Post-grad nodes a comment names: post-grad names as they are in the backward (whose
        comments use them), Dynamo names through `preToPost`."""
        out: list[str] = []
        for name in names:
            if self.backward and name in self.order:
                out.append(name)
            else:
                out += [n for n in self.pre_to_post.get(name, ()) if n in self.order]
        return out

    def generated(self, pk: ParsedKernel) -> list[str]:
        """A Triton/C++ kernel with a Graph fragment: the fragment's nodes, then each later
        call's image of them."""
        frag = sorted((n for n in pk.fragment_nodes if n in self.order), key=self.order.__getitem__)
        # In the order of the `Source node to ATen node mapping` where it lists them (the marker
        # takes the last fused node for an output no store line names: var_mean, not the copy_
        # of the running mean that graph order puts last), the nodes it lacks first.
        mapped = [n for n in pk.post_grad_nodes if n in set(frag)]
        out = dict.fromkeys(n for n in frag if n not in set(mapped))
        out.update(dict.fromkeys(mapped))
        self.first_call[pk.name] = list(out)
        ref = self._args(*pk.calls[0]) if pk.calls else []
        for i, names in enumerate(pk.call_names):
            image = self._image(frag, self.named(names))
            if not image and 0 < i < len(pk.calls):  # no names to go by: data flow from the args
                image = self._flow(frag, ref, self._args(*pk.calls[i]))
            out.update(dict.fromkeys(image))
        return list(out)

    def _args(self, line: int, text: str) -> list[str]:
        """A call's arguments as the nodes they hold ("" where unknown): a graph value by name,
        a buffer by the extern call that wrote it last (generated kernels' outputs are not
        followed)."""
        inner = text[text.find("(") + 1 : text.rfind(")")]
        out = []
        for arg in _split(inner):
            m = _ARG.match(arg)
            name = m.group(1) if m else ""
            if name in self.order:
                out.append(name)
                continue
            lines, nodes = self.writes.get(name, ([], []))
            at = bisect(lines, line)
            out.append(nodes[at - 1] if at else "")
        return out

    def _flow(self, frag: list[str], ref: list[str], mine: list[str]) -> list[str]:
        """The fragment's image at a later call: its first call's argument values map to this
        call's position by position; a fragment node maps to the consumer of its input's image
        with its op, at the same rank among that input's consumers of that op."""
        image = {a: b for a, b in zip(ref, mine, strict=False) if a and b and a != b}
        if not image:
            return []
        found: list[str] = []
        for x in frag:
            op = self.ops[x]
            for src in self.inputs.get(x, ()):
                dst = image.get(src)
                if dst is None:
                    continue
                theirs = [c for c in self.consumers.get(src, ()) if self.ops[c] == op]
                same = [c for c in self.consumers.get(dst, ()) if self.ops[c] == op]
                rank = theirs.index(x)
                if rank < len(same):
                    image[x] = same[rank]
                    found.append(same[rank])
                break
        return found

    def _image(self, frag: list[str], named: list[str]) -> list[str]:
        mine = set(frag)
        if not frag or not named or mine & set(named):
            return []  # the fragment's own call (or nothing to anchor on)
        read = {i for n in frag for i in self.inputs.get(n, ()) if i in mine}
        image: dict[str, str] = {}
        at = self.order.__getitem__
        for op in dict.fromkeys(self.ops[n] for n in frag if n not in read):
            sinks = sorted((n for n in frag if n not in read and self.ops[n] == op), key=at)
            found = sorted({n for n in named if self.ops.get(n) == op}, key=at)
            for sink, node in zip(sinks, found[-len(sinks) :], strict=False):
                image[sink] = node
        todo = list(image)
        while todo:
            src = todo.pop()
            for a, b in zip(self.inputs.get(src, ()), self.inputs.get(image[src], ()), strict=False):
                if a in mine and a not in image and self.ops.get(b) == self.ops[a]:
                    image[a] = b
                    todo.append(a)
        return sorted(image.values(), key=self.order.__getitem__)

    def extern(self, pk: ParsedKernel) -> list[str]:
        """`extern_kernels.mm:2` → its own `mm` node (module docstring)."""
        callee, nth = split_extern_name(pk.name) or ("", 1)
        op = aten_op(callee) if callee.startswith(("aten.", "torch.ops.")) else callee.rsplit(".", 1)[-1]
        named = dict.fromkeys(self.named(pk.source_nodes))
        own = [n for n in named if self.ops.get(n) == op and n not in self.taken]
        if len(own) != 1:
            same_op = self.by_op.get(op, [])
            nth_node = same_op[nth - 1 : nth]
            own = nth_node if nth_node and nth_node[0] not in self.taken else \
                [n for n in same_op if n not in self.taken][:1]  # fmt: skip
        self.taken.update(own)
        out = _OUT.search(pk.source)
        if out and own:
            lines, nodes = self.writes.setdefault(out.group(1) or out.group(2), ([], []))
            lines.append(pk.line or 0)
            nodes.append(own[0])
        return own


def _split(text: str) -> list[str]:
    """Top-level comma-separated arguments (`reinterpret_tensor(buf1, (32, 1), ...)` kept whole)."""
    out: list[str] = []
    depth = start = 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out

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
  `preToPost`; without it a reused forward kernel keeps its fragment's nodes (its first call's).
- An extern call's own node is the one node of its callee's op that its comment names and no
  earlier call took: Inductor runs the Llama backward's matmuls out of graph order, so the n-th
  `extern_kernels.mm` is not the n-th `mm` node. With no such node (forward: Dynamo names), the
  n-th untaken node of the op (the forward runs them in graph order: its calls read the
  `primals_k` weights of the nodes this picks, tests/compiler_core/build/test_kernel_nodes.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from compiler_core.build.kernel_lines import aten_op
from compiler_core.session.model import Graph
from compiler_core.trace.output_code import ParsedKernel, split_extern_name


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
        for names in pk.call_names:
            out.update(dict.fromkeys(self._image(frag, self.named(names))))
        return list(out)

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
        return own

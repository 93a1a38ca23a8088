"""What a kernel's Graph fragment and the def-use chains of its lines prove about each line.

The marker's handlers (`kernel_line_marker`) ask these questions of one kernel: which unused
fused node a line computes (its op spelled, every operand carrying a node it reads, its literals
the node's scalars, and a reduced value going only to what a reduction reads), which node a line
is an inner step of, which constant a literal is, and what a store line stores. The answers hold
the line to Inductor's own record (the fragment) where the kernel has one. What a line spells, its
operands and its literals are what its reader found (`KernelLine`: Triton's syntax tree, C++'s
text); these questions never read the line's text.
"""

from __future__ import annotations

from compiler_core.analysis.kernel_fragment import Fragment
from compiler_core.analysis.kernel_line_kinds import LOAD, STORE, KernelLine, def_use, read_lines
from compiler_core.analysis.kernel_op_spellings import (
    CONSTANT_OPS,
    INNER_SPELLINGS,
    LOW_FLOATS,
    REDUCTION_OPS,
    SEE_THROUGH,
    SPELLINGS,
    close,
    copy_node,
)
from compiler_core.session.model import Kernel


class KernelFacts:
    """One kernel's lines with what the fragment and the def-use chains prove about them."""

    def __init__(self, kernel: Kernel, fused: list[str], ops: dict[str, str],
                 node_inputs: dict[str, set[str]], frag: Fragment | None) -> None:  # fmt: skip
        self.lines: tuple[KernelLine, ...] = read_lines(kernel.source, kernel.language)
        self.fused, self.ops, self.node_inputs, self.frag = fused, ops, node_inputs, frag
        self.flow = def_use(self.lines)
        self.valued = self.flow.valued()
        # assignment lines (the def-use pass found them) that reduce
        reductions = {i for i in self.flow.uses if self.lines[i - 1].reduces}
        self.into_reduction = self.flow.into_reduction(reductions)
        self._reads: dict[str, set[str]] = {}
        # output parameters the kernel stores into (`out_ptr0`, `in_out_ptr1`)
        self.outputs = len({p for i in self.flow.value for p in self.lines[i - 1].pointers
                            if p.startswith(("out_", "in_out_"))})  # fmt: skip
        self.realized: set[str] = set()
        self._twin_key: dict[str, tuple[object, ...]] | None = None
        red_nodes = {n for n in fused if ops.get(n) in REDUCTION_OPS}
        inside = set(fused)
        self.upstream: set[str] = set()
        todo = list(red_nodes)
        while todo:  # what a value that is reduced may be: a reduction or a fused node it reads
            n = todo.pop()
            if n not in self.upstream:
                self.upstream.add(n)
                todo.extend(x for x in self.reads(n) if x in inside)
        self.scalars = frag.scalars if frag is not None else {}
        # Without a fragment (C++ kernels logged without `comment_origin`) nothing checks the
        # marks, and the C++ reductions' `tmp_acc0_vec` accumulators are no `tmp` def-use chain:
        # an op line takes the node that reads one of its known operands, as before the fragment.
        self.strict = frag is not None
        self.computed_from: dict[str, set[str]] = {}  # node -> the tmps its line read

    def realize(self, gather: str) -> None:
        """A gather whose index an indirect load applies: its value is its input's, as a view's."""
        self.realized.add(gather)
        self._reads.clear()

    def reads(self, node: str) -> set[str]:
        """What `node` reads, through views and identities (`pow(x, 1.0)` is `x`)."""
        out = self._reads.get(node)
        if out is None:
            out = self._reads[node] = set(self.node_inputs.get(node, ()))
            if self.frag is not None:
                for x in [x for x in out if x in self.frag.nodes and self.frag.identity(x)]:
                    out |= self.node_inputs.get(x, set())
            for x in [x for x in out if x in self.realized]:
                out |= self.node_inputs.get(x, set())
        return out

    def spells_op(self, name: str) -> bool:
        """Whether some line of the kernel spells node `name`'s op (else it may be a pure
        copy or layout op)."""
        op = self.ops.get(name, "").rstrip("_")
        forms = SPELLINGS.get(op, ())
        return bool(op) and any(op in kl.words or any(f in kl.spells for f in forms) for kl in self.lines)

    def _spelled(self, name: str, kl: KernelLine, lits: list[float]) -> bool:
        op = self.ops.get(name, "").rstrip("_")
        if not op:
            return False
        spells = kl.spells
        if op == "reciprocal" and " / " in spells and 1.0 in lits:  # `1 / x` with the 1 in a tmp
            return True
        if op == "sum" and " + " in spells:  # a reduction over 2 elements, unrolled (`x[0] + x[1]`)
            return len(lits) == 0 and len(kl.tmps) == 2 and len(set(kl.tmps)) == 2
        if op == "div" and " * " in spells:  # `div(x, 512)` is emitted as `x * 0.001953125`
            return any(c and abs(v * c - 1) < 1e-6 for v in lits for c in self.scalars.get(name, ()))
        return op in kl.words or any(s in spells for s in SPELLINGS.get(op, ()))

    def _literals_fit(self, name: str, lits: list[float]) -> bool:
        """A literal operand is one of the node's scalar arguments (or its reciprocal for a div)."""
        held = self.scalars.get(name)
        if not lits or not held or self.ops.get(name) in REDUCTION_OPS:
            return True
        div = self.ops.get(name) == "div"
        return all(any(close(v, c) or (div and c and close(v * c, 1.0)) for c in held) for v in lits)

    def op(self, kl: KernelLine, line: int, used: set[str], sets: list[set[str]],
           lits: list[float]) -> str | None:  # fmt: skip
        """The unused fused node the line computes: its op is spelled, every operand carries a
        node it reads, the literals are its scalars, and when the line's value is reduced, it is
        something a reduction of the kernel reads. The most operands read wins, then the earliest."""
        best: str | None = None
        score = 0.0
        if not sets:  # operands no line made known: only the kernel's one node spelled so
            spelled = [n for n in self.fused if n not in used and self._spelled(n, kl, lits)]
            return spelled[0] if len(spelled) == 1 else None
        for name in self.fused:
            if not self._spelled(name, kl, lits):
                continue
            if name in used and self.computed_from.get(name, set()) & set(kl.tmps):
                continue  # a node is computed again only from other values (a cat's other branch)
            if name in used and best is not None:
                continue
            reads = self.reads(name)
            if not self._literals_fit(name, lits):
                continue
            if any(not s & reads for s in sets) if self.strict else sets and not any(s & reads for s in sets):
                continue
            if line in self.into_reduction and name not in self.upstream:
                continue
            overlap = sum(len(s & reads) for s in sets) - (0.5 if name in used else 0)
            if best is None or overlap > score:
                best, score = name, overlap
        if best is not None:
            self.computed_from.setdefault(best, set()).update(kl.tmps)
        return best

    def inner(self, kl: KernelLine, line: int, sets: list[set[str]], lits: list[float]) -> str | None:
        """A line inside a node an operand already carries: var_mean's `x - mean` and its square
        before the second sum, a pow's repeated product, a reduction's last `/ N`. The other
        operands carry what the node reads; a reduction's inner steps other than its `/ N` feed
        its reduction."""
        carried = set().union(*sets)
        for name in self.fused:  # in graph order: the same answer whatever the set order
            if name not in carried:
                continue
            op = self.ops.get(name, "")
            steps = INNER_SPELLINGS.get(op, ())
            step = any(t in kl.spells for t in steps)
            if not step and not (op not in REDUCTION_OPS and self._spelled(name, kl, lits)):
                continue
            if op == "pow" and (lits or not self.scalars.get(name, set()) - {0.0, 1.0, 2.0}):
                continue  # a pow's inner product multiplies by its base; `x * x` is all of pow 2
            reads = self.reads(name) | {name}
            if any(not s & reads for s in sets):
                continue
            if op in REDUCTION_OPS and " / " not in kl.spells and line not in self.into_reduction:
                continue
            if line in self.into_reduction and name not in self.upstream:
                continue
            return name
        return None

    def twins(self, node: str, used: set[str]) -> list[str]:
        """Unused nodes of the fragment with the node's op, arguments and scalars: the same value,
        which Inductor's CSE computes on this one line (`sum_15 * 0.0078125` twice in ResNet's
        batch-norm backward)."""
        if self.frag is None or node not in self.frag.nodes:
            return []
        if self._twin_key is None:  # op, arguments up to twins, scalars, dtype; in fragment order
            self._twin_key = {}
            rep: dict[tuple[object, ...], str] = {}
            for n, (op, args) in self.frag.nodes.items():
                key = (op, tuple(rep.get(self._twin_key.get(a, ()), a) for a in args),
                       tuple(sorted(self.scalars.get(n, ()))), self.frag.dtypes.get(n))  # fmt: skip
                self._twin_key[n] = key
                rep.setdefault(key, n)
        mine = self._twin_key.get(node)
        return [
            n for n in self.fused if n != node and n not in used and mine and self._twin_key.get(n) == mine
        ]

    def squares(self, node: str, kl: KernelLine, used: set[str]) -> list[str]:
        """`x * x` that is the first product of `pow(x, 3)` is also the kernel's `pow(x, 2)`
        (Inductor lowers an integer pow to products and shares the common one)."""
        operands = kl.tmps
        if self.ops.get(node) != "pow" or len(operands) != 2 or operands[0] != operands[1]:
            return []
        base = self.node_inputs.get(node, set())
        return [n for n in self.fused if n != node and n not in used and self.ops.get(n) == "pow"
                and self.scalars.get(n) == {2.0} and self.node_inputs.get(n, set()) == base]  # fmt: skip

    def pre_reduction(self, kl: KernelLine, line: int, used: set[str], sets: list[set[str]]) -> str | None:
        """A line whose value only reaches a reduction, which no node of the kernel spells (a
        cast of a bool to int64 before `sum` counts it, `x != 0` before `any`): the reduction's
        own lowering, when every operand is the reduction's input or its own earlier step."""
        if not self.strict or line not in self.into_reduction:
            return None
        if not kl.cast and any(self._spelled(n, kl, []) for n in self.fused):
            return None
        for name in self.fused:
            if self.ops.get(name) in REDUCTION_OPS and name not in used:
                reads = self.reads(name) | {name}
                if sets and all(s & reads for s in sets):
                    return name
        return None

    def constant(self, kl: KernelLine, line: int, used: set[str]) -> str | None:
        """A constant-making node holding the line's literal, or an iota spelled as its index."""
        if kl.index:  # an iota, read along one axis or several (`x0`, `x1`)
            if line not in self.valued:
                return None
            return next((n for n in self.fused if self.ops.get(n) in ("iota", "arange")), None)
        value, dtype = kl.numbers, kl.dtype
        for name in self.fused:
            if name in used or self.ops.get(name) not in CONSTANT_OPS or self.ops.get(name) == "iota":
                continue
            if (
                self.frag is not None
                and dtype
                and LOW_FLOATS.get(self.frag.dtypes.get(name, dtype), self.frag.dtypes.get(name, dtype))
                != dtype
            ):
                continue  # (a bf16 / f16 constant is computed in f32)
            held = self.scalars.get(name)
            if (held and value & held) or (held is None and self.frag is None):
                return name
        return None

    def promote(self, promotions: dict[int, list[str]], out: dict[str, list[str]]) -> None:
        """A cast no convert node of the fragment makes is a promotion inside the node that reads
        it (`mul(gt, x)` of a bool mask): when every line reading it is marked with one node and
        that node reads the cast's operand."""
        for line, operand in promotions.items():
            if self.frag is None:
                continue
            users = self.flow.users.get(line, [])
            nodes = [set(out.get(str(u), ())) for u in users]
            common = set.intersection(*nodes) if nodes else set()
            for name in sorted(common):
                if set(operand) & self.reads(name) and name in self.fused:
                    out[str(line)] = [name]
                    break

    def single_node(self, out: dict[str, list[str]], literal: set[str]) -> None:
        """A kernel whose fragment computes one node (a max pool with its offsets: the rest are
        getitems and views) computes it on every line that makes a stored value."""
        if self.frag is None:
            return
        compute = [n for n in self.fused if n in self.frag.nodes and n not in self.frag.placeholders
                   and self.ops.get(n) not in SEE_THROUGH and not self.frag.identity(n)]  # fmt: skip
        if len(compute) != 1:
            return
        for i, line in enumerate(self.lines, start=1):
            if str(i) in out or line.target is None or i not in self.valued or line.target in literal:
                continue
            if line.kind == LOAD or not line.tmps or line.carries:
                continue
            out[str(i)] = [compute[0]]
        for i, line in enumerate(self.lines, start=1):
            if str(i) not in out and line.kind == STORE:
                value = [j for j in self.flow.value.get(i, []) if compute[0] in out.get(str(j), ())]
                if value:
                    out[str(i)] = self.store_node([compute[0]], [], self.fused, set()) or [compute[0]]

    def store_node(
        self, held: list[str], copied: list[str], fused: list[str], op_matched: set[str]
    ) -> list[str]:
        """A store's node: the value's own when the kernel returns it (or a bare buffer), the
        clone a returned view chain materialises from it (`clone(permute(mul_4))`), else the
        copy of a loaded value; with no fragment, the value's node or the kernel's one copy."""
        frag = self.frag
        if frag is None or not frag.returns:  # (older Inductors write no `return` in the fragment)
            return held[-1:] or copy_node(fused, op_matched, self.ops)
        bare = any(r.startswith("buf") and r not in frag.nodes for r in frag.returns)
        for v in held[-1:] + copied[-1:]:
            if v in frag.returns or (bare and v in frag.nodes and v in held):
                return [v]
            for r in sorted(frag.returns):
                if frag.identity(r) and v in self.node_inputs.get(r, ()):
                    return [r]  # `add(iota, 0)`: the returned node is the stored value itself
                if self.ops.get(r) not in SEE_THROUGH or v not in self.node_inputs.get(r, ()):
                    continue
                chain = [r, *sorted(self.node_inputs.get(r, ()))]
                copies = [c for c in chain if self.ops.get(c) == "clone" and c in frag.nodes
                          and (c == r or v in self.node_inputs.get(c, ()))]  # fmt: skip
                return copies[:1] or ([v] if v in held else [])
        named = [r for r in frag.returns if r in self.node_inputs or r in frag.nodes]
        if not held and len(frag.returns) == 1 and named and self.outputs == 1:
            return named  # the kernel's one output buffer holds the one value it returns
        return []

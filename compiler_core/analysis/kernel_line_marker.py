"""The kernel-line marker: a state machine over one kernel's lines, one handler per kind of line.

`kernel_line_kinds` says what each line is (a loop start, a C++ vectorised body or its scalar
tail, a store, a load, a welford step, an accumulator's start, a fill, a masked select, a
reduction step, a carry, a constant, a compute line); each kind has its handler here, and the
handlers share the state of the walk:

- `made`: tmp → the fused nodes whose op produced it (carried through plain copies),
- `loaded`: tmp → the nodes that produced the buffer it was loaded from,
- `used`: fused nodes a line already computes in this loop body (the body restarts after a
  store, at each `for` and at each C++ body or tail: a looped reduction's second loop and a
  vectorised loop's scalar tail compute the same nodes again),
- `literal`, `values`, `fills`: tmps that hold no node's value (a literal, index arithmetic,
  a masked load's fill) and the literals' values,
- `written`: in/out pointer → what this kernel stored into it (a later load reads that; a
  scalar tail reads what the buffer held before its vectorised body, whose elements it is not),
- `promotions`: cast lines no convert node makes, settled once all lines are marked.

The rules each handler applies are those of `kernel_lines`' module docstring; the questions
about the fragment and the def-use chains go to `KernelFacts`.
"""

from __future__ import annotations

from collections.abc import Callable

from compiler_core.analysis.kernel_fragment import Fragment
from compiler_core.analysis.kernel_line_facts import KernelFacts
from compiler_core.analysis.kernel_line_kinds import (
    ACC_START,
    BODY,
    CARRY,
    COMPUTE,
    CONSTANT,
    FILL,
    LOAD,
    LOOP,
    MASKED,
    MULTI,
    OTHER,
    REDUCTION,
    STORE,
    TAIL,
    KernelLine,
)
from compiler_core.analysis.kernel_op_spellings import (
    GATHER_OPS,
    REDUCTION_OPS,
)
from compiler_core.session.model import Kernel

# (marker, line number, line, the nodes the line is marked with so far): a handler adds to them
_Handler = Callable[["LineMarker", int, KernelLine, list[str]], None]
# A value line's handler also gets the nodes its operands carry, and returns the node it computes.
_ValueHandler = Callable[["LineMarker", int, KernelLine, list[str], list[str]], "str | None"]


class LineMarker:
    """Marks one kernel's lines with the post-grad nodes they compute, in one pass."""

    def __init__(self, kernel: Kernel, fused: list[str], ops: dict[str, str],
                 node_inputs: dict[str, set[str]], args: dict[str, list[str]],
                 frag: Fragment | None) -> None:  # fmt: skip
        self.facts = KernelFacts(kernel, fused, ops, node_inputs, frag)
        self.fused, self.ops, self.node_inputs, self.args = fused, ops, node_inputs, args
        self.loaded: dict[str, list[str]] = {}
        self.made: dict[str, list[str]] = {}
        self.used: set[str] = set()
        self.stored = False
        self.fills: set[str] = set()
        self.literal: set[str] = set()
        self.values: dict[str, float] = {}
        self.promotions: dict[int, list[str]] = {}
        self.written: dict[str, list[str]] = {}
        self.written_before_body: dict[str, list[str]] = {}
        self.out: dict[str, list[str]] = {}
        self.op_matched = {n for n in fused if self.facts.spells_op(n)}

    def run(self) -> dict[str, tuple[str, ...]]:
        for i, line in enumerate(self.facts.lines, start=1):
            self._step(i, line)
        self.facts.promote(self.promotions, self.out)
        self.facts.single_node(self.out, self.literal)
        return {key: tuple(v) for key, v in self.out.items()}

    def _step(self, i: int, line: KernelLine) -> None:
        hits = [n for n in self.fused if n in line.named]  # rule 6
        tmp = line.target
        # what the assigned tmp held before (C++ reuses names across loop bodies): dropped below
        # unless this line gives it a value of its own
        before = (self.made.get(tmp), self.loaded.get(tmp)) if tmp else (None, None)
        if tmp and tmp not in line.tmps:  # (`tmp3 = tmp3[:, None]` reads it)
            self.literal.discard(tmp)
            self.fills.discard(tmp)
            self.values.pop(tmp, None)
        _HANDLERS[line.kind](self, i, line, hits)
        if tmp and before[0] is not None and self.made.get(tmp) is before[0]:
            del self.made[tmp]
        if tmp and before[1] is not None and self.loaded.get(tmp) is before[1]:
            del self.loaded[tmp]
        if hits:
            self.out[str(i)] = list(dict.fromkeys(hits))

    def _other(self, i: int, line: KernelLine, hits: list[str]) -> None:
        """A line that is none of the kinds below: only the nodes it names (rule 6)."""

    def _loop(self, i: int, line: KernelLine, hits: list[str]) -> None:
        """A loop body recomputes what it needs afresh."""
        self.used = set()

    def _body(self, i: int, line: KernelLine, hits: list[str]) -> None:
        """A vectorised loop's main body: what its buffers hold now is what its tail reads too."""
        self.used, self.stored = set(), False
        self.written_before_body = dict(self.written)

    def _tail(self, i: int, line: KernelLine, hits: list[str]) -> None:
        """The loop's scalar tail computes the body's nodes again, over elements the body did not
        store: an in/out buffer holds there what it held before the body."""
        self.used, self.stored = set(), False
        self.written = dict(self.written_before_body)

    def _store(self, i: int, line: KernelLine, hits: list[str]) -> None:
        self.stored = True
        value = [t for t in line.stored if t in self.made or t in self.loaded]
        held = [n for t in value[-1:] for n in self.made.get(t, [])]
        copied = [n for t in value[-1:] for n in self.loaded.get(t, [])]
        hits += self.facts.store_node(held, copied, self.fused, self.op_matched)
        for p in line.store_pointers:  # a later load of it reads this value
            if p.startswith("in_out_") and hits:
                self.written[p] = list(hits)

    def _load(self, i: int, line: KernelLine, hits: list[str]) -> None:
        if self.stored:  # a load after a store starts another loop body
            self.used, self.stored = set(), False
        read = [n for p in line.pointers for n in self.written.get(p, self.args.get(p, ()))]
        gather = self._gather(line)
        tmp = line.target
        if gather is not None and read and not set(read) & self.facts.reads(gather):
            # the gather's input is computed here (nll_loss gathers `sub_1` of the logits):
            # Inductor moved its index into this load of what the input is computed from
            self.used.add(gather)
            self.facts.realize(gather)
            if tmp:
                self.loaded[tmp] = read
            read = [*read, gather]
        elif gather is not None:  # the load computes the gathered value (embedding lookup)
            self.used.add(gather)
            read = [gather]
            if tmp:
                self.made[tmp] = [gather]
        elif tmp:
            self.loaded[tmp] = read
        hits += read

    def _gather(self, line: KernelLine) -> str | None:
        """The fused node an indirect load computes (an embedding, an index), or Inductor's seed
        lookup where the load reads `load_seed_offset`."""
        if line.seed:
            ops: tuple[str, ...] = ("inductor_lookup_seed",)
        elif line.indirect:
            ops = GATHER_OPS
        else:
            return None
        return next((n for n in self.fused if n not in self.used and self.ops.get(n, "") in ops), None)

    def _multi(self, i: int, line: KernelLine, hits: list[str]) -> None:
        """`tmp3, tmp4, tmp5 = triton_helpers.welford(tmp2_mean, ...)`: the reduction its
        accumulators already carry, else the next one reading its operands."""
        made = self.made
        acc = [n for t in line.accumulators for n in made.get(t, made.get(t + "_next", []))]
        carried = [n for t in line.tmps for n in made.get(t) or self.loaded.get(t, [])]
        node = acc[-1] if acc else self._reduction_match(carried)
        if node is not None:
            self.used.add(node)
            hits.append(node)
            made.update({x: [node] for x in line.names})

    def _acc_start(self, i: int, line: KernelLine, hits: list[str]) -> None:
        """A looped reduction's accumulator starts as a constant (`_tmp3 = tl.full(...)`)."""
        self.literal.add(line.target or "")

    def _value(self, i: int, line: KernelLine, hits: list[str]) -> None:
        """A line that assigns one tmp a value: its kind's handler finds the node it computes."""
        tmp = line.target or ""
        # a literal, or a cast of one (`tmp3.to(tl.float32)`)
        lit = line.literal if line.literal is not None or not line.cast else self.values.get(line.operands[0])
        if lit is not None:
            self.values[tmp] = lit
        carried = [n for t in line.operands for n in self.made.get(t) or self.loaded.get(t, [])]
        node = _VALUE_HANDLERS[line.kind](self, i, line, carried, hits)
        if node is not None:
            self.used.add(node)
            hits.append(node)
            # twins (same op on the same values: sum_15 and sum_17 of one where_6) share a line
            facts = self.facts
            self.made[tmp] = [node, *facts.squares(node, line, self.used), *facts.twins(node, set())]
            hits += self.made[tmp][1:]
            self.used.update(self.made[tmp])

    def _fill(self, i: int, line: KernelLine, carried: list[str], hits: list[str]) -> str | None:
        self.fills.add(line.target or "")
        return None

    def _masked(self, i: int, line: KernelLine, carried: list[str], hits: list[str]) -> str | None:
        """`tl.where(mask, value, fill)` carries `value` on, as a broadcast does; with another
        value in place of a fill it selects (a cat's other branch): a compute line."""
        value, other = line.masked or ("", "")
        if other not in self.fills:
            return self._compute(i, line, carried, hits)
        mine = self.made.get(value, [])
        if mine:
            self.made[line.target or ""] = mine
        else:
            self.loaded[line.target or ""] = self.loaded.get(value, [])
        hits += mine
        return None

    def _reduction(self, i: int, line: KernelLine, carried: list[str], hits: list[str]) -> str | None:
        return self._reduction_match(carried)

    def _carry(self, i: int, line: KernelLine, carried: list[str], hits: list[str]) -> str | None:
        tmp = line.target or ""
        mine = [n for t in line.operands for n in self.made.get(t, [])][-1:]
        if mine:
            self.made[tmp] = mine
        elif all(t in self.literal for t in line.operands):
            self.literal.add(tmp)
        else:  # a loaded value broadcast: no line of this kernel's nodes (the load line is)
            self.loaded[tmp] = [n for t in line.operands for n in self.loaded.get(t, [])]
        hits += mine
        return None

    def _constant(self, i: int, line: KernelLine, carried: list[str], hits: list[str]) -> str | None:
        """A constant, or index arithmetic (`r0_1 + 512*x0`), or an iota."""
        node = self.facts.constant(line, i, self.used)
        if node is None or self.ops.get(node) != "iota":
            self.literal.add(line.target or "")  # a constant node's value is any op's scalar operand too
        return node

    def _compute(self, i: int, line: KernelLine, carried: list[str], hits: list[str]) -> str | None:
        tmp, operands = line.target or "", line.operands
        facts = self.facts
        if all(t in self.literal for t in operands) or (facts.strict and i not in facts.valued):
            self.literal.add(tmp)  # computed from literals / index variables alone, or an address
            return None
        sets = [set(self.made.get(t) or self.loaded.get(t, [])) for t in operands if t not in self.literal]
        # a literal operand (not a constant node's value, which the node reads) is a scalar
        lits = [self.values[t] for t in operands
                if t in self.literal and t in self.values and t not in self.made]  # fmt: skip
        if not facts.strict:  # no fragment to hold the line to: what its known operands say
            sets = [x for x in sets if x]
        if not all(sets):
            return None
        node = facts.op(line, i, self.used, sets, lits)
        if node is not None:
            return node
        # else an inner step of a node its operand already carries, else a reduction's own
        # first steps (`any` of a bool: `!= 0`)
        step = facts.inner(line, i, sets, lits)
        step = step if step is not None else facts.pre_reduction(line, i, self.used, sets)
        if step is not None:
            self.made[tmp] = [step]
            hits.append(step)
        elif line.cast:  # no convert node: a promotion
            self.promotions[i] = sorted(set().union(*sets))
            if any(t in self.made for t in operands):
                self.made[tmp] = [n for t in operands for n in self.made.get(t, [])]
            else:
                self.loaded[tmp] = [n for t in operands for n in self.loaded.get(t, [])]
        return None

    def _reduction_match(self, carried: list[str]) -> str | None:
        """A reduction step's node: the reduction its operand already carries (a looped
        reduction's accumulator, a split reduction's partial sums loaded back), else the next
        unused fused reduction that reads a node the operands carry (any, when they carry none)."""
        same = [n for n in carried if n in self.fused and self.ops.get(n) in REDUCTION_OPS]
        if same:
            return same[-1]
        for name in self.fused:
            if name in self.used or self.ops.get(name) not in REDUCTION_OPS:
                continue
            if not carried or set(carried) & self.node_inputs.get(name, set()):
                return name
        return None


# Tables of plain functions, not of the instance's bound methods: a marker holding its own bound
# methods is a reference cycle, and every kernel's marker (its facts, fragment and def-use sets
# with it) would then wait for the cyclic collector instead of being freed when the walk ends.
_HANDLERS: dict[str, _Handler] = {
    LOOP: LineMarker._loop, BODY: LineMarker._body, TAIL: LineMarker._tail,
    STORE: LineMarker._store, LOAD: LineMarker._load, MULTI: LineMarker._multi,
    ACC_START: LineMarker._acc_start, OTHER: LineMarker._other,
    # a line assigning one tmp a value: `_value`, then its kind's own handler below
    FILL: LineMarker._value, MASKED: LineMarker._value, REDUCTION: LineMarker._value,
    CARRY: LineMarker._value, CONSTANT: LineMarker._value, COMPUTE: LineMarker._value,
}  # fmt: skip
_VALUE_HANDLERS: dict[str, _ValueHandler] = {
    FILL: LineMarker._fill, MASKED: LineMarker._masked, REDUCTION: LineMarker._reduction,
    CARRY: LineMarker._carry, CONSTANT: LineMarker._constant, COMPUTE: LineMarker._compute,
}  # fmt: skip

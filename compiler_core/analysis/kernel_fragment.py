"""Inductor's `# Graph fragment:` comment above a generated kernel, and the dataflow of its lines.

Both the kernel-line marker (`kernel_lines`) and its test oracle
(`tests/compiler_core/analysis/kernel_line_oracle.py`) read these:
the fragment is Inductor's own record of what the kernel computes (the post-grad nodes lowered
into it with their arguments, the buffers it reads, the values it returns), and the def-use
chains of the kernel's `tmpN` lines (`Flow`) are what the code itself says flows where. Neither
is a heuristic of the marker, so sharing them keeps the check independent of how lines are
marked. Each side builds the chains its own way: the marker from its line kinds
(`kernel_line_kinds.def_use`, Triton through `ast`), the oracle from the text alone
(`kernel_line_oracle.text_flow`), and the tests hold the two equal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_DEF = re.compile(r"^(\w+) = async_compile\.\w+\('(\w+)'")
_PLACEHOLDER = re.compile(r"^#\s+%(\w+) : .*?= PlaceHolder\[target=(\w+)\]")
_DTYPE = re.compile(r'^#\s+%\w+ : Tensor "([a-z]+\d*)\[')
# Triton's dtype names → the fragment's (`tl.full([1, 1], 0, tl.int64)` is an `i64` constant)
TL_DTYPES = {"tl.float32": "f32", "tl.float16": "f16", "tl.bfloat16": "bf16", "tl.float64": "f64",
             "tl.int64": "i64", "tl.int32": "i32", "tl.int16": "i16", "tl.int8": "i8", "tl.int1": "b8",
             "tl.uint8": "u8"}  # fmt: skip
_CALL = re.compile(r"^#\s+%(\w+) : .*?= call_function\[target=([\w.]+)\]\((.*)\)\s*$")
_RETURN = re.compile(r"^#\s+return\s+(.*)$")
_REF = re.compile(r"%(\w+)")
_NUMBER = re.compile(r"(?<![\w.%])-?\d+(?:\.\d*)?(?:e[-+]?\d+)?|(?<![\w.])-?\b(?:inf|nan)\b")
_CONSTANT_OPS = {"full", "scalar_tensor", "iota", "arange", "zeros", "ones", "empty"}

# A literal line: `tl.full([1, 1], 0.1, tl.float32)`, `0.5`, `float("-inf")`.
_FULL = re.compile(r"^tl\.full\(\[[^\]]*\],\s*([^,]+),")
_BARE = re.compile(r"^\(?\s*(-?\d+(?:\.\d*)?(?:e[-+]?\d+)?)\s*\)?$|^float\(\"(-?inf|nan)\"\)$")
_LIT_CAST = re.compile(r"^\(?(tmp\d+)\)?\.to\([\w.]+\)$")


@dataclass
class Fragment:
    """Inductor's `# Graph fragment:` comment above one kernel definition."""

    placeholders: set[str] = field(default_factory=set)
    nodes: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)  # name -> (op, args)
    returns: set[str] = field(default_factory=set)
    constants: set[float] = field(default_factory=set)  # the literals of its constant-making nodes
    scalars: dict[str, set[float]] = field(default_factory=dict)  # name -> its numeric arguments
    dtypes: dict[str, str] = field(default_factory=dict)  # name -> `f32`, `i64`, `b8`, ...

    def identity(self, name: str) -> bool:
        """A node that lowers to no code: `pow(x, 1.0)` is `x` (Inductor's pow lowering), and
        integer `x + 0` / `x * 1` (index arithmetic on an iota, which sympy folds away)."""
        op, args = self.nodes.get(name, ("", ()))
        held = self.scalars.get(name)
        if op == "pow":
            return held == {1.0}
        integer = self.dtypes.get(name, "").startswith(("i", "u"))
        return (
            integer
            and len(args) == 1
            and ((op in ("add", "sub") and held == {0.0}) or (op == "mul" and held == {1.0}))
        )


def op_name(target: str) -> str:
    """`torch.ops.aten.mul.Tensor` / `aten.mul.Tensor` / `torch.ops.prims.convert_element_type.default`
    → `mul` / `convert_element_type`."""
    parts = target.replace("torch.ops.", "").split(".")
    if len(parts) >= 2 and parts[0] in ("aten", "prims", "inductor", "_inductor_test"):
        return parts[1]
    return parts[-1]


def numbers(text: str) -> set[float]:
    return {float(x) for x in _NUMBER.findall(text)}


def parse_fragment(comment: list[str]) -> Fragment:
    """One fragment from the comment lines above a kernel definition (any order)."""
    frag = Fragment()
    for line in comment:
        text = line.strip()
        if m := _PLACEHOLDER.match(text):
            frag.placeholders.add(m.group(1))
        elif m := _CALL.match(text):
            args = m.group(3).split("kwargs")[0]
            frag.nodes[m.group(1)] = (op_name(m.group(2)), tuple(_REF.findall(m.group(3))))
            frag.scalars[m.group(1)] = numbers(_REF.sub("", args))
            if d := _DTYPE.match(text):
                frag.dtypes[m.group(1)] = d.group(1)
            if frag.nodes[m.group(1)][0] in _CONSTANT_OPS:
                frag.constants.update(frag.scalars[m.group(1)])
        elif m := _RETURN.match(text):
            frag.returns.update(_REF.findall(m.group(1)))
    return frag


def fragments(output_code: str) -> dict[str, Fragment]:
    """Kernel name → its `Graph fragment`, read from the comment block above its definition
    (one pass over the output code)."""
    out: dict[str, Fragment] = {}
    comment: list[str] = []
    for line in output_code.split("\n"):
        if line.lstrip().startswith("#"):
            comment.append(line)
            continue
        m = _DEF.match(line)
        if m and comment:
            frag = parse_fragment(comment)
            if frag.nodes:
                out[m.group(1)] = frag
        comment = []
    return out


def literal_dtype(expr: str) -> str | None:
    """`tl.full([1, 1], 0, tl.int64)` → `i64`."""
    m = _FULL.match(expr)
    return TL_DTYPES.get(expr.rstrip(")").rsplit(",", 1)[-1].strip()) if m else None


def literal_value(expr: str, literals: dict[str, float]) -> float | None:
    """The value of a line that holds a literal (`tl.full([1, 1], 0.1, ...)`, `0.5`, a cast of
    another literal), else None."""
    m = _FULL.match(expr)
    text = m.group(1).strip() if m else None
    if text is None and (b := _BARE.match(expr)):
        text = b.group(1) or b.group(2)
    if text is not None:
        text = text.strip().removeprefix("float(").strip(")\"'")
        try:
            return float(text)
        except ValueError:
            return None
    c = _LIT_CAST.match(expr)
    return literals.get(c.group(1)) if c else None


@dataclass
class Flow:
    """Def-use chains of a kernel's `tmp` lines (1-based line numbers). `defs[i]` is the tmp
    line i assigns, `uses[i]` the defining lines of the tmps it reads as operands (a load's
    and a store's address and mask are no operand; nor is a random op's offset), `users[j]`
    the lines that read line j's value, `value` the stored expression's defining lines of a
    store line. Tmps are reassigned (`tmp3 = tmp3[:, None]`, a loop's `_tmp6`), so each use is
    resolved to the latest definition before it (a loop accumulator's first use: its start)."""

    defs: dict[int, str] = field(default_factory=dict)
    uses: dict[int, list[int]] = field(default_factory=dict)
    users: dict[int, list[int]] = field(default_factory=dict)
    value: dict[int, list[int]] = field(default_factory=dict)

    def valued(self) -> set[int]:
        """Lines a stored value or a reduction depends on (backwards through operands)."""
        out: set[int] = set()
        todo = [j for js in self.value.values() for j in js]
        while todo:
            j = todo.pop()
            if j not in out:
                out.add(j)
                todo.extend(self.uses.get(j, ()))
        return out

    def into_reduction(self, reduction_lines: set[int]) -> set[int]:
        """Lines whose value reaches a reduction line through non-reduction lines."""
        out: set[int] = set()
        todo = [j for r in reduction_lines for j in self.uses.get(r, ()) if j not in reduction_lines]
        while todo:
            j = todo.pop()
            if j not in out:
                out.add(j)
                todo.extend(x for x in self.uses.get(j, ()) if x not in reduction_lines)
        return out


def statements(source: list[str]) -> list[str]:
    """`source` with each statement that spans lines (`welford_reduce(` and its arguments on the
    next lines) joined onto its first line, and its continuation lines emptied: line numbers
    stay, and a line's operands are all on it."""
    out = list(source)
    i = 0
    while i < len(out):
        if not out[i].endswith(("(", ",")):  # (a statement that goes on ends its line so)
            i += 1
            continue
        depth = out[i].count("(") - out[i].count(")")
        j = i
        while depth > 0 and j + 1 < len(out):
            j += 1
            depth += out[j].count("(") - out[j].count(")")
            out[i] += " " + out[j].strip()
            out[j] = ""
        i = j + 1
    return out


def stored_value(line: str) -> str:
    """The stored expression: `tl.store(ptr, VALUE, mask)`, C++ `VALUE.store(ptr)` / `ptr[i] = VALUE`."""
    if "tl.store(" in line:
        depth, parts, cur = 0, [], ""
        for ch in line.split("tl.store(", 1)[1]:
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                if depth == 0:
                    break
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        parts.append(cur)
        return parts[1] if len(parts) > 1 else ""
    if ".store(" in line:
        return line.split(".store(", 1)[0]
    return line.split("=", 1)[1] if "=" in line else line

"""What kind of line each statement of a generated kernel is, and what it reads and writes.

The kernel-line marker (`kernel_line_marker`) is a state machine with one handler per kind of
line; this module decides the kind. A Triton kernel is Python, so its statements are read with
`ast`: which `tmp` a line assigns, which `tmp`s its value reads (a random op's offset left out),
whether it loads or stores and through which pointer parameters, and what it defines and
reads in the kernel's def-use chains (`def_use`; names are matched whole, never searched for in
the text), and what its value spells: the op forms of `kernel_op_spellings` (a `BinOp` of `Mult`
spells ` * `, a call of `tl_math.exp` spells `exp`), its names, its literal numbers, the value
and dtype of a literal, and the names the line refers to (rule 6 of `kernel_lines`). A C++
kernel (and any other non-Python kernel) is read with regular expressions over its text. Both
give the same `KernelLine`, so the marker never asks which language it reads, nor reads `text`
or `expr` (kept as written, for display and tests).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace
from functools import lru_cache

from compiler_core.analysis.kernel_fragment import (
    TL_DTYPES,
    Flow,
    literal_dtype,
    literal_value,
    numbers,
    statements,
    stored_value,
)
from compiler_core.analysis.kernel_op_spellings import SPELLING_FORMS

TMP = re.compile(r"\b_?tmp\d+\b")  # `_tmpN`: a looped reduction's accumulator
PTR = re.compile(r"\b((?:in_out|in|out)_ptr\d+)\b")

# C++: the same facts from the text of a line.
# A vectorised loop's main body and its scalar tail: the same code over other elements.
_BODY = re.compile(r"^\s*if\s*\(\s*C10_LIKELY\(")
_TAIL = re.compile(r"^\s*if\s*\(\s*C10_UNLIKELY\(")
_ASSIGN = re.compile(r"^\s*(?:auto |[\w:<>]+ )?(_?tmp\d+)\s*=\s*(.*?);?\s*$")
_STORE = re.compile(r"\.store\(|\b(?:in_out|out)_ptr\d+\s*\[[^\]]*\]\s*=")
_LOAD = re.compile(r"loadu\(|\b(?:in_out|in)_ptr\d+\s*\[")
# A reduction step: an update of a `tmp_acc` accumulator, a `welford_` helper.
_REDUCTION = re.compile(r"\b_tmp\d+\b|\btmp_acc\d+|welford_\w+\(")
# A vector splat of one value moves it without computing one; so does a plain copy.
_CARRY = re.compile(r"^(?:\(?_?tmp\d+\)?|at::vec::Vectorized<\w+>\(tmp\d+\))$")
_CAST = re.compile(r"^\(?tmp\d+\)?\.to\([\w.]+\)$")
# An expression of index variables and literals alone (`x0`, `r0_1 + 512*x0`, `(-32) + x2`).
_INDEX = re.compile(r"^[\sxyzr0-9_+\-*/%()]*\b[xyzr]\w*\b[\sxyzr0-9_+\-*/%()]*$")
# Def-use names: a `tmp` and its named accumulators.
_NAMED = re.compile(r"^\s*(_?tmp\d+_\w+)\s*=\s*(.*?);?\s*$")
_TUPLE = re.compile(r"^\s*(_?tmp\w+(?:,\s*_?tmp\w+)+)\s*=\s*(.*)$")
_USE = re.compile(r"\b_?tmp\d+(?:_[a-z0-9_]+)?\b")
_WORD = re.compile(r"\w+")
# A name the line refers to: a whole word, not an attribute (`.where`) nor a call (`where(`).
_REFERENCE = re.compile(r"(?<![.\w])\w+\b(?!\s*\()")

# Triton names, for the `ast` reading.
_TMP_NAME = re.compile(r"_?tmp\d+")
_PLAIN_TMP = re.compile(r"tmp\d+")
_ACCUMULATOR = re.compile(r"_tmp\d+|tmp_acc\d+\w*")
_PTR_NAME = re.compile(r"(?:in_out|in|out)_ptr\d+")
_MULTI_NAME = re.compile(r"_?tmp\w+")
_ACC_NAME = re.compile(r"_?tmp\d+_\w+")
_DEF_NAME = re.compile(r"_?tmp\d+(?:_\w+)?")
_USE_NAME = re.compile(r"_?tmp\d+(?:_[a-z0-9_]+)?")
_SEED = re.compile(r"load_seed_offset")
_INDEX_VARIABLE = re.compile(r"[xyzr][0-9_]*|[xyzr]\w*index")
_INDEX_NODES = (ast.BinOp, ast.UnaryOp, ast.Load, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod,
                ast.USub, ast.UAdd)  # fmt: skip
_TL_REDUCTIONS = {"sum", "max", "min", "reduce", "argmax", "argmin", "prod", "xor_sum"}
_HELPER_REDUCTION = re.compile(r"\w*(?:max2|min2|prod|welford|online_softmax|any)\w*")
_HELPER_MULTI = re.compile(r"\w*(?:welford|online_softmax)\w*")
_RANDOM = {("tl", "rand"), ("tl", "randn"), ("triton_helpers", "randint64"), ("tl", "randint")}
# The op forms (`SPELLING_FORMS`) an operator spells, and those that are names (`maximum`).
_OPERATOR_FORMS: dict[type, str] = {
    ast.Add: " + ", ast.Sub: " - ", ast.Mult: " * ", ast.Div: " / ", ast.BitAnd: " & ", ast.BitOr: " | ",
    ast.LtE: " <= ", ast.Lt: " < ", ast.GtE: " >= ", ast.Gt: " > ", ast.Eq: " == ", ast.NotEq: " != ",
}  # fmt: skip
_NAME_FORMS = tuple(f for f in SPELLING_FORMS if f.isidentifier())

# The kinds, in the order a line is tried against them.
LOOP, BODY, TAIL = "loop", "body", "tail"
STORE, LOAD, MULTI, ACC_START = "store", "load", "multi", "acc_start"
FILL, MASKED, REDUCTION, CARRY, CONSTANT, COMPUTE, OTHER = (
    "fill", "masked", "reduction", "carry", "constant", "compute", "other"
)


@dataclass(frozen=True)
class KernelLine:
    """One statement of a kernel (a statement spanning lines sits on its first line).

    `kind` is the first of, in order: `loop` (a loop body starts), `body` and `tail` (C++: a
    vectorised loop's main body, and its tail over the elements the body left), `store`,
    `load`, `multi` (a welford or online-softmax step's several results), `acc_start` (a looped
    reduction's accumulator set to a constant), then for a line assigning one `tmp`: `fill` (a masked load's
    fill), `masked` (`tl.where(mask, value, other)`), `reduction`, `carry` (a broadcast, a
    reduction's mask, a copy), `constant` (no `tmp` operand) or `compute`; else `other`."""

    text: str
    kind: str = OTHER
    target: str | None = None  # the one `tmp` the line assigns
    expr: str = ""  # the assigned value as written
    tmps: tuple[str, ...] = ()  # every `tmp` the value names, in order, repeats kept
    operands: tuple[str, ...] = ()  # those that are operands (a random op's offset is a position)
    names: tuple[str, ...] = ()  # `multi`: the results; its accumulators are `accumulators`
    accumulators: tuple[str, ...] = ()
    pointers: tuple[str, ...] = ()  # pointer parameters the line names, in order
    store_pointers: tuple[str, ...] = ()  # `store`: the pointer it stores through
    stored: tuple[str, ...] = ()  # `store`: the `tmp`s of the stored value
    indirect: bool = False  # `load`: its address holds a `tmp` (a gather)
    seed: bool = False  # `load`: Inductor's seed lookup (`in_ptr0 + load_seed_offset`)
    masked: tuple[str, str] | None = None  # `masked`: (value, other)
    reduces: bool = False  # the value is a reduction step (for any assignment, named or not)
    carries: bool = False  # the value only moves another value
    # Def-use, named accumulators (`_tmp3_max_next`) included: what the line defines, and what
    # its value (a store's: the stored value; a load's: nothing) reads.
    defines: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    cast: bool = False  # the value is one `tmp` cast to a dtype (`tmp3.to(tl.float32)`)
    index: bool = False  # the value is index arithmetic: index variables and literals alone
    # What a value spells: the op forms of `kernel_op_spellings` (` + `, `maximum`, `.to(`), the
    # names it writes (`tl`, `exp`, `tmp3`), its literal numbers, and for a literal (`0.5`,
    # `tl.full([1], 0, tl.int64)`) its value and dtype (`i64`).
    spells: frozenset[str] = frozenset()
    words: frozenset[str] = frozenset()
    numbers: frozenset[float] = frozenset()
    literal: float | None = None
    dtype: str | None = None
    # Names the line refers to: its variables (not a call, an attribute, a keyword or a parameter).
    named: frozenset[str] = frozenset()


def def_use(lines: tuple[KernelLine, ...]) -> Flow:
    """The def-use chains of a kernel's lines, from what each line defines and reads (the test
    oracle reads the same chains from the text alone, `kernel_line_oracle.text_flow`): each use
    resolved to the latest definition before it; a store's value is its stored expression's; a
    load's address and mask are no operand."""
    flow = Flow()
    latest: dict[str, int] = {}
    for i, line in enumerate(lines, start=1):
        if "tmp" not in line.text:
            continue
        if line.kind == STORE:
            flow.value[i] = [latest[t] for t in line.reads if t in latest]
            for j in flow.value[i]:
                flow.users.setdefault(j, []).append(i)
            continue
        if not line.defines:
            continue
        if line.kind != LOAD:
            flow.uses[i] = [latest[t] for t in line.reads if t in latest]
            for j in flow.uses[i]:
                flow.users.setdefault(j, []).append(i)
        for t in line.defines:
            latest[t] = i
        flow.defs[i] = line.defines[0]
    return flow


def read_lines(source: str, language: str) -> tuple[KernelLine, ...]:
    """The kernel's statements as `KernelLine`s, one per source line (1-based: entry i-1 is
    line i); continuation lines of a statement are empty lines."""
    return _read_lines(source, language == "triton")


@lru_cache(maxsize=128)  # (the call walk reads a kernel's lines again right after marking them)
def _read_lines(source: str, python: bool) -> tuple[KernelLine, ...]:
    read = _triton_line if python else _cpp_line
    return tuple(read(line) for line in statements(source.split("\n")))


def _kind_of_value(target: str, tmps: tuple[str, ...], operands: tuple[str, ...], fill: bool,
                   masked: tuple[str, str] | None, reduces: bool, carries: bool) -> str:  # fmt: skip
    """The kind of a line that assigns `target` one value, tried in the marker's order."""
    if target.startswith("_") and not tmps:
        return ACC_START
    if fill:
        return FILL
    if masked is not None:
        return MASKED
    if reduces:
        return REDUCTION
    if carries:
        return CARRY
    return COMPUTE if operands else CONSTANT


# ---- C++: regular expressions over the line's text ----------------------------------------


def _cpp_line(text: str) -> KernelLine:
    """A C++ (or other non-Python) statement read from its text."""
    pointers = tuple(PTR.findall(text))
    named = frozenset(_REFERENCE.findall(text))
    if text.lstrip().startswith("for "):
        return KernelLine(text, LOOP, pointers=pointers, named=named)
    if _BODY.match(text):
        return KernelLine(text, BODY, named=named)
    if _TAIL.match(text):
        return KernelLine(text, TAIL, named=named)
    m = _ASSIGN.match(text)
    target, expr = (m.group(1), m.group(2)) if m else (None, "")
    line = KernelLine(text, target=target, expr=expr, tmps=tuple(TMP.findall(expr)), pointers=pointers,
                      named=named)  # fmt: skip
    if _STORE.search(text):
        return replace(line, kind=STORE, store_pointers=tuple(PTR.findall(text.split(",", 1)[0])),
                       stored=tuple(TMP.findall(stored_value(text))),
                       reads=tuple(_USE.findall(stored_value(text))))  # fmt: skip
    defined = m or _NAMED.match(text)
    tup = None if defined else _TUPLE.match(text)
    if defined is not None:
        line = replace(line, defines=(defined.group(1),), reads=tuple(_USE.findall(defined.group(2))))
    elif tup is not None:
        names = tuple(x.strip() for x in tup.group(1).split(","))
        line = replace(line, defines=names, reads=tuple(_USE.findall(tup.group(2))))
    if _LOAD.search(text):
        index = text.split("+", 1)[1] if "+" in text else ""
        return replace(line, kind=LOAD, indirect=bool(TMP.search(index)), reads=())
    if target is None:
        return replace(line, reduces=bool(_REDUCTION.search(text.split("=", 1)[-1])))
    reduces, carries = bool(_REDUCTION.search(expr)), bool(_CARRY.match(expr))
    kind = _kind_of_value(target, line.tmps, line.tmps, False, None, reduces, carries)
    return replace(line, kind=kind, operands=line.tmps, reduces=reduces, carries=carries,
                   cast=bool(_CAST.match(expr)), index=bool(_INDEX.match(expr)),
                   spells=frozenset(f for f in SPELLING_FORMS if f in expr),
                   words=frozenset(_WORD.findall(expr)), numbers=frozenset(numbers(expr)),
                   literal=literal_value(expr, {}), dtype=literal_dtype(expr))  # fmt: skip


# ---- Triton: the statement's syntax tree -----------------------------------------------------


@lru_cache(maxsize=16384)
def _triton_line(text: str) -> KernelLine:
    """A Triton statement read through `ast` (cached: kernels deduplicated across graphs and a
    deep model's layers repeat the same lines)."""
    stripped = text.strip()
    if stripped.startswith("@"):  # the decorator's keywords (`DeviceProperties(index=0)`) name no node
        return KernelLine(text)
    tree = _parse(stripped)
    nodes = list(ast.walk(tree)) if tree is not None else []
    named = _named(nodes)
    if stripped.startswith("for "):
        return KernelLine(text, LOOP, named=named)
    if tree is None or stripped.startswith(("@", "def ", "import ", "from ")):
        return KernelLine(text, named=named)
    if "tmp" not in stripped and "_ptr" not in stripped:  # index arithmetic, masks: nothing to read
        return KernelLine(text, named=named)
    st = _Statement(tree, nodes)
    pointers = st.names(st.tree, _PTR_NAME)
    store = st.call(st.tree, ("tl", "store"))
    if store is not None:
        args = store.args
        return KernelLine(text, STORE, pointers=pointers,
                          store_pointers=st.names(args[0], _PTR_NAME) if args else (),
                          stored=st.names(args[1], _TMP_NAME) if len(args) > 1 else (),
                          reads=st.names(args[1], _USE_NAME) if len(args) > 1 else (),
                          named=named)  # fmt: skip
    if not isinstance(st.tree, ast.Assign) or len(st.tree.targets) != 1:
        return KernelLine(text, pointers=pointers, named=named)
    value, lhs = st.tree.value, st.tree.targets[0]
    defines = _defines(lhs)
    random = isinstance(value, ast.Call) and _dotted(value.func) in _RANDOM
    # (a random op's offset is a position, not a value it reads)
    read_tree = value.args[0] if random and isinstance(value, ast.Call) and value.args else value
    reads = st.names(read_tree, _USE_NAME) if defines else ()
    # (columns count UTF-8 bytes: slicing by them is right for the ASCII Inductor writes)
    expr = stripped[value.col_offset : value.end_col_offset] if stripped.isascii() else \
        ast.get_source_segment(stripped, value) or ""  # fmt: skip
    tmps = st.names(value, _TMP_NAME)
    target = lhs.id if isinstance(lhs, ast.Name) and _TMP_NAME.fullmatch(lhs.id) else None
    load = st.call(value, ("tl", "load"))
    if load is not None:
        address = load.args[0] if load.args else None
        seed = "load_seed_offset" in st.names(load, _SEED)
        return KernelLine(text, LOAD, target=target, expr=expr, tmps=tmps, pointers=pointers, seed=seed,
                          indirect=address is not None and bool(st.names(address, _TMP_NAME)),
                          defines=defines, named=named)  # fmt: skip
    reduces = st.reduces(value)
    if isinstance(lhs, ast.Tuple) and len(lhs.elts) > 1 and _is_multi(lhs, value):
        names = tuple(e.id for e in lhs.elts if isinstance(e, ast.Name))
        return KernelLine(text, MULTI, expr=expr, tmps=tmps, names=names, pointers=pointers,
                          accumulators=st.names(value, _ACC_NAME), reduces=True, defines=defines,
                          reads=reads, named=named)  # fmt: skip
    if target is None:
        return KernelLine(text, pointers=pointers, reduces=reduces, defines=defines, reads=reads, named=named)
    operands = st.names(read_tree, _TMP_NAME) if random else tmps
    pair = _masked(value)
    carries = _carries(value)
    fill = _fill(value)
    kind = _kind_of_value(target, tmps, operands, fill, pair, reduces, carries)
    value_nodes = st.within(value)
    words = _words(value_nodes)
    literal, dtype = _literal(value)
    return KernelLine(text, kind, target=target, expr=expr, tmps=tmps, operands=operands,
                      pointers=pointers, masked=pair, reduces=reduces, carries=carries, defines=defines,
                      reads=reads, cast=_cast(value), index=_index(value), spells=_spells(value_nodes, words),
                      words=words, numbers=_numbers(value_nodes), literal=literal, dtype=dtype,
                      named=named)  # fmt: skip


def _parse(stripped: str) -> ast.stmt | None:
    """One statement's tree; a `for` or `def` header with an empty body."""
    if not stripped or stripped.startswith("#"):
        return None
    source = stripped + (" pass" if stripped.endswith(":") else "")
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return None
    return body[0] if len(body) == 1 else None


def _named(nodes: list[ast.AST]) -> frozenset[str]:
    """The names a statement (its nodes) refers to: its variables (not those it calls). An
    attribute (`tl.where`), a keyword (`index=0`) or a parameter is no reference to a node."""
    called: set[int] = set()
    out: set[str] = set()
    for n in nodes:  # (breadth first: a call before its function)
        if isinstance(n, ast.Call):
            called.add(id(n.func))
        elif isinstance(n, ast.Name) and id(n) not in called:
            out.add(n.id)
    return frozenset(out)


def _words(value: list[ast.AST]) -> frozenset[str]:
    """The names a value (its nodes) writes: variables, attributes (`exp` of `tl_math.exp`),
    keywords."""
    out: set[str] = set()
    for n in value:
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.keyword) and n.arg:
            out.add(n.arg)
    return frozenset(out)


def _spells(value: list[ast.AST], words: frozenset[str]) -> frozenset[str]:
    """The op forms (`kernel_op_spellings.SPELLING_FORMS`) the value (its nodes) spells: its
    operators, the names in it (`maximum` in `triton_helpers.maximum`), `1 / x`, `x == 0`, a
    negation, a `tl.full`, a `tl.where` on a computed condition, a cast (`.to(`)."""
    out = {f for f in _NAME_FORMS if any(f in w for w in words)}
    for n in value:
        if isinstance(n, ast.BinOp):
            out.add(_OPERATOR_FORMS.get(type(n.op), ""))
            if isinstance(n.op, ast.Div) and _number(n.left) == 1.0:
                out.add("1 / ")
        elif isinstance(n, ast.Compare):
            out.update(_OPERATOR_FORMS.get(type(o), "") for o in n.ops)
            pairs = zip(n.ops, n.comparators, strict=True)
            if any(isinstance(o, ast.Eq) and _number(c) == 0.0 for o, c in pairs):
                out.add("== 0")
        elif isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub) and _number(n.operand) is None:
            out.add("-tmp" if _starts_with_tmp(n.operand) else "-(")  # a negation
        elif isinstance(n, ast.Call):
            name = _dotted(n.func)
            if name == ("tl", "full"):
                out.add("tl.full(")
            elif name == ("tl", "where") and n.args and _starts_with_tmp(n.args[0]):
                out.add("tl.where(tmp")
            elif isinstance(n.func, ast.Attribute) and n.func.attr == "to":
                out.add(".to(")
    return frozenset(out) & SPELLING_FORMS


def _number(node: ast.expr) -> float | None:
    """A literal number: `0.5`, `-1`, `float("-inf")`."""
    value = node.value if isinstance(node, ast.Constant) else None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float":
        arg = node.args[0] if len(node.args) == 1 and not node.keywords else None
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            try:
                return float(arg.value)
            except ValueError:
                return None
    return None


def _numbers(value: list[ast.AST]) -> frozenset[float]:
    """The literal numbers in a value (its nodes, breadth first: `-1` once, as -1)."""
    out: set[float] = set()
    inside: set[int] = set()
    for n in value:  # (a number before its parts)
        if id(n) not in inside and isinstance(n, ast.expr) and (v := _number(n)) is not None:
            out.add(v)
            inside.update(id(x) for x in ast.walk(n))
    return frozenset(out)


def _literal(value: ast.expr) -> tuple[float | None, str | None]:
    """A literal's value and dtype: `tl.full([1], 0, tl.int64)` → (0.0, `i64`), `0.5` → (0.5, None)."""
    if isinstance(value, ast.Call) and _dotted(value.func) == ("tl", "full"):
        args = value.args
        if len(args) < 3 or not isinstance(args[0], ast.List):
            return None, None
        dtype = None if value.keywords else TL_DTYPES.get(_dotted_name(args[-1]) or "")
        return _number(args[1]), dtype
    return _number(value), None


def _dotted_name(node: ast.expr) -> str | None:
    """`tl.int64` → "tl.int64"."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted_name(node.value)
        return f"{head}.{node.attr}" if head is not None else None
    return None


def _starts_with_tmp(node: ast.expr) -> bool:
    """The expression, as written, starts with a `tmp` (`tmp3 & xmask`, `tmp2.to(tl.int1)`)."""
    while True:
        if isinstance(node, ast.BinOp | ast.Compare):
            node = node.left
        elif isinstance(node, ast.BoolOp):
            node = node.values[0]
        elif isinstance(node, ast.Attribute | ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return isinstance(node, ast.Name) and node.id.startswith("tmp")


def _cast(value: ast.expr) -> bool:
    """`tmpN.to(tl.float32)`: one `tmp` cast to a dtype."""
    func = value.func if isinstance(value, ast.Call) else None
    if not (isinstance(value, ast.Call) and isinstance(func, ast.Attribute) and func.attr == "to"):
        return False
    if len(value.args) != 1 or value.keywords or not _is_tmp(func.value):
        return False
    dtype = value.args[0]
    while isinstance(dtype, ast.Attribute):
        dtype = dtype.value
    return isinstance(dtype, ast.Name)


def _index(value: ast.expr) -> bool:
    """Index arithmetic (`x0`, `r0_1 + 512*x0`, `(-32) + x2`): index variables and integer
    literals under + - * / // %, at least one variable."""
    variables = 0
    for node in ast.walk(value):
        if isinstance(node, ast.Name):
            if not _INDEX_VARIABLE.fullmatch(node.id):
                return False
            variables += 1
        elif isinstance(node, ast.Constant):
            if type(node.value) is not int:
                return False
        elif not isinstance(node, _INDEX_NODES):
            return False
    return variables > 0


def _defines(lhs: ast.expr) -> tuple[str, ...]:
    """The names an assignment defines in the def-use chains: one `tmp` or named accumulator
    (`_tmp3_max`), or a tuple of them (a welford step's results)."""
    if isinstance(lhs, ast.Name):
        return (lhs.id,) if _DEF_NAME.fullmatch(lhs.id) else ()
    if isinstance(lhs, ast.Tuple) and len(lhs.elts) > 1:
        names = [e.id for e in lhs.elts if isinstance(e, ast.Name) and _MULTI_NAME.fullmatch(e.id)]
        return tuple(names) if len(names) == len(lhs.elts) else ()
    return ()


class _Statement:
    """One statement's tree, walked once: its names in source order and its calls. The statement
    is on one line (`statements` joins the lines of one that spans several), so a subtree's
    names are those within its columns."""

    def __init__(self, tree: ast.stmt, nodes: list[ast.AST]) -> None:
        self.tree = tree
        self._nodes = nodes
        self._names = sorted((n for n in nodes if isinstance(n, ast.Name)), key=lambda n: n.col_offset)
        self._calls = [n for n in nodes if isinstance(n, ast.Call)]

    def within(self, tree: ast.expr) -> list[ast.AST]:
        """The nodes of `tree` that have a position (expressions, keywords), breadth first."""
        lo, hi = _span(tree)
        return [n for n in self._nodes if lo <= getattr(n, "col_offset", -1) < hi]

    def names(self, tree: ast.AST, pattern: re.Pattern[str]) -> tuple[str, ...]:
        """Names in `tree` that `pattern` matches whole, in source order, repeats kept."""
        lo, hi = _span(tree)
        return tuple(n.id for n in self._names if lo <= n.col_offset < hi and pattern.fullmatch(n.id))

    def call(self, tree: ast.AST, func: tuple[str, str]) -> ast.Call | None:
        """The first call of `func` (`("tl", "load")`) in `tree`."""
        lo, hi = _span(tree)
        return next((c for c in self._calls if lo <= c.col_offset < hi and _dotted(c.func) == func), None)

    def reduces(self, value: ast.expr) -> bool:
        """A reduction step: `tl.sum(...)`, a `triton_helpers` max2/welford/online-softmax/any
        helper, or an update of a looped reduction's `_tmpN` accumulator."""
        lo, hi = _span(value)
        for c in self._calls:
            name = _dotted(c.func) if lo <= c.col_offset < hi else None
            if name is not None and name[0] == "tl" and name[1] in _TL_REDUCTIONS:
                return True
            if name is not None and name[0] == "triton_helpers" and _HELPER_REDUCTION.fullmatch(name[1]):
                return True
        return bool(self.names(value, _ACCUMULATOR))


def _span(tree: ast.AST) -> tuple[int, int]:
    if isinstance(tree, ast.stmt | ast.expr):
        return tree.col_offset, tree.end_col_offset or tree.col_offset
    return 0, 1 << 30


def _dotted(func: ast.expr) -> tuple[str, str] | None:
    """`tl.load` → ("tl", "load"); anything else → None."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.value.id, func.attr
    return None


def _is_multi(lhs: ast.Tuple, value: ast.expr) -> bool:
    names = all(isinstance(e, ast.Name) and _MULTI_NAME.fullmatch(e.id) for e in lhs.elts)
    helper = _dotted(value.func) if isinstance(value, ast.Call) else None
    return names and helper is not None and helper[0] == "triton_helpers" and bool(
        _HELPER_MULTI.fullmatch(helper[1])
    )


def _is_tmp(node: ast.expr, underscore: bool = False) -> bool:
    """A `tmpN` name (`_tmpN` too, with `underscore`)."""
    pattern = _TMP_NAME if underscore else _PLAIN_TMP
    return isinstance(node, ast.Name) and bool(pattern.fullmatch(node.id))


def _fill(value: ast.expr) -> bool:
    """`tl.full(tmpN.shape, ...)`: the value a masked load gives where its mask is off."""
    if not (isinstance(value, ast.Call) and _dotted(value.func) == ("tl", "full") and value.args):
        return False
    shape = value.args[0]
    return isinstance(shape, ast.Attribute) and shape.attr == "shape" and _is_tmp(shape.value)


def _masked(value: ast.expr) -> tuple[str, str] | None:
    """`tl.where(tmpM, tmpV, tmpO)` → (tmpV, tmpO)."""
    if not (isinstance(value, ast.Call) and _dotted(value.func) == ("tl", "where")):
        return None
    args = value.args
    if len(args) != 3 or value.keywords or not all(_is_tmp(a) for a in args):
        return None
    return args[1].id, args[2].id  # type: ignore[attr-defined]


def _carries(value: ast.expr) -> bool:
    """A broadcast, a reduction's mask (`tl.where(xmask, ...)`: its condition does not start
    with a `tmp`), a plain copy or a `[:, None]` reshape of one `tmp`."""
    if isinstance(value, ast.Call):
        name = _dotted(value.func)
        if name == ("tl", "broadcast_to"):
            return True
        if name == ("tl", "where") and value.args:
            return not _starts_with_tmp(value.args[0])
        return False
    if isinstance(value, ast.Subscript):
        index = value.slice.elts if isinstance(value.slice, ast.Tuple) else [value.slice]
        plain = all(
            (isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None)
            or (isinstance(e, ast.Constant) and e.value is None)
            for e in index
        )
        return plain and _is_tmp(value.value, underscore=True)
    return _is_tmp(value, underscore=True)

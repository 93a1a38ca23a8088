"""Parse FX `print_readable` text (what the trace logs carry) into session `Graph`s.

The text is regular enough to read line by line: a `def forward(self, <params>):` header (on one
line or one parameter per line), then one statement per line at the body's indentation, each
optionally annotated with `"f32[4, 16][16, 1]cpu"`. `# File: path:line in fn, code: ...` comments
give the user source of the statements that follow. Nested `class ...` blocks (HOP subgraphs)
sit at a shallower indentation and end the top-level body; they are not parsed as separate graphs.
Only what the text states is recorded: module paths and seq_nr come from enrichment, not here.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from compiler_core.session.model import Dim, Graph, Node, SourceLoc, TensorMeta
from compiler_core.session.vocab import GraphKind

_DTYPES = {
    "f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16", "i64": "int64",
    "i32": "int32", "i16": "int16", "i8": "int8", "u8": "uint8", "u16": "uint16", "u32": "uint32",
    "u64": "uint64", "b8": "bool", "c64": "complex64", "c128": "complex128", "c32": "complex32",
    "f8e4m3fn": "float8_e4m3fn", "f8e5m2": "float8_e5m2", "f8e4m3fnuz": "float8_e4m3fnuz",
    "f8e5m2fnuz": "float8_e5m2fnuz",
}  # fmt: skip
_ANNOT = re.compile(r"^([a-z]+\d*[a-z0-9]*)\[([^\]]*)\]\[([^\]]*)\](.*)$")
_STMT = re.compile(r'^([A-Za-z_]\w*)(?:\s*:\s*"([^"]*)")?\s*=\s*(.*)$')
_PARAM = re.compile(r'(\*?[A-Za-z_]\w*)\s*(?::\s*"([^"]*)")?\s*,?[ \t]*(?:#\s*([^\n]*))?')
_DECL = re.compile(r'^([A-Za-z_]\w*)\s*:\s*"([^"]*)"\s*(?:#\s*(.*))?$')
# torch 2.15 prefixes a backward node's (its forward node's) location: `# Backward of forward node: File: ...`
_FILE = re.compile(r"^#\s*(?:Backward of forward node:\s*)?File:\s*(.*?):(\d+) in ([^,]*)(?:, code: (.*))?$")
_IDENT = re.compile(r"(?<![\w.'\"])([A-Za-z_]\w*)\b(?!\s*=[^=])")
_CALL = re.compile(r"^([A-Za-z_][\w.]*)\((.*)\)$", re.S)
_GETITEM = re.compile(r"^([A-Za-z_]\w*)\[(-?\d+)\]$")
_DEAD_TAIL = re.compile(r";\s+[\w\s=]*= None$")
# `out_27 += out_19;  out_28: "f32[...]" = out_27;  out_27 = out_19 = None`: FX prints an in-place
# operator node as the augmented assignment, then binds the node's own name to the result.
_AUG = re.compile(r"^([A-Za-z_]\w*)\s*(\*\*|//|<<|>>|[-+*/@%&|^])=\s*(.+?);"
                  r'\s+([A-Za-z_]\w*)(?:\s*:\s*"([^"]*)")?\s*=\s*\1\s*$')
_AUG_OPS = {"+": "iadd", "-": "isub", "*": "imul", "/": "itruediv", "//": "ifloordiv", "**": "ipow",
            "@": "imatmul", "%": "imod", "&": "iand", "|": "ior", "^": "ixor", "<<": "ilshift",
            ">>": "irshift"}  # fmt: skip


@cache
def parse_annotation(text: str) -> TensorMeta | None:
    """`"f32[4, s0][s0, 1]cuda:0"` -> TensorMeta; None for `Sym(...)` and unknown forms.

    Cached: a deep model repeats a few hundred annotations over 30k nodes, and sharing the frozen
    TensorMeta lets the codec store each once."""
    m = _ANNOT.match(text.strip())
    if not m:
        return None
    short, shape, stride, device = m.groups()
    return TensorMeta(_dims(shape), _DTYPES.get(short, short), _dims(stride), device.strip())


def _dims(text: str) -> tuple[Dim, ...]:
    out: list[Dim] = []
    for part in text.split(","):
        part = part.strip()
        if part:
            out.append(int(part) if part.lstrip("-").isdigit() else part)
    return tuple(out)


@dataclass
class _State:
    nodes: list[Node] = field(default_factory=list)
    names: set[str] = field(default_factory=set)
    aliases: dict[str, str] = field(default_factory=dict)  # forward() parameter -> placeholder name
    params: dict[str, list[int]] = field(default_factory=dict)  # placeholder name -> its positions
    source: SourceLoc | None = None
    sources: dict[str, SourceLoc | None] = field(default_factory=dict)  # `# File:` text -> its loc
    idents: Callable[[str], list[str]] = _IDENT.findall  # `_IDENT.findall`, or its ASCII twin's


# The statement nearly every line of a deep graph is: `name: "annot" = fn(args);  a = b = None`
# with nothing quoted in the arguments but single-quoted device strings, no comment, no `;`
# inside. One match gives the node's every part; anything else takes the general path below,
# which gives the same node for these lines (tests/compiler_core/trace/test_fx_fast_path.py).
_FAST = re.compile(r'( *)([A-Za-z_]\w*)(?:: "([^"]*)")? = ([A-Za-z_][\w.]*)\(([^#;"]*)\)'
                   r"(?:;  [\w =]*= None)?")
# The same two patterns for an all-ASCII text (every real log so far): on ASCII input `\w`, `\b`
# and `\s` match exactly what the Unicode forms match, without the Unicode category calls per
# character (a fifth of the time of these two, which run on every statement).
_FAST_ASCII = re.compile(_FAST.pattern, re.ASCII)
_IDENT_ASCII = re.compile(_IDENT.pattern, re.ASCII)


def parse_graph(text: str, kind: str, name: str = "") -> Graph:
    """Parse readable FX text; unparseable lines are skipped, never fatal."""
    return parse_graph_closed(text, kind, name)[0]


def parse_graph_closed(text: str, kind: str, name: str = "") -> tuple[Graph, bool]:
    """`parse_graph`, and whether the parse is *closed*: blank or comment lines appended after
    a line break would leave its nodes as they are (the header closed within `text`, and the
    body ended or no statement was left open at its end). compile_builder.py shares one parse
    between texts that differ only in such a tail (the pre-grad graph is the Dynamo graph's
    text plus `# graph id: N`)."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("def forward(")), None)
    if start is None:
        return Graph(kind=GraphKind(kind), text=text, name=name), True
    params, body_at = _read_params(lines, start)
    closed = body_at <= len(lines)  # else the header's `):` search ran into any appended line
    st = _State()
    for pname, annot, comment in params:
        _add_placeholder(st, pname, annot, comment)
    body_indent: int | None = None
    ascii_text = text.isascii()
    fast = (_FAST_ASCII if ascii_text else _FAST).fullmatch
    st.idents = (_IDENT_ASCII if ascii_text else _IDENT).findall
    buf: list[str] = []  # the lines of a statement spanning several (a long `return (...)`)
    depth = 0
    indent = 0
    for line in itertools.islice(lines, body_at, None):
        if not buf:
            m = fast(line)
            if m is not None:
                lead, lhs, annot, fn, args = m.groups()
                if _plain_balanced(args) or _balanced(args):
                    at = len(lead)
                    if body_indent is None:
                        body_indent = at
                    if at < body_indent:
                        break  # a nested class or the end of forward(): later lines are not read
                    if at == body_indent:
                        _fast_statement(st, lhs, annot, fn, args)
                    continue
        # The general path: (indent, statement) pairs; a statement spanning lines is joined and
        # its per-line `# comments` dropped.
        stripped = line.strip()
        if not stripped:
            continue
        if not buf:
            indent = len(line) - len(line.lstrip())
            if stripped[0] == "#":
                _comment(st, stripped)
                continue
        code = _strip_comment(stripped) if buf or depth else stripped
        buf.append(code)
        depth += _paren_delta(code)
        if depth > 0:
            continue
        stmt = " ".join(buf)
        buf, depth = [], 0
        if body_indent is None:
            body_indent = indent
        if indent < body_indent:
            break
        if indent == body_indent:
            _statement(st, stmt)
    else:
        if buf:
            closed = False  # appended lines would have joined this statement
            stmt = " ".join(buf)
            if body_indent is None:
                body_indent = indent
            if indent == body_indent:
                _statement(st, stmt)
    return Graph(kind=GraphKind(kind), nodes=tuple(st.nodes), text=text, name=name), closed


def comment_tail_start(text: str) -> int:
    """Where the run of blank and `#` comment lines that ends `text` begins: the index of the
    line break before it (`len(text)` when the last line is code). The first line is never
    part of it. A comment line holding another line separator (form feed, U+2028...) ends the
    run: `splitlines` would read code after it."""
    end = len(text)
    while True:
        cut = text.rfind("\n", 0, end)
        if cut < 0:
            return end
        line = text[cut + 1 : end]
        stripped = line.strip()
        if stripped and (not stripped.startswith("#") or len(line.splitlines()) > 1):
            return end
        end = cut


def _plain_balanced(args: str) -> bool:
    """The common case of `_balanced` in a few C calls: no quote, no brace, each bracket kind
    closed (False only sends the line to `_balanced`)."""
    return ("'" not in args and "{" not in args and args.count("(") == args.count(")")
            and args.count("[") == args.count("]"))  # fmt: skip


def _balanced(args: str) -> bool:
    """`args` (no `"`, `#` or `;` in it) closes every bracket it opens, so the line is one whole
    statement, as `_paren_delta` would find."""
    if "'" in args:
        return _paren_delta(args) == 0
    return (args.count("(") + args.count("[") + args.count("{")
            == args.count(")") + args.count("]") + args.count("}"))  # fmt: skip


def _fast_statement(st: _State, name: str, annot: str | None, fn: str, args: str) -> None:
    """`_statement` for a `_FAST` line, without its chain of regexes."""
    meta = parse_annotation(annot) if annot else None
    attrs: dict[str, str] = {}
    if annot and meta is None:
        attrs["annotation"] = annot
    head, _, rest = fn.partition(".")
    names = st.names
    idents: list[str] = st.idents(args)
    if st.aliases:
        aliases = st.aliases
        idents = [aliases.get(i, i) for i in idents]
    refs = tuple(dict.fromkeys([i for i in idents if i in names]))  # `_refs(st, args)`
    if head == "self" and rest:
        op, target, inputs = "call_module", rest, refs
    elif head in names and rest:
        op, target, inputs = "call_method", rest, (head, *[r for r in refs if r != head])
    else:
        op, target, inputs = "call_function", fn, refs
    st.nodes.append(_node(name, op, target, inputs, (meta,) if meta else (), st.source, attrs))
    st.names.add(name)


_NODE_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Node) if f.default is not dataclasses.MISSING}
_NODE_SET = ("name", "op", "target", "inputs", "outputs", "source", "attrs")
# The fast constructor fills every other field with its plain default; a field added later with
# a default_factory (a fresh mutable value per node) sends every node through `Node(...)`.
_NODE_FAST = all(f.name in _NODE_SET or f.name in _NODE_DEFAULTS for f in dataclasses.fields(Node))
_new = object.__new__


def _node(name: str, op: str, target: str, inputs: tuple[str, ...], outputs: tuple[TensorMeta, ...],
          source: SourceLoc | None, attrs: dict[str, str]) -> Node:  # fmt: skip
    """`Node(...)` without the frozen dataclass's one `object.__setattr__` per field (30k nodes
    per deep graph; the same trick as `module_paths._with_path`), a few times faster per node."""
    if not _NODE_FAST:
        return Node(name, op, target, inputs, outputs, source, attrs=attrs)
    node = _new(Node)
    d = node.__dict__
    d.update(_NODE_DEFAULTS)
    d["name"], d["op"], d["target"], d["inputs"], d["outputs"] = name, op, target, inputs, outputs
    d["source"], d["attrs"] = source, attrs
    return node


_CODE_PREFIX = re.compile(r"""(?:[^#"']|"[^"]*"|'[^']*')*""")
_QUOTED = re.compile(r""""[^"]*"|'[^']*'|"[^"]*$|'[^']*$""")


def _strip_comment(text: str) -> str:
    """`text` without a trailing `# comment` outside string literals (regex, not a char loop:
    this runs on every line of 30k-node graphs)."""
    if "#" not in text:
        return text
    if '"' not in text and "'" not in text:
        return text[: text.index("#")].rstrip()
    end = _CODE_PREFIX.match(text).end()  # type: ignore[union-attr]  # (...)* always matches
    if end < len(text) and text[end] == "#":
        return text[:end].rstrip()
    return text


def _paren_delta(text: str) -> int:
    """Net open brackets outside string literals (a Python-level approximation)."""
    code = _strip_comment(text)
    if '"' in code or "'" in code:
        code = _QUOTED.sub("", code)
    return (code.count("(") + code.count("[") + code.count("{")
            - code.count(")") - code.count("]") - code.count("}"))  # fmt: skip


def _read_params(lines: list[str], start: int) -> tuple[list[tuple[str, str, str]], int]:
    """Parameters of `def forward(...)`: (name, annotation, trailing comment) each."""
    end = start
    while end < len(lines) and not re.search(r"\)\s*(->.*)?:\s*$", lines[end].split("  #")[0]):
        end += 1
    joined = "\n".join(lines[start : end + 1])
    inner = joined[joined.index("(") + 1 : joined.rindex(")")]
    params = []
    for m in _PARAM.finditer(inner):
        if m.group(1) and m.group(1) != "self":
            params.append((m.group(1).lstrip("*"), m.group(2) or "", (m.group(3) or "").strip()))
    return params, end + 1


def _add_placeholder(st: _State, pname: str, annot: str, comment: str) -> None:
    meta = parse_annotation(annot) if annot else None
    attrs = {"aot_input": comment} if comment else {}
    if annot and meta is None:
        attrs["annotation"] = annot
    st.nodes.append(Node(pname, "placeholder", pname, outputs=(meta,) if meta else (), attrs=attrs))
    st.names.add(pname)
    st.params.setdefault(pname, []).append(len(st.nodes) - 1)


def _comment(st: _State, text: str) -> None:
    try:  # a deep graph repeats each `# File:` comment once per layer: one SourceLoc for all
        st.source = st.sources[text]
        return
    except KeyError:
        pass
    m = _FILE.match(text)
    if m:
        loc = SourceLoc(m.group(1), int(m.group(2)), m.group(3).strip(), (m.group(4) or "").strip())
        st.source = st.sources[text] = loc
    elif text.startswith("# No stacktrace found"):
        st.source = st.sources[text] = None


def _statement(st: _State, stmt: str) -> None:
    decl = _DECL.match(stmt)
    if decl:  # joint graphs declare flattened inputs: `primals_1: "f32[64][1]cpu"  # comment`
        _add_placeholder(st, decl.group(1), decl.group(2), (decl.group(3) or "").strip())
        return
    if "tree_flatten_spec(" in stmt:  # `a, b, = fx_pytree.tree_flatten_spec([primals, tangents], ...)`
        containers = set(_refs(st, stmt.split("=", 1)[1]))
        st.nodes = [n for n in st.nodes if not (n.op == "placeholder" and n.name in containers)]
        st.names -= containers
        st.params = {}
        for i, n in enumerate(st.nodes):
            if n.op == "placeholder":
                st.params.setdefault(n.name, []).append(i)
        return
    if stmt.startswith("return"):
        expr = stmt[len("return") :].strip()
        st.nodes.append(Node("output", "output", "output", inputs=_refs(st, expr)))
        return
    if stmt.endswith("None"):
        stmt = _DEAD_TAIL.sub("", stmt)
    aug = _AUG.match(stmt) if ";" in stmt else None
    if aug:
        lhs, op, rhs, name, annot = aug.groups()
        meta = parse_annotation(annot) if annot else None
        inputs = tuple(dict.fromkeys((*_refs(st, lhs), *_refs(st, rhs))))
        st.nodes.append(Node(name, "call_function", f"operator.{_AUG_OPS[op]}", inputs,
                             (meta,) if meta else (), st.source))  # fmt: skip
        st.names.add(name)
        return
    m = _STMT.match(stmt)
    if not m:
        return
    name, annot, expr = m.group(1), m.group(2) or "", m.group(3).strip()
    if expr in st.names and expr not in st.aliases.values() and _is_param(st, expr) and not annot:
        _rename_placeholder(st, expr, name)
        return
    meta = parse_annotation(annot) if annot else None
    attrs: dict[str, str] = {}
    if annot and meta is None:
        attrs["annotation"] = annot
    op, target, inputs = _classify(st, expr)
    st.nodes.append(_node(name, op, target, inputs, (meta,) if meta else (), st.source, attrs))
    st.names.add(name)


def _is_param(st: _State, name: str) -> bool:
    return name in st.params


def _rename_placeholder(st: _State, param: str, name: str) -> None:
    """Dynamo prints `l_x_ = L_x_`: the FX placeholder is `l_x_` with target `L_x_`."""
    at = st.params.pop(param, [])
    for i in at:  # the placeholders named `param` (an index: Dynamo renames hundreds of them)
        n = st.nodes[i]
        st.nodes[i] = Node(name, "placeholder", param, (), n.outputs, attrs=n.attrs)
    st.names.add(name)
    st.params.setdefault(name, []).extend(at)
    st.aliases[param] = name


def _classify(st: _State, expr: str) -> tuple[str, str, tuple[str, ...]]:
    g = _GETITEM.match(expr)
    if g and g.group(1) in st.names:
        return "call_function", "operator.getitem", (g.group(1),)
    call = _CALL.match(expr)
    if call:
        fn, args = call.group(1), call.group(2)
        head, _, rest = fn.partition(".")
        if head == "self" and rest:
            return "call_module", rest, _refs(st, args)
        if head in st.names and rest:
            return "call_method", rest, (head, *[r for r in _refs(st, args) if r != head])
        return "call_function", fn, _refs(st, args)
    if expr.startswith("self."):
        return "get_attr", expr[len("self.") :], ()
    return "call_function", expr.split("(")[0], _refs(st, expr)


def _refs(st: _State, expr: str) -> tuple[str, ...]:
    """The graph's names `expr` reads, once each, in order of first use."""
    idents: list[str] = _IDENT.findall(expr)
    if st.aliases:
        aliases = st.aliases
        idents = [aliases.get(i, i) for i in idents]
    names = st.names
    return tuple(dict.fromkeys([i for i in idents if i in names]))

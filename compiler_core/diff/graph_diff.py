"""Node-level difference of two FX graphs of one stage: matched by structure, then by name.

FX names are counters (`add_3`), so one node inserted early renames every later node of its
kind; a diff by name alone reports a renamed graph as rewritten. Nodes are therefore aligned
first by a structural label in graph order (op, target with its operands' names blanked,
module path), the longest common subsequence as difflib finds it; the nodes left over pair by
equal name and op (a node whose facts changed, or that moved), then by equal label (a node
renamed and moved). A pair whose target, output shapes/dtypes, module or inputs (read through
the pairing) differ is `changed`; one that differs in name only is `renamed`.

Symbol names are run-local (`s77` in one run is `s52` in the next): they are blanked to `s#`
before anything is compared, as PyTorch's `normalize_gm` blanks what varies between runs.
Cost: labels are interned to ints and difflib's matcher runs once per graph; two 9k-node
post-grad graphs that differ in a few nodes align in well under a second.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from difflib import SequenceMatcher

from compiler_core.diff.diff_result import GraphDiff, NodeChange
from compiler_core.session.model import Graph, Node, TensorMeta

_SYMBOL = re.compile(r"\b([suc])\d+\b")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOTTED = re.compile(r"^[\w.]+$")  # `torch.ops.aten.add.Tensor`: a name, not an expression
_ATEN = re.compile(r"^(?:torch\.ops\.)?(aten|prims|quantized|_c10d_functional)\.(\w+)\.\w+$")
_BINARY_OPS = {"**": "pow", "//": "floordiv", "<<": "lshift", ">>": "rshift", "<=": "le", ">=": "ge",
               "==": "eq", "!=": "ne", "+": "add", "-": "sub", "*": "mul", "/": "truediv", "%": "mod",
               "@": "matmul", "<": "lt", ">": "gt", "&": "and_", "|": "or_", "^": "xor"}
_UNARY_OPS = {"-": "neg", "~": "invert", "not ": "not_"}
_BINARY = re.compile(r"^\S+ (" + "|".join(re.escape(o) for o in _BINARY_OPS) + r") \S+$")
_UNARY = re.compile(r"^(-|~|not )#$")
_POSITIONAL = re.compile(r"^(arg|primals_|tangents_)\d+(_\d+)?$")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(\.\d+)?(e-?\d+)?")


def _unsym(text: str) -> str:
    return _SYMBOL.sub(r"\1#", text)


def expression(node: Node) -> str:
    """An operator node's target as a log writes it, operands blanked (`l_x_ @ l_w_` → `# @ #`);
    "" for a target that is a name (`torch._C._nn.linear`, `_operator.add` in a capture)."""
    target = node.target
    if node.op != "call_function" or _DOTTED.match(target):
        return ""
    names = set(node.inputs)
    return _unsym(_WORD.sub(lambda m: "#" if m.group(0) in names else m.group(0), target))


def target_text(node: Node) -> str:
    """What the node does, one way for logs and captures: a trace log writes an operator node's
    target as its expression (`h * item`), a capture as the function (`_operator.mul`); both
    read `_operator.mul` here, and a torch function the way the log names it. Symbols are
    normalised."""
    text = expression(node)
    if not text:  # a capture's `torch._VariableFunctionsClass.relu` is the log's `torch.relu`
        return _unsym(node.target.replace("torch._VariableFunctionsClass.", "torch.", 1))
    if text.startswith("#["):
        return "_operator.getitem"
    if m := _UNARY.match(text):
        return f"_operator.{_UNARY_OPS[m.group(1)]}"
    if m := _BINARY.match(text):
        return f"_operator.{_BINARY_OPS[m.group(1)]}"
    return text


def _label(node: Node) -> tuple[str, str, str]:
    if node.op == "placeholder":
        positional = _POSITIONAL.match(node.name)
        if positional:  # AOT's inputs are named by position: one more input renames the rest
            dtype = node.outputs[0].dtype if node.outputs else ""
            rank = len(node.outputs[0].shape) if node.outputs else -1
            return (node.op, positional.group(1), f"{dtype}/{rank}")
        return (node.op, _unsym(node.target or node.name), "")
    if node.op == "output":
        return (node.op, "", "")
    return (node.op, _NUMBER.sub("N", target_text(node)), node.module_path)


def _shapes(outputs: Sequence[TensorMeta]) -> str:
    return ", ".join("(" + ", ".join(str(d) for d in o.shape) + ")" for o in outputs)


def _meta(outputs: Sequence[TensorMeta]) -> tuple[str, str]:
    shapes = _unsym(_shapes(outputs))
    dtypes = ", ".join(o.dtype for o in outputs)
    return shapes, dtypes


def op_name(node: Node) -> str:
    """What `ops_added`/`ops_removed` count: the target in its short form."""
    text = target_text(node)
    m = _ATEN.match(text)
    return f"{m.group(1)}.{m.group(2)}" if m else text


def _structural_labels(before: Sequence[Node], after: Sequence[Node]) -> tuple[list[int], list[int]]:
    """Each node's label with its operands' labels (one Weisfeiler-Lehman round), interned to
    ints: a backward graph repeats `aten.view` hundreds of times, and what feeds a view tells
    one from the next where the op alone does not."""
    interned: dict[object, int] = {}
    out: list[list[int]] = []
    for nodes in (before, after):
        own = {n.name: interned.setdefault(_label(n), len(interned)) for n in nodes}
        out.append([interned.setdefault((own[n.name], tuple(own.get(i, -1) for i in n.inputs)), len(interned))
                    for n in nodes])  # fmt: skip
    return out[0], out[1]


def align(before: Sequence[Node], after: Sequence[Node]) -> list[tuple[int, int]]:
    """Index pairs (before, after) of the nodes matched, in `before`'s order."""
    la, lb = _structural_labels(before, after)
    if la == lb:
        return [(i, i) for i in range(len(la))]
    pairs: dict[int, int] = {}
    for block in SequenceMatcher(None, la, lb, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            pairs[block.a + k] = block.b + k
    taken = set(pairs.values())
    free_b = [j for j in range(len(after)) if j not in taken]
    by_name = {(after[j].name, after[j].op): j for j in free_b}
    for i in range(len(before)):
        if i in pairs:
            continue
        j = by_name.pop((before[i].name, before[i].op), -1)
        if j >= 0:
            pairs[i] = j
            taken.add(j)
    # a node whose operands changed has a new structural label: pair it by its own label
    own_a = [_label(n) for n in before]
    own_b = [_label(n) for n in after]
    by_label: dict[tuple[str, str, str], list[int]] = {}
    for j in free_b:
        if j not in taken:
            by_label.setdefault(own_b[j], []).append(j)
    for i in range(len(before)):
        if i not in pairs and by_label.get(own_a[i]):
            pairs[i] = by_label[own_a[i]].pop(0)
    return sorted(pairs.items())


def graph_diff(stage: str, before: Graph | None, after: Graph | None) -> GraphDiff:
    """The diff of one stage's graph; a side without the graph counts as an empty graph."""
    nodes_a = before.nodes if before is not None else ()
    nodes_b = after.nodes if after is not None else ()
    pairs = align(nodes_a, nodes_b)
    to_b = {nodes_a[i].name: nodes_b[j].name for i, j in pairs}
    matched_a = {i for i, _ in pairs}
    matched_b = {j for _, j in pairs}
    changed: list[NodeChange] = []
    renamed: list[tuple[str, str]] = []
    for i, j in pairs:
        a, b = nodes_a[i], nodes_b[j]
        what = _changes(a, b, to_b)
        if what:
            changed.append(NodeChange(a.name, b.name, tuple(what)))
        elif a.name != b.name:
            renamed.append((a.name, b.name))
    removed = [n for i, n in enumerate(nodes_a) if i not in matched_a]
    added = [n for j, n in enumerate(nodes_b) if j not in matched_b]
    ops_removed = Counter(op_name(n) for n in removed if n.op.startswith("call_"))
    ops_added = Counter(op_name(n) for n in added if n.op.startswith("call_"))
    common = ops_removed & ops_added  # an op removed here and added there is a move, not a change
    return GraphDiff(
        stage=stage,
        nodes_before=len(nodes_a),
        nodes_after=len(nodes_b),
        removed=tuple(n.name for n in removed),
        added=tuple(n.name for n in added),
        changed=tuple(changed),
        renamed=tuple(renamed),
        ops_removed=dict(sorted((ops_removed - common).items())),
        ops_added=dict(sorted((ops_added - common).items())),
    )


def _changes(a: Node, b: Node, to_b: dict[str, str]) -> list[str]:
    what = []
    ta, tb = target_text(a), target_text(b)
    ea, eb = expression(a), expression(b)
    if a.op != "placeholder" and (ta != tb or (ea and eb and ea != eb)):  # `# * 0.5` → `# * 0.25`
        what.append(f"target {ea or ta} → {eb or tb}")
    sa, da = _meta(a.outputs)
    sb, db = _meta(b.outputs)
    if sa != sb:  # compared without symbol names, shown with them
        what.append(f"shape {_shapes(a.outputs) or '-'} → {_shapes(b.outputs) or '-'}")
    if da != db:
        what.append(f"dtype {da or '-'} → {db or '-'}")
    if a.module_path != b.module_path:
        what.append(f"module {a.module_path or '-'} → {b.module_path or '-'}")
    mapped = [to_b.get(x, "") for x in a.inputs]
    if mapped != list(b.inputs):
        what.append(f"inputs {', '.join(a.inputs)} → {', '.join(b.inputs)}")
    return what


def rows(diff: GraphDiff, before: Graph | None, after: Graph | None) -> list[tuple[str, str, str]]:
    """Side-by-side rows (before name, after name, status) rebuilt from a diff and its two
    graphs: status is same | renamed | changed | removed | added; a row with one side empty is
    a node the other side lacks. Rows follow `after`'s order, each removed node placed after
    the row of the node before it."""
    nodes_a = before.nodes if before is not None else ()
    nodes_b = after.nodes if after is not None else ()
    removed, added = set(diff.removed), set(diff.added)
    to_a: dict[str, str] = {}
    status: dict[str, str] = {}
    for x, y in diff.renamed:
        to_a[y], status[y] = x, "renamed"
    for ch in diff.changed:
        to_a[ch.after], status[ch.after] = ch.before, "changed"
    names_a = {n.name for n in nodes_a}
    out: list[tuple[str, str, str]] = []
    placed: dict[str, int] = {}
    for n in nodes_b:
        if n.name in added:
            out.append(("", n.name, "added"))
            continue
        a = to_a.get(n.name, n.name if n.name in names_a and n.name not in removed else "")
        out.append((a, n.name, status.get(n.name, "same")))
        if a:
            placed[a] = len(out) - 1
    # removed nodes go after their predecessor's row, in before's order
    inserts: list[tuple[int, int, str]] = []
    last = -1
    for k, n in enumerate(nodes_a):
        if n.name in removed:
            inserts.append((last, k, n.name))
        else:
            last = placed.get(n.name, last)
    for at, _, name in sorted(inserts, reverse=True):
        out.insert(at + 1, (name, "", "removed"))
    return out

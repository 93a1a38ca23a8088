"""FX graph → session `Graph`, keeping the metadata that the trace log's text graphs lose.

Torch's own trace artifacts print graphs as Python text: shapes survive, but stack traces,
`nn_module_stack`, `seq_nr`, `from_node` and partitioner tags do not, and those are exactly what
links a kernel back to a user line. The recording backend therefore serialises each graph it
sees with this module and logs it as a `compilescope_graph` artifact.

Conventions the builder relies on: `dtype` drops the `torch.` prefix (`float32`); symbolic sizes
are their `str` (`s0`, `2*s0`); `module_path` is the innermost `nn_module_stack` entry as
`attn/qkv`; `source` is the innermost frame of the node's stack trace outside torch itself.
Everything here reads metadata defensively: a node without `val` or `stack_trace` simply has
fewer fields, never an error.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

import torch
import torch.fx

from compiler_core.capture.hooks.op_types import is_operator
from compiler_core.session.model import Graph, Node, SourceLoc, TensorMeta
from compiler_core.session.vocab import GraphKind

_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.*)$')
_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_FROM_NODE_DEPTH = 8


def graph_record(graph: torch.fx.Graph, kind: str, name: str = "", text: str = "") -> Graph:
    """Serialise `graph` as a session Graph of kind `kind` (dynamo, aot_forward, post_grad...)."""
    nodes = tuple(node_record(n) for n in graph.nodes)
    return Graph(kind=GraphKind(kind), nodes=nodes, text=text, name=name)


def node_record(node: torch.fx.Node) -> Node:
    stack = parse_stack_trace(node.meta.get("stack_trace"))
    user = [f for f in stack if not f.file.startswith(_TORCH_DIR)]
    return Node(
        name=node.name,
        op=node.op,
        target=target_name(node.target),
        inputs=tuple(n.name for n in node.all_input_nodes),
        outputs=tuple(tensor_metas(_node_value(node))),
        source=user[-1] if user else None,
        stack=tuple(stack),
        module_path=module_path(node.meta.get("nn_module_stack")),
        attrs=node_attrs(node.meta),
    )


def target_name(target: Any) -> str:
    if isinstance(target, str):
        return target
    if is_operator(target):
        return str(target)
    module = getattr(target, "__module__", None) or ""
    qualname = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    if qualname:
        return f"{module}.{qualname}" if module and module != "builtins" else str(qualname)
    return repr(target)


def _node_value(node: torch.fx.Node) -> Any:
    for key in ("val", "example_value"):
        if key in node.meta:
            return node.meta[key]
    return node.meta.get("tensor_meta")


def tensor_metas(value: Any) -> Iterable[TensorMeta]:
    """One TensorMeta per tensor in `value` (tensors, nested tuples/lists); others yield none."""
    if isinstance(value, torch.Tensor):
        yield _tensor_meta(value)
    elif isinstance(value, tuple | list):
        for item in value:
            yield from tensor_metas(item)
    elif hasattr(value, "shape") and hasattr(value, "dtype"):  # TensorMetadata namedtuple
        yield TensorMeta(
            shape=tuple(_dim(d) for d in value.shape),
            dtype=_dtype(value.dtype),
            stride=tuple(_dim(s) for s in getattr(value, "stride", ()) or ()),
        )


def _tensor_meta(t: torch.Tensor) -> TensorMeta:
    try:
        stride: tuple[int | str, ...] = tuple(_dim(s) for s in t.stride())
    except RuntimeError:  # sparse / nested tensors have no strides
        stride = ()
    return TensorMeta(
        shape=tuple(_dim(d) for d in t.shape), dtype=_dtype(t.dtype), stride=stride, device=str(t.device)
    )


def _dim(d: Any) -> int | str:
    if isinstance(d, int):
        return d
    node = getattr(d, "node", None)
    if node is not None and hasattr(node, "maybe_as_int"):
        concrete = node.maybe_as_int()
        if concrete is not None:
            return int(concrete)
    return str(d)


def _dtype(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")


def parse_stack_trace(text: Any) -> list[SourceLoc]:
    """Frames of an FX `stack_trace` string, outermost first, with each frame's code line."""
    if not isinstance(text, str) or not text:
        return []
    frames: list[SourceLoc] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _FRAME_RE.match(line)
        if not m:
            continue
        code = lines[i + 1].strip() if i + 1 < len(lines) and not _FRAME_RE.match(lines[i + 1]) else ""
        frames.append(SourceLoc(m["file"], int(m["line"]), m["func"].strip(), code))
    return frames


def module_path(stack: Any) -> str:
    """`L['self'].layers[0].attn` (innermost nn_module_stack entry) → `layers/0/attn`."""
    if not isinstance(stack, dict) or not stack:
        return ""
    value = list(stack.values())[-1]
    fqn = value[0] if isinstance(value, tuple | list) and value else str(value)
    return normalize_module_fqn(str(fqn))


# The root module's local: `self` in a method frame; `fn` in torch's wrapper frame
# (`torch._dynamo.external_utils` calls `fn(*args)`), as traced for an `nn.Sequential` model.
_SELF_PREFIX = re.compile(r"^(L\['(?:self|fn)'\]|L__(?:self|fn)__|self)")
_SUBSCRIPT = re.compile(r"\[['\"]?([^'\"\]]+)['\"]?\]")


def normalize_module_fqn(fqn: str) -> str:
    rest = _SELF_PREFIX.sub("", fqn)
    rest = rest.replace("._modules", ".").replace("_modules", ".")
    rest = _SUBSCRIPT.sub(r".\1", rest)
    parts = [p for p in rest.split(".") if p]
    return "/".join(parts)


def node_attrs(meta: dict[str, Any]) -> dict[str, str]:
    attrs: dict[str, str] = {}
    for key in ("seq_nr", "partitioner_tag", "original_aten"):
        if meta.get(key) is not None:
            attrs[key] = str(meta[key])
    recompute = meta.get("recompute")
    if recompute is not None:
        attrs["recompute"] = getattr(recompute, "name", str(recompute))
    chain = from_node_chain(meta.get("from_node"))
    if chain:
        attrs["from_node"] = ",".join(chain)
    source_fn = meta.get("source_fn_stack")
    if source_fn:
        name, fn = source_fn[-1]
        attrs["source_fn"] = f"{name}:{target_name(fn)}"
    return attrs


def from_node_chain(sources: Any) -> list[str]:
    """Names along the first `from_node` provenance path, newest first (node ← origin)."""
    names: list[str] = []
    current = sources
    while isinstance(current, list) and current and len(names) < _FROM_NODE_DEPTH:
        first = current[0]
        name = getattr(first, "name", None)
        if name is None:
            break
        names.append(str(name))
        current = getattr(first, "from_node", None)
    return names

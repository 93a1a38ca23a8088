"""Saved tensors: what the AOT forward hands to the backward, with sizes and producers.

A saved tensor is a backward placeholder that is not a `tangents_*` input. Its bytes are its own
extent (shape × dtype size; 0 when a dimension is symbolic). Views of one buffer share a
`storage_key`: we follow view-like forward ops back to the first non-view producer, which is how
the q/k/v views of one projection collapse to one storage.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from compiler_core.session.model import Graph, Node, SavedTensor, TensorMeta

ITEMSIZE = {
    "float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "int16": 2,
    "int8": 1, "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8, "bool": 1, "complex64": 8,
    "complex128": 16, "complex32": 4, "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e4m3fnuz": 1,
    "float8_e5m2fnuz": 1,
}  # fmt: skip
_VIEW_OPS = (
    "view", "_unsafe_view", "reshape", "permute", "transpose", "t", "expand", "slice", "select",
    "unsqueeze", "squeeze", "alias", "as_strided", "unbind", "split", "split_with_sizes", "chunk",
    "diagonal", "unfold", "view_as_real", "view_as_complex", "detach", "getitem",
)  # fmt: skip


def tensor_bytes(meta: TensorMeta) -> int:
    if not all(isinstance(d, int) for d in meta.shape):
        return 0
    return math.prod(int(d) for d in meta.shape) * ITEMSIZE.get(meta.dtype, 0)


def _is_view(node: Node) -> bool:
    parts = node.target.split(".")
    if node.target == "operator.getitem":
        return True
    return bool(
        len(parts) >= 2 and parts[-2] in _VIEW_OPS and node.target.startswith(("torch.ops.aten.", "aten."))
    )


def _storage_root(name: str, fw_nodes: dict[str, Node]) -> str:
    seen = set()
    node = fw_nodes.get(name)
    while node is not None and _is_view(node) and node.inputs and node.name not in seen:
        seen.add(node.name)
        name = node.inputs[0]
        node = fw_nodes.get(name)
    return name


def saved_tensors(fw: Graph | None, bw: Graph) -> tuple[SavedTensor, ...]:
    fw_nodes = {n.name: n for n in fw.nodes} if fw is not None else {}
    consumers: dict[str, list[str]] = {}
    for n in bw.nodes:
        for i in n.inputs:
            consumers.setdefault(i, []).append(n.name)
    out = []
    for n in bw.nodes:
        if n.op != "placeholder" or n.name.startswith("tangents_"):
            continue
        meta = n.outputs[0] if n.outputs else TensorMeta()
        producer = n.name if n.name in fw_nodes else ""
        is_sym = not n.outputs and ("Sym(" in n.attrs.get("annotation", "") or n.name.startswith("sym_"))
        out.append(SavedTensor(
            name=n.name, meta=meta, bytes=tensor_bytes(meta) if n.outputs else 0,
            storage_key=_storage_root(n.name, fw_nodes), producer=producer,
            consumers=tuple(c for c in consumers.get(n.name, []) if c != "output"), is_symint=is_sym,
        ))  # fmt: skip
    return tuple(out)


def storage_bytes(saved: Iterable[SavedTensor]) -> int:
    """Bytes of `saved` with the views of one storage counted once (the largest view stands for
    the storage; a tensor without a storage key is its own). Every saved-bytes total shown, the
    session's, a budget point's and the AOT pane's, is counted this way."""
    by_storage: dict[str, int] = {}
    for st in saved:
        key = st.storage_key or st.name
        by_storage[key] = max(by_storage.get(key, 0), st.bytes)
    return sum(by_storage.values())

"""One small frozen identity for everything a pane can select.

Every pane selects and highlights `Ref`s; none holds a pointer to another pane's widgets. A ref
is keyed like tlparse keys artifacts: a kind, the compile id (`"0/1"`, empty for source lines),
the rank (None for single-process runs) and a key whose format depends on the kind:

=============== ======================================================
kind            key
=============== ======================================================
source_line     ``"<path>:<line>"``
dynamo_node     FX node name in the Dynamo graph
aot_node        ``"<graph>:<name>"``, graph in joint/forward/backward/inference
post_grad_node  ``"<graph>:<name>"``, graph in forward/backward/inference
kernel          ``"<graph>:<kernel name>"``
kernel_line     ``"<graph>:<kernel name>:<1-based line in kernel source>"``
saved_tensor    name of the backward placeholder
guard           index of the guard in the compile's guard list
graph_break     index of the break in the compile's break list
compile         empty
=============== ======================================================

Refs serialise to one compact string (`encode`) so the link index stays small in JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class RefKind(str, Enum):
    SOURCE_LINE = "source_line"
    DYNAMO_NODE = "dynamo_node"
    AOT_NODE = "aot_node"
    POST_GRAD_NODE = "post_grad_node"
    KERNEL = "kernel"
    KERNEL_LINE = "kernel_line"
    SAVED_TENSOR = "saved_tensor"
    GUARD = "guard"
    GRAPH_BREAK = "graph_break"
    COMPILE = "compile"


# Position of each kind along the pipeline. Link closure only walks monotonically along this
# order (see links.py), so clicking a kernel reaches its source lines but not every other kernel
# that happens to share one of those lines.
STAGE_ORDER: dict[RefKind, float] = {
    RefKind.SOURCE_LINE: 0,
    RefKind.GRAPH_BREAK: 0.5,
    RefKind.GUARD: 0.5,
    RefKind.DYNAMO_NODE: 1,
    RefKind.AOT_NODE: 2,
    RefKind.SAVED_TENSOR: 2.5,
    RefKind.POST_GRAD_NODE: 3,
    RefKind.KERNEL: 4,
    RefKind.KERNEL_LINE: 5,
    RefKind.COMPILE: -1,
}

_SEP = "|"
_KIND_TEXT: dict[RefKind, str] = {k: k.value for k in RefKind}


@dataclass(frozen=True, order=True)
class Ref:
    kind: RefKind
    compile_id: str
    key: str
    rank: int | None = None

    def encode(self) -> str:
        return Ref.prefix(self.kind, self.compile_id, self.rank) + self.key

    @staticmethod
    def prefix(kind: RefKind, compile_id: str, rank: int | None) -> str:
        """`encode()` of a ref of this kind/compile/rank is this prefix + its key (the builder's
        hot path makes encoded links without Ref objects)."""
        rank_text = "" if rank is None else str(rank)
        return f"{_KIND_TEXT[kind]}{_SEP}{rank_text}{_SEP}{compile_id}{_SEP}"

    @staticmethod
    def decode(text: str) -> Ref:
        kind, rank, compile_id, key = text.split(_SEP, 3)
        return Ref(RefKind(kind), compile_id, key, None if rank == "" else int(rank))

    @property
    def stage(self) -> float:
        return STAGE_ORDER[self.kind]


def source_line(path: str, line: int, rank: int | None = None) -> Ref:
    return Ref(RefKind.SOURCE_LINE, "", f"{path}:{line}", rank)


def split_source_key(key: str) -> tuple[str, int]:
    path, _, line = key.rpartition(":")
    return path, int(line)


def graph_key(graph: str, name: str) -> str:
    return f"{graph}:{name}"


def split_graph_key(key: str) -> tuple[str, str]:
    graph, _, name = key.partition(":")
    return graph, name

"""One small frozen identity for everything a pane can select.

Every pane selects and highlights `Ref`s; none holds a pointer to another pane's widgets. A ref
is keyed like tlparse keys artifacts: a kind, the compile id (`"0/1"`, empty for source lines),
the rank (None for single-process runs), and typed fields whose use depends on the kind:

=============== ============================================================
kind            fields (constructor)
=============== ============================================================
source_line     ``name`` = file path, ``line`` (`source_line`)
dynamo_node     ``name`` = FX node name in the Dynamo graph
aot_node        ``graph`` in joint/forward/backward/inference, ``name``
post_grad_node  ``graph`` in forward/backward/inference, ``name``
kernel          ``graph``, ``name`` = kernel name (``extern_kernels.mm:3`` has a colon)
kernel_line     ``graph``, ``name`` = kernel name, ``line`` (1-based, in the kernel source)
saved_tensor    ``name`` of the backward placeholder
guard           ``index`` of the guard in the compile's guard list
graph_break     ``index`` of the break in the compile's break list
compile         nothing else
=============== ============================================================

Nobody splits strings: build refs with the constructors (`Ref.kernel(...)`) and read the fields.

Storage. A session stores links as encoded strings, ``"<kind>|<rank>|<compile id>|<key>"``, the
key being ``<path>:<line>``, ``<graph>:<name>`` or ``<graph>:<kernel>:<line>`` by kind (the form
sessions have always had on disk, so old ones load unchanged). It is unambiguous although names
and paths may hold ``:`` or ``|``: the kind says which fields the key has, the graph is a
`Partition` word (none holds ``:``), so it ends at the first ``:``, a line number is the text
after the last ``:``, and the name is everything between. `Ref.key`/`encode` write that form,
`Ref.decode` reads it; `Ref.prefix` + `graph_key` let the builder's hot path write it without
making `Ref` objects. This module is the only place that knows the key grammar.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from enum import Enum

from compiler_core.session.vocab import Partition, partition_of


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
_KINDS: dict[str, RefKind] = {k.value: k for k in RefKind}
_KIND_PREFIX: dict[RefKind, str] = {k: k.value + _SEP for k in RefKind}
GRAPH_KINDS = frozenset({RefKind.AOT_NODE, RefKind.POST_GRAD_NODE, RefKind.KERNEL, RefKind.KERNEL_LINE})
_NUMBERED = frozenset({RefKind.GUARD, RefKind.GRAPH_BREAK})


@dataclass(frozen=True, order=True, slots=True)
class Ref:
    """Fields after `compile_id` are keyword-only: a positional key string (the old form) fails
    loudly instead of landing in `graph`. Prefer the named constructors below."""

    kind: RefKind
    compile_id: str = ""
    _: KW_ONLY
    graph: Partition | None = None  # set exactly for GRAPH_KINDS
    name: str = ""  # node, kernel, tensor name; a source line's file path
    line: int = 0  # source or kernel line; a guard's or graph break's index
    rank: int | None = None
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # computed once: a click on a 32-layer model looks ~5,000 refs up in every pane, and the
        # generated hash re-hashes two enum members (a Python-level Enum.__hash__ call each) per lookup
        object.__setattr__(self, "_hash", hash((self.kind.value, self.compile_id, self.graph, self.name,
                                                self.line, self.rank)))

    def __hash__(self) -> int:
        return self._hash

    # -- constructors -----------------------------------------------------------------------

    @staticmethod
    def source_line(path: str, line: int, rank: int | None = None) -> Ref:
        return Ref(RefKind.SOURCE_LINE, "", name=path, line=line, rank=rank)

    @staticmethod
    def dynamo_node(compile_id: str, name: str, rank: int | None = None) -> Ref:
        return Ref(RefKind.DYNAMO_NODE, compile_id, name=name, rank=rank)

    @staticmethod
    def aot_node(compile_id: str, graph: str, name: str, rank: int | None = None) -> Ref:
        return Ref(RefKind.AOT_NODE, compile_id, graph=_partition(graph), name=name, rank=rank)

    @staticmethod
    def post_grad_node(compile_id: str, graph: str, name: str, rank: int | None = None) -> Ref:
        return Ref(RefKind.POST_GRAD_NODE, compile_id, graph=_partition(graph), name=name, rank=rank)

    @staticmethod
    def kernel(compile_id: str, graph: str, name: str, rank: int | None = None) -> Ref:
        return Ref(RefKind.KERNEL, compile_id, graph=_partition(graph), name=name, rank=rank)

    @staticmethod
    def kernel_line(compile_id: str, graph: str, kernel: str, line: int, rank: int | None = None) -> Ref:
        return Ref(RefKind.KERNEL_LINE, compile_id, graph=_partition(graph), name=kernel, line=line,
                   rank=rank)

    @staticmethod
    def saved_tensor(compile_id: str, name: str, rank: int | None = None) -> Ref:
        return Ref(RefKind.SAVED_TENSOR, compile_id, name=name, rank=rank)

    @staticmethod
    def guard(compile_id: str, index: int, rank: int | None = None) -> Ref:
        return Ref(RefKind.GUARD, compile_id, line=index, rank=rank)

    @staticmethod
    def graph_break(compile_id: str, index: int, rank: int | None = None) -> Ref:
        return Ref(RefKind.GRAPH_BREAK, compile_id, line=index, rank=rank)

    @staticmethod
    def compile(compile_id: str, rank: int | None = None) -> Ref:
        return Ref(RefKind.COMPILE, compile_id, rank=rank)

    # -- accessors --------------------------------------------------------------------------

    @property
    def path(self) -> str:
        """A source line's file."""
        return self.name

    @property
    def index(self) -> int:
        """A guard's or graph break's position in its compile's list."""
        return self.line

    @property
    def stage(self) -> float:
        return STAGE_ORDER[self.kind]

    def kernel_of_line(self) -> Ref:
        """The kernel a kernel line belongs to."""
        return Ref(RefKind.KERNEL, self.compile_id, graph=self.graph, name=self.name, rank=self.rank)

    # -- storage form -----------------------------------------------------------------------

    @property
    def key(self) -> str:
        """The kind-specific key text of the storage form (see the module docstring); for
        display and storage only: read the typed fields instead of parsing it."""
        kind, graph = self.kind, self.graph
        if graph is not None:  # `+`, not an f-string: formatting an enum member costs 2x
            base = graph + ":" + self.name
            return base + ":" + str(self.line) if kind is RefKind.KERNEL_LINE else base
        if kind is RefKind.SOURCE_LINE:
            return self.name + ":" + str(self.line)
        if kind in _NUMBERED:
            return str(self.line)
        return self.name

    def encode(self) -> str:
        """Called on every link lookup: kept to a few concatenations (~0.6 µs)."""
        rank = self.rank
        return (_KIND_PREFIX[self.kind] + ("" if rank is None else str(rank)) + _SEP + self.compile_id + _SEP
                + self.key)

    @staticmethod
    def prefix(kind: RefKind, compile_id: str, rank: int | None) -> str:
        """`encode()` of a ref of this kind/compile/rank is this prefix + its key (the builder's
        hot path makes encoded links without Ref objects)."""
        rank_text = "" if rank is None else str(rank)
        return f"{_KIND_TEXT[kind]}{_SEP}{rank_text}{_SEP}{compile_id}{_SEP}"

    @staticmethod
    def decode(text: str) -> Ref:
        """The ref `encode` wrote; ValueError for text that is none (an unknown kind or graph, a
        line or index that is no integer, too few fields)."""
        kind_text, rank_text, compile_id, key = text.split(_SEP, 3)
        kind = _KINDS.get(kind_text)
        if kind is None:
            raise ValueError(f"unknown ref kind {kind_text!r}")
        rank = None if rank_text == "" else int(rank_text)
        if kind in GRAPH_KINDS:
            graph_text, sep, name = key.partition(":")
            graph = partition_of(graph_text)
            if graph is None or not sep:
                raise ValueError(f"no graph in ref key {key!r}")
            line = 0
            if kind is RefKind.KERNEL_LINE:
                name, sep, line_text = name.rpartition(":")
                if not sep:
                    raise ValueError(f"no line in kernel line key {key!r}")
                line = int(line_text)
            return Ref(kind, compile_id, graph=graph, name=name, line=line, rank=rank)
        if kind is RefKind.SOURCE_LINE:
            path, sep, line_text = key.rpartition(":")
            if not sep:
                raise ValueError(f"no line in source line key {key!r}")
            return Ref(kind, compile_id, name=path, line=int(line_text), rank=rank)
        if kind in _NUMBERED:
            return Ref(kind, compile_id, line=int(key), rank=rank)
        return Ref(kind, compile_id, name=key, rank=rank)


def _partition(graph: str) -> Partition:
    found = partition_of(graph)
    if found is None:
        raise ValueError(f"{graph!r} names no partition (joint/forward/backward/inference)")
    return found


def source_line(path: str, line: int, rank: int | None = None) -> Ref:
    return Ref.source_line(path, line, rank)


def graph_key(graph: str, name: str) -> str:
    """The storage key of a graph-scoped ref (`Ref.key`), for builders that write encoded links
    in bulk (`Ref.prefix(kind, ...) + graph_key(graph, name)`); never parse it back."""
    return f"{graph}:{name}"


def kind_prefix(kind: RefKind) -> str:
    """The text every encoded ref of `kind` starts with (a filter over stored links that needs
    no decoding; `LinkIndex` uses it)."""
    return _KIND_PREFIX[kind]


def kind_of_encoded(encoded: str) -> RefKind | None:
    """The kind of an encoded ref without decoding the rest; None for text that names none."""
    return _KINDS.get(encoded.partition(_SEP)[0])


def split_prefix(encoded: str) -> tuple[str, str]:
    """`kind|rank|compile|key` -> (`kind|rank|compile|`, `key`), the prefix being `Ref.prefix`'s
    form; keys may hold `|`. Text with fewer fields is kept whole: ("", `encoded`). For code that
    moves encoded links in bulk (the codec's grouping, renaming a rank's links), never to read
    a ref's fields: decode it for that."""
    parts = encoded.split(_SEP, 3)
    if len(parts) < 4:
        return "", encoded
    key = parts[3]
    return encoded[: len(encoded) - len(key)], key

"""The session model: the one contract between the engine and the GUI.

Plain frozen dataclasses, free of torch and Qt, that round-trip through JSON (codec.py, in the
forms wire.py derives from these classes). Live capture and trace-log import both fill it
through the same builder, so nothing here says which of the two produced a value. Collections
are tuples (immutable, hashable) and mappings are `dict[str, ...]` so JSON needs no custom
container types. Optional stages are `None` or empty rather than missing, and fields are only
appended, which keeps sessions loadable as later builds fill more fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from compiler_core.session.vocab import CompileStatus, GraphKind, Partition, SourceOrigin

# The stored layout's version (session/packed.py): a file of another one is refused, and an older
# one converted by bench/convert_sessions.py, which keeps the readers of every earlier layout.
SCHEMA_VERSION = 4

Dim = int | str  # concrete size, or a symbolic one such as "s0"


@dataclass(frozen=True)
class SourceLoc:
    """A place in user code. `line` is 1-based; `code` is the source text of that line."""

    file: str
    line: int
    function: str = ""
    code: str = ""


@dataclass(frozen=True)
class TensorMeta:
    shape: tuple[Dim, ...] = ()
    dtype: str = ""
    stride: tuple[Dim, ...] = ()
    device: str = ""


@dataclass(frozen=True)
class Node:
    """An FX node in Model Explorer's shape: edges live on the node they enter (`inputs`).

    `module_path` is a Model-Explorer namespace (`layers/0/attn`) derived from `nn_module_stack`;
    the canvas groups by it. `outputs` holds one TensorMeta per produced value (several for
    tuple-returning ops, none for non-tensor values). `attrs` carries free-form extras such as
    `seq_nr`, `partitioner_tag`, `original_aten` or `recomputable`.
    """

    name: str
    op: str  # placeholder | call_function | call_method | call_module | get_attr | output
    target: str = ""
    inputs: tuple[str, ...] = ()
    outputs: tuple[TensorMeta, ...] = ()
    source: SourceLoc | None = None
    stack: tuple[SourceLoc, ...] = ()
    module_path: str = ""
    attrs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Graph:
    """A graph as nodes in topological order plus the readable text it was parsed from."""

    kind: GraphKind
    nodes: tuple[Node, ...] = ()
    text: str = ""
    name: str = ""  # forward | backward | inference for per-partition graphs

    def node(self, name: str) -> Node | None:
        """O(1): linking and the panes call this inside loops over 9k-node graphs."""
        return self.node_index.get(name)

    @cached_property
    def node_index(self) -> dict[str, Node]:
        """Name -> node, built once on first use (cached_property writes the instance __dict__
        directly, so it works on a frozen dataclass and is not a field: never serialised)."""
        return {n.name: n for n in self.nodes}


@dataclass(frozen=True)
class GraphBreak:
    """One graph break as Dynamo logged it (see analysis/graph_breaks.py for the text it reads).

    `reason` is the specific cause ("Unsupported Tensor.item() call ..."), not Dynamo's generic
    `header` ("Encountered graph break when attempting to trace CALL ..."). `location` is the
    deepest frame of `user_stack` outside torch: the line a user would change.
    """

    reason: str
    location: SourceLoc | None = None
    user_stack: tuple[SourceLoc, ...] = ()
    graph_index: int = 0  # Dynamo graphs in this frame captured before the break
    header: str = ""
    gb_code: str = ""  # e.g. "GB0124", from the documentation link torch logs
    doc_url: str = ""
    explanation: str = ""
    hints: tuple[str, ...] = ()
    resumable: bool = True  # False: Dynamo skipped the rest of the function (it runs eagerly)


@dataclass(frozen=True)
class Guard:
    code: str
    kind: str = ""  # e.g. TENSOR_MATCH, ID_MATCH, SHAPE_ENV when known
    source: SourceLoc | None = None


@dataclass(frozen=True)
class CompileMetrics:
    """Compile-time breakdown in seconds; `stage_s` keys: dynamo, aot, inductor, codegen, backend
    (the frame's compile: backend ⊃ aot ⊃ inductor ⊃ codegen) and backward (a training graph's
    backward, compiled lazily at its first call, outside the frame's `total_s`)."""

    total_s: float | None = None
    stage_s: dict[str, float] = field(default_factory=dict)
    cache: dict[str, str] = field(default_factory=dict)  # fx_graph / aotautograd -> hit|miss|bypass
    co_name: str = ""
    co_filename: str = ""
    co_firstlineno: int | None = None
    fail_type: str = ""
    fail_reason: str = ""
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SavedTensor:
    """A tensor the forward saves for the backward (a non-tangent backward placeholder).

    `bytes` counts this tensor's own extent; `storage_key` groups views of one buffer so totals can
    de-duplicate (q/k/v views of one qkv projection share a storage).
    """

    name: str
    meta: TensorMeta = TensorMeta()
    bytes: int = 0
    storage_key: str = ""
    producer: str = ""  # forward graph node that produced it
    consumers: tuple[str, ...] = ()  # backward graph nodes that read it
    is_symint: bool = False


@dataclass(frozen=True)
class AotInfo:
    joint: Graph | None = None
    forward: Graph | None = None
    backward: Graph | None = None
    inference: Graph | None = None
    saved_tensors: tuple[SavedTensor, ...] = ()
    recomputed: tuple[str, ...] = ()  # forward-node names recomputed in backward instead of saved
    backward_of: dict[str, tuple[str, ...]] = field(default_factory=dict)  # fw node -> bw nodes
    # how each forward node's partners were found: seq_nr | original_aten | via_user | source_line
    # (analysis/backward_links.py says what each means and how exact it is)
    backward_via: dict[str, str] = field(default_factory=dict)
    recomputed_bytes: int = 0  # bytes of recomputed values the backward reads: what saving would cost


@dataclass(frozen=True)
class Kernel:
    """A generated kernel definition, or an extern call (`language == "extern"`).

    `fused_nodes` are post-grad node names of the same partition. `line_nodes` maps a 1-based
    line of `source` to the post-grad nodes that line implements, where Inductor said so.
    `launches` is how many times one run of the partition's `call()` launches it: a definition
    every layer reuses (Llama's RoPE kernel) is one kernel launched 32 times, and a count of
    definitions alone read as "32 layers fused into 14 kernels". 1 for an extern call (each call
    is its own `Kernel`); 0 where not known (sessions written before it was recorded).
    """

    name: str
    language: str  # triton | cpp | extern
    graph: Partition = Partition.FORWARD  # forward | backward | inference
    source: str = ""
    fused_nodes: tuple[str, ...] = ()
    original_aten: tuple[str, ...] = ()
    line_nodes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    output_code_line: int | None = None  # where the definition starts in the whole output code
    launches: int = 0
    # the part of `fused_nodes` no record of Inductor names for this kernel (no provenance entry,
    # Graph fragment, node-mapping or launch comment): later launches' counterparts of the
    # fragment's nodes, followed by data flow (analysis/kernel_nodes.py). Shown as inferred.
    inferred_nodes: tuple[str, ...] = ()
    # the part of `fused_nodes` (not inferred) that other generated kernels of the partition also
    # compute: Inductor inlines a cheap pointwise node into every kernel that reads it, so the
    # same node is recomputed there rather than claimed twice by mistake
    recomputed_nodes: tuple[str, ...] = ()


@dataclass(frozen=True)
class AutotuneChoice:
    name: str
    time_ms: float | None = None  # None when the candidate failed
    kind: str = ""  # extern | triton | ...
    config: dict[str, str] = field(default_factory=dict)  # BLOCK_M, num_warps, num_stages, ...
    error: str = ""


@dataclass(frozen=True)
class AutotuneResult:
    op: str
    shape: str = ""
    choices: tuple[AutotuneChoice, ...] = ()
    winner: str = ""
    tuning_s: float | None = None
    kernel: str = ""  # kernel name the winner became, when known
    # post-grad nodes this tuning decided (one result serves every node of the same op and
    # input shapes: Inductor tunes a shape once); filled by analysis/autotune_targets.py
    nodes: tuple[str, ...] = ()


@dataclass(frozen=True)
class CudaGraphInfo:
    captured: bool
    skip_reason: str = ""
    rerecords: tuple[str, ...] = ()


@dataclass(frozen=True)
class InductorOutput:
    """Inductor's result for one partition (forward, backward or inference) of a compile."""

    graph: Partition  # forward | backward | inference
    post_grad: Graph | None = None
    pre_grad: Graph | None = None
    kernels: tuple[Kernel, ...] = ()
    output_code: str = ""
    autotune: tuple[AutotuneResult, ...] = ()
    cudagraph: CudaGraphInfo | None = None
    nodes_before_fusion: int | None = None


@dataclass(frozen=True)
class Decomposition:
    """What one Dynamo op became after PrimTorch/AOT decomposition and where that ended up:
    `softmax` → `amax, sub, exp, sum, div` forward, their backward ops, the kernels they landed in.

    Computed once when the session is built (analysis/decompositions.py says how ownership is
    found); the Decompositions pane only looks rows up. Ops are short names (`amax`,
    `prims.convert_element_type`), nodes are names in the decomposed graph, kernels are names in
    `DecompositionInfo.forward_graph` (`kernels`) and the backward partition (`backward_kernels`).
    """

    dynamo_node: str
    forward_ops: tuple[str, ...] = ()  # distinct core ops, in graph order
    backward_ops: tuple[str, ...] = ()
    aot_nodes: tuple[str, ...] = ()  # decomposed node names (forward / inference side)
    backward_nodes: tuple[str, ...] = ()
    rewritten: tuple[str, ...] = ()  # forward decomposed nodes gone before lowering (pattern, CSE...)
    replaced: bool = False  # every forward op vanished before lowering: a pattern rewrote it
    replaced_by: tuple[str, ...] = ()  # the ops the pattern put in its place (e.g. SDPA)
    kernels: tuple[str, ...] = ()
    backward_kernels: tuple[str, ...] = ()


@dataclass(frozen=True)
class DecompositionInfo:
    """One compile's decomposition table: a row per Dynamo op, in Dynamo graph order."""

    rows: tuple[Decomposition, ...] = ()
    forward_graph: Partition = Partition.FORWARD  # inference when the compile has no autograd
    introduced: tuple[str, ...] = ()  # forward post-grad ops no Dynamo op owns (pattern passes)
    origin: str = ""  # artifact (the graph before Inductor's passes) | aot (the AOT graphs)


@dataclass(frozen=True)
class Compile:
    """Everything one `[frame/compile]` attempt produced, keyed as PyTorch and tlparse key it."""

    compile_id: str  # "0/0", "0/1" (recompile), "!0/0/0" for compiled autograd, "-" if unknown
    rank: int | None = None
    frame_id: int | None = None
    frame_compile_id: int | None = None
    attempt: int = 0
    code: SourceLoc | None = None  # the frame Dynamo compiled
    dynamo_graph: Graph | None = None
    graph_breaks: tuple[GraphBreak, ...] = ()
    guards: tuple[Guard, ...] = ()
    recompile_reasons: tuple[str, ...] = ()
    metrics: CompileMetrics = CompileMetrics()
    aot: AotInfo | None = None
    inductor: tuple[InductorOutput, ...] = ()
    status: CompileStatus = CompileStatus.OK
    failure: str = ""
    artifacts: dict[str, str] = field(default_factory=dict)  # other named payloads, kept verbatim
    # None only where there is no Dynamo graph (a file saved before decompositions were stored
    # gets it on load)
    decomposition: DecompositionInfo | None = None
    # which run of its log (0 = the first): a log may hold several (torch._dynamo.reset() and
    # compiling again, explain(), a script run twice); run N > 1's ids read `0/0#N`
    run: int = 0


@dataclass(frozen=True)
class BudgetPoint:
    """One re-partition of a training graph at `activation_memory_budget == budget`.

    `saved_bytes`/`recomputed` come from the partitioned graphs (summed over the run's compiles);
    `step_ms`/`peak_mem_bytes` are measured training steps (None when not measured, e.g. on CPU
    without `--steps`). `error` says why a budget produced nothing.
    """

    budget: float
    saved_bytes: int = 0
    saved_tensors: int = 0
    recomputed: int = 0
    step_ms: float | None = None
    peak_mem_bytes: int | None = None
    device: str = ""
    torch_version: str = ""
    error: str = ""


@dataclass(frozen=True)
class StepSample:
    mode: str  # eager | default | reduce-overhead | max-autotune | max-autotune-no-cudagraphs
    step: int
    ms: float
    warmup: bool = False  # a step that included compilation
    peak_mem_bytes: int | None = None
    # set on an eager step run right after step `step` of this compiled mode: the speedup's
    # baseline is measured under the same host conditions as the mode (see run_phase)
    baseline_for: str = ""
    # ms from the start of the timeline run to the start of this step: where a trace export
    # places it (a script run counts from midnight UTC of its day, so its ranks share one clock).
    # None where unknown (sessions written before it was recorded, other timers)
    start_ms: float | None = None


@dataclass(frozen=True)
class TimelineEvent:
    mode: str
    step: int
    kind: str  # compile | recompile | shape_change | cudagraph_record
    reason: str = ""
    duration_s: float | None = None


@dataclass(frozen=True)
class KernelTime:
    """Where a profiled step's time went: one kernel, extern op or eager op (torch.profiler).

    `kind`: kernel (an Inductor kernel, by name), extern (an ATen op a compiled graph called, e.g.
    `mm`, its `occurrence`-th in that call: the session names it `extern_kernels.mm:N`), eager (an
    ATen op outside any compiled graph) or graph (a device kernel replayed inside a CUDA graph
    that is not an Inductor kernel, e.g. a cuBLAS GEMM: its name is the device kernel's).
    `call` is the compiled-graph call of the step it ran in (see `GraphCall`), -1 outside one.
    For a graph kernel, `gap` is how many Inductor kernels its graph call launched before it and
    `occurrence` its place among the graph kernels after that one: a CUDA-graph replay keeps no
    ATen scope, but it keeps the launch order of the graph's `call()`, which is how
    `analysis/kernel_times.py` finds the extern call (mm, sdpa) that launched it."""

    name: str
    kind: str = "kernel"
    call: int = -1
    occurrence: int = 1
    us_per_step: float = 0.0
    calls_per_step: float = 0.0
    in_cudagraph: bool = False
    gap: int = -1


@dataclass(frozen=True)
class GraphCall:
    """One compiled graph called in the profiled steps: `region` is Dynamo's compile id when it
    ran inside its "Torch-Compiled Region" (forward), "" in backward; `kernels` are the kernel
    names seen, which is what matches it to a session's InductorOutput."""

    index: int
    region: str = ""
    backward: bool = False
    kernels: tuple[str, ...] = ()


@dataclass(frozen=True)
class RuntimeProfile:
    """A few steps of one mode under torch.profiler, per step. On CUDA `busy_us_per_step` is
    device time (the union of kernel intervals), on CPU the time inside kernels and ops."""

    steps: int = 0
    device: str = ""
    kernels: tuple[KernelTime, ...] = ()
    graph_calls: tuple[GraphCall, ...] = ()
    busy_us_per_step: float | None = None
    cudagraph_us_per_step: float | None = None
    idle_us_per_step: float | None = None  # median step time minus busy time (CUDA only)
    launches_per_step: int | None = None
    kernels_per_step: int | None = None


@dataclass(frozen=True)
class ModeStats:
    mode: str
    samples: int = 0
    median_ms: float | None = None
    p99_ms: float | None = None
    total_ms: float | None = None
    compile_s: float | None = None
    recompiles: int = 0
    peak_mem_bytes: int | None = None
    kernel_launches_per_step: int | None = None
    kernels: int | None = None
    cudagraph_graphs: int | None = None
    baseline_ms: float | None = None  # median of the eager steps paired with this mode's steps
    runtime: RuntimeProfile | None = None  # where the time went (a few profiled steps)
    time_by_ref: dict[str, float] = field(default_factory=dict)  # encoded Ref -> µs per step
    saved_bytes: int | None = None  # saved-activation bytes of the session's graphs (train only)
    # half the interquartile range of the steady block means over their median: how far one
    # block of 10 steps typically strays from the median (0.03 = ±3 %); for the paired eager
    # blocks too. What the speedup's trust is judged by (queries/step_stats.py, speedup_noise).
    spread: float | None = None
    baseline_spread: float | None = None


# Diagnostic.stage of a compile the user's code raised in while Dynamo traced it (analysis/user_crash.py):
# what tells a crash from damage (the banner, `summary`'s `crashes`)
CRASH_STAGE = "crash"


@dataclass(frozen=True)
class Diagnostic:
    """A problem met while building the session: a bad log line, a failed stage, a user error."""

    severity: str  # info | warning | error
    message: str
    path: str = ""
    line: int | None = None
    stage: str = ""


@dataclass(frozen=True)
class EagerGap:
    """What ran eagerly after a compile's graph, before the next compiled region, in one profiled
    step: the measured cost of the graph break that ended that graph (analysis/eager_gaps.py)."""

    ms: float = 0.0
    ops: int = 0  # top-level aten ops


@dataclass(frozen=True)
class SessionMeta:
    torch_version: str = ""
    device: str = ""  # cpu | cuda | "NVIDIA H200"...
    mode: str = ""
    dynamic: bool | None = None
    train: bool | None = None
    origin: str = ""  # capture | trace | fixture
    origin_path: str = ""
    created_unix: float | None = None
    ranks: tuple[int, ...] = ()
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Session:
    meta: SessionMeta = SessionMeta()
    sources: dict[str, str] = field(default_factory=dict)  # user file path -> text
    compiles: tuple[Compile, ...] = ()
    links: dict[str, tuple[str, ...]] = field(default_factory=dict)  # encoded Ref -> direct links
    timeline: tuple[StepSample, ...] = ()
    timeline_events: tuple[TimelineEvent, ...] = ()
    mode_stats: tuple[ModeStats, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    schema_version: int = SCHEMA_VERSION
    memory_budget: tuple[BudgetPoint, ...] = ()  # activation-memory-budget sweep (worker/budget_job.py)
    # path -> how its text in `sources` was obtained when not read as-is ("read from the local
    # install: ..."), or why the file itself is not shown ("left out: ...", "another version")
    source_notes: dict[str, str] = field(default_factory=dict)
    # compile id ("rank:id" on multi-rank runs) -> eager window after its graph, from one profiled
    # step of a capture; empty for imported logs, which hold no profile
    eager_gaps: dict[str, EagerGap] = field(default_factory=dict)
    # path -> where its text in `sources` came from: a capture's run, a lookup on this machine the
    # user asked for, or the log's own quotes (the lines between them blank: gaps, not code)
    source_origins: dict[str, SourceOrigin] = field(default_factory=dict)

    def compile(self, compile_id: str, rank: int | None = None) -> Compile | None:
        for c in self.compiles:
            if c.compile_id == compile_id and c.rank == rank:
                return c
        return None

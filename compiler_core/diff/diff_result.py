"""What a comparison of two sessions holds: plain frozen dataclasses, JSON through `as_dict`.

"Before" is the first session given (A), "after" the second (B). Every figure is a `Change`
(a number on each side, None where that side does not have it), so the text form, the JSON and
the GUI read one shape. Nodes, kernels and compiles are named as each side names them: a node
`add_3` before may be `add_4` after, which is why a graph diff lists renamed pairs rather than
assuming that equal names mean the same node.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from compiler_core.diff.fix_list import FixRow

Number = int | float | None


@dataclass(frozen=True)
class Change:
    """One figure before and after: `delta` is after - before where both are known."""

    name: str
    before: Number = None
    after: Number = None

    @property
    def delta(self) -> Number:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass(frozen=True)
class NodeChange:
    """A node present on both sides (matched by structure, then by name) whose facts differ:
    `what` says which, in words ("shape (4, 16) → (s0, 16)", "inputs", "target")."""

    before: str
    after: str
    what: tuple[str, ...] = ()


@dataclass(frozen=True)
class GraphDiff:
    """One stage's graph of a matched compile: `stage` is `dynamo`, `aot_forward`,
    `aot_backward`, `aot_inference` or `post_grad_<partition>`. Nodes present on only one side
    are `removed` (before) or `added` (after); `renamed` pairs differ in name only. `ops_removed`
    and `ops_added` count the targets that went or came ("item": 1), which reads at a glance
    where hundreds of renamed nodes would not."""

    stage: str
    nodes_before: int = 0
    nodes_after: int = 0
    removed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    changed: tuple[NodeChange, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()
    ops_removed: dict[str, int] = dataclasses.field(default_factory=dict)
    ops_added: dict[str, int] = dataclasses.field(default_factory=dict)

    @property
    def same(self) -> bool:
        return not (self.removed or self.added or self.changed)


@dataclass(frozen=True)
class BreakFact:
    """A distinct graph break (as break_ranking.py groups them) gained or lost."""

    reason: str
    file: str = ""
    line: int = 0
    code: str = ""
    gb_code: str = ""
    count: int = 1
    hints: tuple[str, ...] = ()


@dataclass(frozen=True)
class RecompileFact:
    """A distinct recompile cause (recompile_explain.py) gained or lost."""

    guard: str
    fix: str = ""
    file: str = ""
    line: int = 0
    function: str = ""
    count: int = 1


@dataclass(frozen=True)
class KernelSwap:
    """An op refused by the code generator (`to_extern`: a generated kernel before, an extern
    call or ATen fallback after) or taken over by it (the reverse); kernel_swaps.py finds them."""

    op: str
    before: str
    after: str
    to_extern: bool = True


@dataclass(frozen=True)
class KernelDiff:
    """One partition's kernels: definitions matched by name without Inductor's trailing
    index (`cpp_fused_sum_tanh_0` and `_1` are one kernel renumbered). `us_before`/`us_after`
    give a profiled mode's µs per step of the kernels listed, where a capture measured them."""

    partition: str
    kernels: Change = Change("kernels")
    launches: Change = Change("launches")
    extern_calls: Change = Change("extern calls")
    removed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    us_before: dict[str, float] = dataclasses.field(default_factory=dict)
    us_after: dict[str, float] = dataclasses.field(default_factory=dict)
    cudagraph_before: str = ""  # captured | skipped: reason | "" (not known)
    cudagraph_after: str = ""
    swaps: tuple[KernelSwap, ...] = ()  # of the kernels in `removed`/`added`: an op's generated ↔ extern


@dataclass(frozen=True)
class SavedDiff:
    """Tensors the forward saves for the backward, and the ops the backward recomputes."""

    tensors: Change = Change("saved tensors")
    bytes: Change = Change("saved bytes")
    recomputed: Change = Change("recomputed ops")
    recomputed_bytes: Change = Change("recomputed bytes")
    removed: tuple[str, ...] = ()  # saved tensors (names) only before
    added: tuple[str, ...] = ()
    recomputed_removed: tuple[str, ...] = ()  # recomputed op targets only before
    recomputed_added: tuple[str, ...] = ()


@dataclass(frozen=True)
class CompileDiff:
    """A compile of one frame found on both sides (compile_match.py says how)."""

    before: str  # compile id as each side names it
    after: str
    frame: str  # "file.py:21 forward"
    rank: int | None = None
    run: int = 0
    status: tuple[str, str] = ("ok", "ok")
    graphs: tuple[GraphDiff, ...] = ()
    breaks_removed: tuple[BreakFact, ...] = ()
    breaks_added: tuple[BreakFact, ...] = ()
    guards_removed: tuple[str, ...] = ()
    guards_added: tuple[str, ...] = ()
    guards: Change = Change("guards")
    recompile_before: str = ""  # the reason this compile happened (empty: a first compile)
    recompile_after: str = ""
    saved: SavedDiff | None = None
    kernels: tuple[KernelDiff, ...] = ()
    compile_s: tuple[Change, ...] = ()  # total, then each stage


@dataclass(frozen=True)
class LoneCompile:
    """A compile on one side only: a frame the other side never compiled, or one more recompile."""

    compile_id: str
    frame: str
    rank: int | None = None
    run: int = 0
    nodes: int = 0  # Dynamo graph call ops
    breaks: tuple[str, ...] = ()
    recompile_reason: str = ""
    kernels: int = 0
    compile_s: float | None = None


@dataclass(frozen=True)
class GroupMatch:
    """A (rank, run) group: how many compiles each side has in it."""

    rank: int | None
    run: int
    compiles_before: int = 0
    compiles_after: int = 0


@dataclass(frozen=True)
class ModeDiff:
    """A compile mode's steady step time before and after. `noise` combines both runs' spreads
    (half the interquartile range of block means over the median, queries/step_stats.py);
    `beyond_noise` is None where a side has no spread to judge by."""

    mode: str
    step_ms: Change
    change: float | None = None  # after / before - 1
    noise: float | None = None
    beyond_noise: bool | None = None
    compile_s: Change = Change("compile s")
    peak_mem_bytes: Change = Change("peak memory bytes")
    launches_per_step: Change = Change("launches per step")
    cudagraph_graphs: Change = Change("CUDA graphs")
    recompiles: Change = Change("recompiles")


@dataclass(frozen=True)
class SideInfo:
    path: str = ""
    torch_version: str = ""
    device: str = ""
    mode: str = ""


@dataclass(frozen=True)
class SettingChange:
    """A compile setting that differs between the two runs (the mode, `dynamic`, or a torch
    config value the capture recorded, as a hint's re-run sets it); "" where a side did not set it."""

    name: str
    before: str = ""
    after: str = ""


@dataclass(frozen=True)
class SessionDiff:
    """The whole comparison, session totals first, then per matched compile."""

    before: SideInfo
    after: SideInfo
    settings: tuple[SettingChange, ...] = ()
    totals: tuple[Change, ...] = ()
    groups: tuple[GroupMatch, ...] = ()
    compiles: tuple[CompileDiff, ...] = ()
    only_before: tuple[LoneCompile, ...] = ()
    only_after: tuple[LoneCompile, ...] = ()
    breaks_removed: tuple[BreakFact, ...] = ()
    breaks_added: tuple[BreakFact, ...] = ()
    recompiles_removed: tuple[RecompileFact, ...] = ()
    recompiles_added: tuple[RecompileFact, ...] = ()
    compile_s_by_stage: tuple[Change, ...] = ()
    modes: tuple[ModeDiff, ...] = ()
    left_to_fix: tuple[FixRow, ...] = ()  # the after session's causes, the next thing to try first

    def total(self, name: str) -> Change:
        """The session total called `name` (KeyError if no such total)."""
        for c in self.totals:
            if c.name == name:
                return c
        raise KeyError(name)


def as_dict(diff: SessionDiff) -> dict[str, Any]:
    """JSON-ready: dataclasses as dicts, each `Change` with its `delta` beside the two values."""
    plain: dict[str, Any] = _plain(diff)
    return plain


def _plain(value: Any) -> Any:
    if isinstance(value, Change):
        return {"name": value.name, "before": value.before, "after": value.after, "delta": value.delta}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value

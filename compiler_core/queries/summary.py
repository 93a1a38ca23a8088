"""`summarize(session)`: a small dict of stable keys for the CLI, tests and benchmarks.

Counts follow the records a user would count in the log: `graphs` are Dynamo output graphs,
`kernels` are generated kernel definitions (Triton / C++), `kernel_launches` how often one run of
the graphs launches them (a definition each layer reuses counts once there, once per layer here),
extern calls are counted apart.
Saved-tensor bytes de-duplicate views of one storage within a compile. `break_reasons` are
Dynamo's specific reasons (not its generic "Encountered graph break ..." header);
`distinct_breaks` and `distinct_recompiles` group them per cause over all ranks, most costly first.
The counts cover the whole log; a log that holds several runs (`torch._dynamo.reset()` and
compiling again, `explain()`, a script run twice) also gets `runs`, each run counted on its own.
`crashes` are compiles the user's code raised in while Dynamo traced it (never counted as breaks).
A session of several ranks also gets what differs between them and who is slow (ranks/rank_facts.py).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from typing import Any

from compiler_core.analysis.saved_tensors import storage_bytes
from compiler_core.queries.break_ranking import distinct_breaks
from compiler_core.queries.recompile_explain import distinct_recompiles, recompiled
from compiler_core.queries.step_stats import shown_stats, speedups, untrustworthy
from compiler_core.ranks.rank_facts import ranks_summary
from compiler_core.session.model import (
    CRASH_STAGE,
    AotInfo,
    Compile,
    Diagnostic,
    InductorOutput,
    ModeStats,
    Session,
)
from compiler_core.session.refs import Ref, RefKind

FIRST_DIAGNOSTICS = 5


@dataclasses.dataclass(frozen=True)
class KernelCounts:
    """Generated kernel definitions, their launches per run of the graphs, and extern calls: the
    one count the CLI, the status bar and the Inductor pane all show. `launches` is None when
    the session did not record them (written before `Kernel.launches`)."""

    kernels: int
    launches: int | None
    extern_calls: int

    def generated(self) -> str:
        """`14 kernels (231 launches)`; the launches left out when they say nothing more."""
        text = f"{self.kernels} kernel{'s' * (self.kernels != 1)}"
        if self.launches is not None and self.launches != self.kernels:
            text += f" ({self.launches} launches)"
        return text

    def describe(self) -> str:
        """`14 kernels (231 launches) + 258 extern calls`."""
        return self.generated() + (f" + {self.extern_calls} extern calls" if self.extern_calls else "")


def kernel_counts(outputs: Iterable[InductorOutput]) -> KernelCounts:
    kernels = launches = extern = 0
    known = True
    for o in outputs:
        for k in o.kernels:
            if k.language == "extern":
                extern += 1
            else:
                kernels += 1
                launches += k.launches
                known = known and k.launches > 0
    return KernelCounts(kernels, launches if known else None, extern)


def summarize(session: Session) -> dict[str, Any]:
    compiles = session.compiles
    counts = kernel_counts(o for c in compiles for o in c.inductor)
    out: dict[str, Any] = {
        "compile_ids": [_label(c) for c in compiles],
        "graphs": sum(1 for c in compiles if c.dynamo_graph is not None),
        "graph_breaks": sum(len(c.graph_breaks) for c in compiles),
        "break_reasons": [gb.reason for c in compiles for gb in c.graph_breaks],
        "distinct_breaks": [row.as_dict() for row in distinct_breaks(session, all_ranks=True)],
        "recompiles": sum(1 for c in compiles if recompiled(c)),
        "distinct_recompiles": [row.as_dict() for row in distinct_recompiles(session, all_ranks=True)],
        "graph_op_counts": [_op_count(c) for c in compiles if c.dynamo_graph is not None],
        "aot_forward_graphs": sum(1 for c in compiles if c.aot and c.aot.forward is not None),
        "aot_backward_graphs": sum(1 for c in compiles if c.aot and c.aot.backward is not None),
        "saved_tensors": sum(len(c.aot.saved_tensors) for c in compiles if c.aot),
        "saved_tensor_bytes": sum(saved_bytes(c) for c in compiles),
        # backward nodes the partitioner recomputed (its own `# remat` count: the forward call names
        # the backward shares, see backward_links.recomputed_nodes); forward call nodes with >= 1
        # backward partner
        "recomputed_nodes": sum(len(c.aot.recomputed) for c in compiles if c.aot),
        "backward_links": sum(len(c.aot.backward_of) for c in compiles if c.aot),
        "kernels": counts.kernels,
        "kernel_launches": counts.launches,  # per run of every compiled graph once; None: not recorded
        "extern_calls": counts.extern_calls,
        "failures": [f"{c.compile_id}: {c.failure}" for c in compiles if c.status == "failed"],
        "crashes": [_diagnostic(d) for d in session.diagnostics if d.stage == CRASH_STAGE],
        "ranks": list(session.meta.ranks),
        # files shown per origin: read by a capture, looked up on this machine, the log's quotes only
        "sources": {str(o): n for o, n in sorted(Counter(session.source_origins.values()).items())},
        # a damaged log still opens; these say how damaged
        "diagnostics": len(session.diagnostics),
        "diagnostics_first": [_diagnostic(d) for d in session.diagnostics[:FIRST_DIAGNOSTICS]],
    }
    if session.mode_stats:
        shown = shown_stats(session)
        speed = speedups(shown)
        out["timeline"] = {
            m.mode: {
                "samples": m.samples,
                "median_ms": m.median_ms,
                "p99_ms": m.p99_ms,
                "compile_s": m.compile_s,
                "recompiles": m.recompiles,
                "peak_mem_bytes": m.peak_mem_bytes,
                "speedup": speed.get(m.mode),
                "baseline_ms": m.baseline_ms,
                "spread": m.spread,
                "baseline_spread": m.baseline_spread,
                "speedup_doubt": untrustworthy(m, speed.get(m.mode)) or None,
                **_runtime_summary(m),
            }
            for m in shown
        }
    if session.memory_budget:
        out["memory_budget"] = [dataclasses.asdict(p) for p in session.memory_budget]
    if len(session.meta.ranks) > 1:
        out["ranks_diff"] = _ranks_diff(session)
        out.update(ranks_summary(session))  # rank_divergence, rank_groups, stragglers, rank_skew
    if any(c.run for c in compiles):
        out["runs"] = _runs(session)
    return out


def _runs(session: Session) -> list[dict[str, Any]]:
    """Each run of the log counted on its own (run 1 first): what `torch._dynamo.explain()`
    would count for that run alone."""
    out = []
    for run in sorted({c.run for c in session.compiles}):
        mine = [c for c in session.compiles if c.run == run]
        out.append({
            "run": run + 1,
            "compiles": len(mine),
            "graphs": sum(1 for c in mine if c.dynamo_graph is not None),
            "graph_breaks": sum(len(c.graph_breaks) for c in mine),
            "distinct_breaks": len(distinct_breaks(session, all_ranks=True, run=run)),
            "recompiles": sum(1 for c in mine if recompiled(c)),
            "failures": sum(1 for c in mine if c.status == "failed"),
            "kernels": kernel_counts(o for c in mine for o in c.inductor).kernels,
        })  # fmt: skip
    return out


def _runtime_summary(m: ModeStats) -> dict[str, Any]:
    """Memory beside time, and where the time went: the five kernels with the most µs per step."""
    rt = m.runtime
    kernels = [(ref, v) for ref, v in ((Ref.decode(k), v) for k, v in m.time_by_ref.items())
               if ref.kind is RefKind.KERNEL]
    top = sorted(kernels, key=lambda kv: -kv[1])[:5]
    return {
        "saved_bytes": m.saved_bytes,
        "kernels_per_step": m.kernels,
        "launches_per_step": m.kernel_launches_per_step,
        "gpu_idle_ms_per_step": _ratio(rt.idle_us_per_step, 1000.0) if rt is not None else None,
        "cudagraph_share": _ratio(rt.cudagraph_us_per_step, rt.busy_us_per_step) if rt is not None else None,
        "top_kernels_us_per_step": {f"{ref.compile_id} {ref.key}": round(v, 1) for ref, v in top},
    }


def _ratio(part: float | None, whole: float | None) -> float | None:
    return part / whole if part is not None and whole else None


def _diagnostic(d: Diagnostic) -> str:
    where = f"{d.path}:{d.line}" if d.line is not None else d.path
    message = d.message.splitlines()[0][:200] if d.message else ""
    return f"{d.severity}: {where}: {message}" if where else f"{d.severity}: {message}"


def _label(c: Compile) -> str:
    return c.compile_id if c.rank is None else f"{c.rank}:{c.compile_id}"


def _op_count(c: Compile) -> int:
    assert c.dynamo_graph is not None
    return sum(1 for n in c.dynamo_graph.nodes if n.op.startswith("call_"))


def saved_bytes(c: Compile) -> int:
    """Bytes `c`'s forward saves for its backward, each storage once (the Overview counts so too)."""
    return aot_saved_bytes(c.aot)


def aot_saved_bytes(aot: AotInfo | None) -> int:
    """Saved bytes of one AOT partition, the views of one storage counted once."""
    return storage_bytes(aot.saved_tensors) if aot is not None else 0


def _ranks_diff(session: Session) -> dict[str, Any]:
    """Per-rank graph counts and compile seconds, reported only where ranks disagree."""
    graphs: dict[int, int] = {}
    seconds: dict[int, float] = {}
    for c in session.compiles:
        if c.rank is None:
            continue
        graphs[c.rank] = graphs.get(c.rank, 0) + (c.dynamo_graph is not None)
        seconds[c.rank] = seconds.get(c.rank, 0.0) + (c.metrics.total_s or 0.0)
    for r in session.meta.ranks:
        graphs.setdefault(r, 0)
        seconds.setdefault(r, 0.0)
    diff: dict[str, Any] = {}
    if len(set(graphs.values())) > 1:
        diff["graphs"] = {str(r): n for r, n in sorted(graphs.items())}
    if len({round(s, 1) for s in seconds.values()}) > 1:
        diff["compile_s"] = {str(r): round(s, 3) for r, s in sorted(seconds.items())}
    return diff

"""The Overview's stage sections: fallbacks, CUDA graphs, saved activations, compile time.

Every figure is read from the session as the stage panes read it: extern calls are the
`Kernel`s Inductor did not generate (`language == "extern"`), CUDA-graph facts are the
partitions' `CudaGraphInfo` and the timeline's recordings (`cudagraph_records`), saved bytes
de-duplicate views of one storage as `summary` does, compile seconds are torch's own timers.

Why an op fell back is said from what Inductor's output code calls: `extern_kernels.mm` is one
of the library kernels Inductor calls instead of generating code (GEMMs, convolutions), and
`torch.ops.aten.X` is an ATen fallback: Inductor has no lowering for X and calls the eager
kernel. Either runs as a call of its own, outside any fused kernel.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from pathlib import Path

from compiler_core.analysis.cudagraph_records import skip_summary, timeline_cudagraphs
from compiler_core.analysis.value_bounds import seconds
from compiler_core.overview.model import Fact, Level, Section, human_bytes, plural
from compiler_core.queries.summary import saved_bytes
from compiler_core.session.model import Compile, Session, SourceLoc
from compiler_core.session.refs import Ref
from compiler_core.trace.output_code import split_extern_name

MAX_FACTS = 8  # lines per section; the report's tables hold the rest
LIBRARY = "library kernel: Inductor calls it instead of generating code, as a call of its own"
ATEN_FALLBACK = "ATen fallback: Inductor has no lowering for this op and runs the eager kernel"


def _callee(name: str) -> str:
    return (split_extern_name(name) or (name, 1))[0]


def fallback_section(session: Session) -> tuple[Section, int]:
    """The section and how many calls were ATen fallbacks (the verdict names those)."""
    calls: dict[str, list[tuple[Compile, str, str]]] = defaultdict(list)
    for c in session.compiles:
        for o in c.inductor:
            for k in o.kernels:
                if k.language == "extern":
                    calls[_callee(k.name)].append((c, o.graph, k.name))
    if not calls:
        return Section("fallbacks", "Fallbacks", "No extern or fallback calls in the generated code."), 0
    ranked = sorted(calls.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    facts = []
    for callee, found in ranked[:MAX_FACTS]:
        library = callee.startswith("extern_kernels.")
        refs = tuple(Ref.kernel(c.compile_id, graph, name, c.rank) for c, graph, name in found)
        facts.append(Fact(f"{callee} ×{len(refs)}", LIBRARY if library else ATEN_FALLBACK, refs,
                          Level.INFO if library else Level.WARNING))  # fmt: skip
    total = sum(len(r) for r in calls.values())
    aten = sum(len(r) for name, r in calls.items() if not name.startswith("extern_kernels."))
    headline = f"{plural(total, 'call')} Inductor did not generate ({plural(len(calls), 'op')})"
    headline += f"; {aten} of them ATen fallbacks." if aten else "; all library kernels."
    return Section("fallbacks", "Fallbacks (extern and eager ops)", headline, tuple(facts)), aten


def cudagraph_section(session: Session) -> tuple[Section | None, int]:
    """The section (None when nothing in the session speaks of CUDA graphs: a CPU run, default
    mode) and how many partitions skipped them."""
    captured: list[tuple[Compile, str, str]] = []
    skipped: list[tuple[Compile, str, str]] = []
    for c in session.compiles:
        for o in c.inductor:
            if o.cudagraph is not None:
                (captured if o.cudagraph.captured else skipped).append((c, o.graph, o.cudagraph.skip_reason))
    timed = timeline_cudagraphs(session)
    if not captured and not skipped and not timed:
        return None, 0
    facts = []
    for c, graph, reason in skipped[:MAX_FACTS]:
        facts.append(Fact(f"{c.compile_id} {graph}: skipped, {skip_summary(reason)}",
                          "Fix what the reason names, or that partition replays kernel by kernel",
                          (Ref.compile(c.compile_id, c.rank),), Level.WARNING))  # fmt: skip
    for mode, graphs, share in timed:
        inside = f", {share:.0%} of the device's busy time inside them" if share is not None else ""
        facts.append(Fact(f"{mode}: {plural(graphs, 'CUDA graph')} recorded in the timed steps{inside}"))
    parts = len(captured) + len(skipped)
    headline = (f"{len(captured)} of {plural(parts, 'partition')} captured into CUDA graphs" if parts
                else "The capture's compile recorded no CUDA-graph decisions")  # fmt: skip
    headline += f", {len(skipped)} skipped." if skipped else "."
    return Section("cudagraphs", "CUDA graphs", headline, tuple(facts)), len(skipped)


def memory_section(session: Session) -> Section | None:
    """Saved-for-backward bytes per compile (views of one storage once) and the lines whose
    forward values take the most: None for a session without a backward."""
    trained = [c for c in session.compiles if c.aot is not None and c.aot.saved_tensors]
    if not trained:
        return None
    ranks = sorted({c.rank for c in trained}, key=lambda r: (r is None, r))
    if len(ranks) > 1:  # each rank holds its own activations: one rank's, not their sum
        trained = [c for c in trained if c.rank == ranks[0]]
    total = sum(saved_bytes(c) for c in trained)
    by_line: dict[tuple[str, int, str], dict[str, int]] = defaultdict(dict)
    refs: dict[tuple[str, int, str], list[Ref]] = defaultdict(list)
    inputs: dict[str, int] = {}  # storage -> bytes: views of one parameter count once, as in `total`
    for c in trained:
        aot = c.aot
        assert aot is not None
        for t in aot.saved_tensors:
            fw = aot.forward
            node = fw.node(t.producer) if fw is not None else None
            base = fw.node(t.storage_key) if fw is not None and t.storage_key else None
            storage = f"{c.rank}:{c.compile_id}:{t.storage_key or t.name}"
            if node is None or "placeholder" in (node.op, base.op if base is not None else ""):
                inputs[storage] = max(inputs.get(storage, 0), t.bytes)  # alive anyway: an input or a view
                continue
            loc = node.source or SourceLoc("", 0)
            key = (loc.file, loc.line, node.module_path)
            by_line[key][storage] = max(by_line[key].get(storage, 0), t.bytes)
            refs[key].append(Ref.saved_tensor(c.compile_id, t.name, c.rank))
    facts = []
    ranked = sorted(by_line.items(), key=lambda kv: -sum(kv[1].values()))
    for (file, line, module), storages in ranked[:MAX_FACTS]:
        where = f"{Path(file).name}:{line}" if file else "no source line"
        module_text = f" ({module})" if module else ""
        line_ref = [Ref.source_line(file, line, refs[(file, line, module)][0].rank)] if file else []
        facts.append(Fact(f"{human_bytes(sum(storages.values()))} saved by {where}{module_text}, "
                          f"{plural(len(refs[(file, line, module)]), 'tensor')}",
                          refs=(*refs[(file, line, module)], *line_ref)))  # fmt: skip
    recomputed = sum(len(c.aot.recomputed) for c in trained if c.aot)
    alive = human_bytes(sum(inputs.values()))
    headline = (f"{human_bytes(total)} saved for the backward ({alive} of it inputs and parameters, alive "
                f"anyway); {plural(recomputed, 'node')} recomputed instead of saved.")
    if len(ranks) > 1:
        headline = f"Rank {ranks[0]} (each rank saves its own): {headline[0].lower()}{headline[1:]}"
    for p in session.memory_budget:
        if not p.error:
            step = f", {p.step_ms:.2f} ms/step" if p.step_ms is not None else ""
            facts.append(Fact(f"activation_memory_budget {p.budget:g}: {human_bytes(p.saved_bytes)} saved, "
                              f"{p.recomputed} recomputed{step}"))  # fmt: skip
    return Section("memory", "Saved activations", headline, tuple(facts))


# torch's timers nest: backend ⊃ aot ⊃ inductor ⊃ codegen; Dynamo's tracing and the lazily
# compiled backward stand apart. Each stage's own time is its timer less the one inside it.
STAGE_NAMES = (("dynamo", "", "Dynamo tracing"), ("backend", "aot", "backend other than AOT"),
               ("aot", "inductor", "AOTAutograd"), ("inductor", "codegen", "Inductor lowering"),
               ("codegen", "", "Inductor code generation"), ("backward", "", "backward (at first call)"))


def compile_total(c: Compile) -> float:
    return (seconds(c.metrics.total_s) or 0.0) + (seconds(c.metrics.stage_s.get("backward")) or 0.0)


def compile_time_section(session: Session) -> Section | None:
    timed = [c for c in session.compiles if c.metrics.total_s or c.metrics.stage_s]
    if not timed:
        return None
    sums: dict[str, float] = defaultdict(float)
    for c in timed:
        for stage, value in c.metrics.stage_s.items():
            sums[stage] += seconds(value) or 0.0
    own = [(label, sums[stage] - (sums[inner] if inner else 0.0)) for stage, inner, label in STAGE_NAMES]
    totals = [(compile_total(c), i) for i, c in enumerate(timed)]
    total = sum(t for t, _ in totals)
    stages = ", ".join(f"{label} {s:.1f} s" for label, s in own if s >= 0.05)
    facts = [Fact(f"By stage: {stages}")] if stages else []
    # the three slowest, the earlier first among equals (-i); totals computed once: 1e5 compiles
    for seconds_, neg in heapq.nlargest(3, ((t, -i) for t, i in totals if t >= 0.05)):
        c = timed[-neg]
        cache = ", ".join(f"{k} {v}" for k, v in sorted(c.metrics.cache.items()))
        name = f" {c.code.function}" if c.code and c.code.function else ""
        rank = f"rank {c.rank} " if c.rank is not None else ""
        cached = f" (cache: {cache})" if cache else ""
        facts.append(Fact(f"{rank}{c.compile_id}{name}: {seconds_:.1f} s{cached}",
                          refs=(Ref.compile(c.compile_id, c.rank),)))
    headline = f"{total:.1f} s compiling {plural(len(timed), 'compile')}"
    by_rank: dict[int | None, float] = defaultdict(float)
    for t, i in totals:
        by_rank[timed[i].rank] += t
    if len(by_rank) > 1:  # ranks compile side by side: the slowest is what the job waited
        headline += f" over {len(by_rank)} ranks ({max(by_rank.values()):.1f} s on the slowest)"
    headline += "."
    return Section("compile_time", "Compile time", headline, tuple(facts))

"""`build_overview(session)`: the page every session and log opens on, as one `Overview`.

It answers "is this compile healthy, and what should I fix first?" with the sections in fix
order (breaks, recompiles, fallbacks, CUDA graphs, saved activations, compile time, step time,
where the step's time goes) and, where a log holds several ranks or runs, one line per rank or
run so that a rank that compiled differently stands out. Sections with nothing to say about
this session (no backward, no CUDA graphs, no timings) are left out and named in `notes`.

Cost: the break and recompile rows are the core's (`distinct_breaks`, `distinct_recompiles`);
the rest is one pass over compiles, kernels and saved tensors, so it stays cheap on deep models
(docs/benchmarks.md, "Overview and report").
"""

from __future__ import annotations

from pathlib import Path

from compiler_core.overview.break_facts import break_section
from compiler_core.overview.model import Fact, Level, Overview, Section, plural
from compiler_core.overview.recompile_facts import recompile_count, recompile_section
from compiler_core.overview.stage_facts import (
    compile_time_section,
    compile_total,
    cudagraph_section,
    fallback_section,
    memory_section,
)
from compiler_core.overview.step_facts import kernel_time_section, mode_figures, step_section
from compiler_core.overview.verdict import Measures, verdict
from compiler_core.queries.break_ranking import distinct_breaks
from compiler_core.ranks.stragglers import straggler_report
from compiler_core.session.model import Compile, Session
from compiler_core.session.refs import Ref

LEFT_OUT = {
    "cudagraphs": "CUDA graphs: nothing recorded (a CPU run, or a mode without CUDA graphs)",
    "memory": "Saved activations: no backward graph in this session",
    "compile_time": "Compile time: the log records no compile timers",
    "step_time": "Step time: not timed (capture with --steps, or run the Timeline)",
    "kernel_times": "Kernel times: no profiled step",
}


def _scope_line(label: str, compiles: list[Compile], breaks: int) -> str:
    graphs = sum(1 for c in compiles if c.dynamo_graph is not None)
    recompiles = sum(1 for c in compiles if c.recompile_reasons)
    failed = sum(1 for c in compiles if c.status == "failed")
    seconds = sum(compile_total(c) for c in compiles)  # the backward's lazy compile included
    text = (f"{label}: {plural(len(compiles), 'compile')}, {plural(graphs, 'graph')}, "
            f"{plural(breaks, 'graph break')}, {plural(recompiles, 'recompile')}, {seconds:.1f} s compiling")
    return text + (f", {failed} failed" if failed else "")  # fmt: skip


def scope_section(session: Session, key: str) -> Section | None:
    """One line per rank (`key == "ranks"`) or per run of the log; None where there is one."""
    by_rank = key == "ranks"
    scopes = sorted({(c.rank if by_rank else c.run) for c in session.compiles}, key=lambda s: (s is None, s))
    if len(scopes) < 2:
        return None
    facts, shapes = [], set()
    for scope in scopes:
        mine = [c for c in session.compiles if (c.rank if by_rank else c.run) == scope]
        rows = (distinct_breaks(session, rank=scope) if by_rank
                else distinct_breaks(session, all_ranks=True, run=scope))
        breaks = sum(r.count for r in rows)
        shape = (sum(1 for c in mine if c.dynamo_graph is not None), breaks)
        shapes.add(shape)
        label = f"rank {scope}" if by_rank else f"run {int(scope or 0) + 1}"
        ref = Ref.compile(mine[0].compile_id, mine[0].rank)
        facts.append(Fact(_scope_line(label, mine, breaks), refs=(ref,)))
    differ = len(shapes) > 1
    if differ:
        facts = [Fact(f.text, "differs from another " + ("rank" if by_rank else "run"), f.refs, Level.WARNING)
                 for f in facts]  # fmt: skip
    if by_rank:  # a rank consistently slower than the others holds every collective back
        facts += [Fact(s.text(), "every other rank waits for it at each collective",
                       (Ref.compile(*_first_compile(session, s.rank)),), Level.WARNING)
                  for s in straggler_report(session).stragglers]
    what = "rank" if by_rank else "run"
    same = "graphs or breaks differ between them." if differ else "the same graphs and breaks in each."
    headline = f"{plural(len(scopes), what)}: {same}"
    return Section(key, "Ranks" if by_rank else "Runs of this log", headline, tuple(facts))


def _first_compile(session: Session, rank: int) -> tuple[str, int | None]:
    c = next((c for c in session.compiles if c.rank == rank), session.compiles[0])
    return c.compile_id, c.rank


def failure_section(session: Session) -> Section | None:
    """Compiles that failed for another reason than a graph break Dynamo could not resume after
    (those are rows of the breaks section): a backend or Inductor error, an internal error. The
    frame then runs eagerly, so each costs its whole speedup; one fact per distinct error."""
    failed = [c for c in session.compiles
              if c.status == "failed" and not c.failure.lstrip().startswith("Unsupported")]
    if not failed:
        return None
    by_error: dict[str, list[Compile]] = {}
    for c in failed:
        lines = [line.strip() for line in c.failure.splitlines() if line.strip()] or ["no reason recorded"]
        first = " ".join(lines[:2]) if lines[0].endswith(":") else lines[0]  # "X raised:" says what next
        by_error.setdefault(first[:200], []).append(c)
    facts = []
    for error, compiles in by_error.items():
        c = compiles[0]
        where = f" in {c.code.function} at {Path(c.code.file).name}:{c.code.line}" if c.code else ""
        ids = ", ".join(x.compile_id for x in compiles[:6]) + (" …" if len(compiles) > 6 else "")
        facts.append(Fact(f"{plural(len(compiles), 'compile')} failed{where}: {error}",
                          f"compiles {ids}; the frame ran eagerly",
                          tuple(Ref.compile(x.compile_id, x.rank) for x in compiles), Level.WARNING))
    headline = f"{plural(len(failed), 'compile')} failed and ran eagerly."
    return Section("failures", "Failed compiles", headline, tuple(facts))


def build_overview(session: Session) -> Overview:
    breaks, rows = break_section(session)
    recompiles, causes, limited = recompile_section(session)
    fallbacks, aten_calls = fallback_section(session)
    figures = mode_figures(session)
    cudagraphs, skips = cudagraph_section(session)
    optional = {
        "cudagraphs": cudagraphs,
        "memory": memory_section(session),
        "compile_time": compile_time_section(session),
        "step_time": step_section(session, figures),
        "kernel_times": kernel_time_section(session),
    }
    sections = [breaks, recompiles, fallbacks]
    scopes = (scope_section(session, "ranks"), scope_section(session, "runs"))
    failures = failure_section(session)
    sections += [s for s in (failures, *scopes, *optional.values()) if s is not None]
    order = ["failures", "breaks", "recompiles", "ranks", "runs", "step_time", "fallbacks", "cudagraphs",
             "memory", "compile_time", "kernel_times"]
    sections.sort(key=lambda s: order.index(s.key))
    measures = Measures(
        breaks=rows, causes=causes, recompiles=recompile_count(session),
        limited=limited, figures=figures, own_mode=session.meta.mode or "default",
        aten_fallbacks=aten_calls, cudagraph_skips=skips,
        failed=sum(len(f.refs) for f in failures.facts) if failures else 0,
    )
    notes = tuple(text for key, text in LEFT_OUT.items() if optional[key] is None)
    title = Path(session.meta.origin_path).name if session.meta.origin_path else ""
    return Overview(verdict(measures), tuple(sections), title, notes)

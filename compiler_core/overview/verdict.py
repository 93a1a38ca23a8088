"""The verdict line: the lesson's "graph breaks, recompiles likely, expected speedup", said from
what was measured and nothing else.

Each clause is a count or a measurement the sections show, in fix-first order: breaks (with
their share of the step where a capture profiled the eager time between graphs), recompiles
(with the change behind the most frequent one, and frames that hit the recompile limit), ATen
fallbacks and CUDA-graph skips when there are any, then the best speedup with its spread. A
speedup inside its own noise is called that, and a session without timings says it was not
timed rather than guessing one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from compiler_core.overview.break_facts import first_line
from compiler_core.overview.model import plural
from compiler_core.overview.recompile_facts import limit_words
from compiler_core.overview.step_facts import ModeFigure, doubt_words, speedup_text
from compiler_core.queries.break_ranking import DistinctBreak
from compiler_core.queries.recompile_explain import RecompileCause
from compiler_core.queries.step_stats import EAGER
from compiler_core.session.model import Compile


@dataclass(frozen=True)
class Measures:
    """What the verdict is stated from (each field filled from the sections' own rows)."""

    breaks: list[DistinctBreak] = field(default_factory=list)
    causes: list[RecompileCause] = field(default_factory=list)
    recompiles: int = 0
    limited: list[Compile] = field(default_factory=list)
    figures: list[ModeFigure] = field(default_factory=list)
    own_mode: str = ""  # the capture's mode: the one whose step the break gaps were profiled in
    aten_fallbacks: int = 0
    cudagraph_skips: int = 0
    failed: int = 0  # compiles that failed for another reason than a graph break (they ran eagerly)


def break_clause(m: Measures) -> str:
    if not m.breaks:
        return "no graph breaks"
    count = sum(b.count for b in m.breaks)
    measured = [b.measured_ms for b in m.breaks if b.measured_ms is not None]
    mode = m.own_mode or "default"
    step = next((f.median_ms for f in m.figures if f.mode == mode), None)
    if measured and step:
        share = sum(measured) / step
        shown = f"{share:.0%}" if share >= 0.1 else f"{share:.1%}"
        return f"{plural(count, 'graph break')} cost {shown} of the {mode} step ({sum(measured):.3f} ms)"
    split = sum(b.graphs_split for b in m.breaks)
    return f"{plural(count, 'graph break')} ({plural(len(m.breaks), 'cause')}) split {plural(split, 'graph')}"


def recompile_clause(m: Measures) -> str:
    if not m.recompiles:
        return "no recompiles"
    text = plural(m.recompiles, "recompile")
    if m.causes:
        top = m.causes[0]
        guard = first_line(top.guard, 100)
        what = f"{guard} changed" if top.fix else f"guard {guard} failed"
        if len(m.causes) == 1:
            text += f": {what}"
        elif top.count > m.causes[1].count:
            text += f", {top.count} of them: {what}"
        else:
            text += f" from {plural(len(m.causes), 'cause')}"
    if m.limited:
        text += f"; {limit_words(m.limited)}"
    return text


def speed_clause(m: Measures) -> str:
    compiled = [f for f in m.figures if f.mode != EAGER and f.speedup is not None]
    if not compiled:
        return "step time not measured against eager" if m.figures else "not timed"
    best = max(compiled, key=lambda f: f.speedup or 0.0)
    if best.doubt:
        return f"{best.mode} {best.speedup:.2f}× eager's speed, {doubt_words(best)}"
    return f"{best.mode} {speedup_text(best)}"


def verdict(m: Measures) -> str:
    clauses = [f"{plural(m.failed, 'compile')} failed and ran eagerly"] if m.failed else []
    clauses += [break_clause(m), recompile_clause(m)]
    if m.aten_fallbacks:
        clauses.append(f"{plural(m.aten_fallbacks, 'ATen fallback call')}")
    if m.cudagraph_skips:
        clauses.append(f"{plural(m.cudagraph_skips, 'partition')} skipped CUDA graphs")
    clauses.append(speed_clause(m))
    text = "; ".join(clauses)
    return text[:1].upper() + text[1:]

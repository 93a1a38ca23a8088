"""Graph breaks de-duplicated and ranked by what they cost: the list a user fixes from the top.

The same break recurs: in every recompile of a frame, in each restart attempt Dynamo logs, in
each resume function that re-enters the same code (GPT-2's loss warning breaks three frames), and
on every rank. One row per (graph-break code, specific reason, user line) with a count.

Cost, from what a log holds (no profile needed), in ranking order:
- `graphs_split`: Dynamo graphs the break ends, plus frames it sends to eager whole (a frame whose
  graph is empty, or whose rest Dynamo skipped because it could not resume). Each is a graph
  boundary: a kernel launch gap, a guard check and lost fusion at every step.
- `ops_cut`: call ops in the graphs the break ends (the fused region it cuts off from the code
  after it; a break under a 500-op ResNet body costs more than one under 3 ops).
- `count`: occurrences.
`measured_ms` and `ops_outside` come from a capture's profiled step (`Session.eager_gaps`): the
eager time and aten ops between the end of the graph a break ends and the next compiled region.
Where measured, time ranks first. Imported logs hold no profile: both stay None.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from compiler_core.session.model import Compile, GraphBreak, Session, SourceLoc
from compiler_core.session.refs import Ref

BreakKey = tuple[str, str, str, int]  # gb code, reason, file, line (line 0 when unknown)


@dataclass
class DistinctBreak:
    """One cause of graph breaks and every place it occurred."""

    key: BreakKey
    first: GraphBreak  # the first occurrence: explanation, hints, traceback
    refs: list[Ref] = field(default_factory=list)  # one GRAPH_BREAK ref per occurrence
    compile_ids: list[str] = field(default_factory=list)
    not_resumed: list[str] = field(default_factory=list)  # compiles whose frame Dynamo skipped after it
    graphs_split: int = 0
    ops_cut: int = 0
    measured_ms: float | None = None
    ops_outside: int | None = None

    @property
    def count(self) -> int:
        return len(self.refs)

    @property
    def reason(self) -> str:
        return self.first.reason

    def resume_note(self) -> str:
        """Where Dynamo could not resume after the break ("" where it resumed everywhere)."""
        if not self.not_resumed:
            return ""
        if len(self.not_resumed) == len(self.compile_ids):
            return "Dynamo could not resume after it: the rest of the function ran eagerly."
        where = ", ".join(self.not_resumed)
        return f"In {where} Dynamo could not resume after it: the rest of that function ran eagerly."

    @property
    def gb_code(self) -> str:
        return self.first.gb_code

    @property
    def location(self) -> SourceLoc | None:
        return self.first.location

    def rank_key(self) -> tuple[float, int, int, int]:
        return (-(self.measured_ms or 0.0), -self.graphs_split, -self.ops_cut, -self.count)

    def as_dict(self) -> dict[str, object]:
        loc = self.location
        return {
            "reason": self.reason,
            "gb_code": self.gb_code,
            "file": loc.file if loc else "",
            "line": loc.line if loc else 0,
            "count": self.count,
            "hints": list(self.first.hints),
            "graphs_split": self.graphs_split,
            "ops_cut": self.ops_cut,
            "measured_ms": None if self.measured_ms is None else round(self.measured_ms, 3),
            "ops_outside": self.ops_outside,
        }


def break_key(brk: GraphBreak) -> BreakKey:
    loc = brk.location
    return (brk.gb_code, brk.reason, loc.file if loc else "", loc.line if loc else 0)


def distinct_breaks(
    session: Session, rank: int | None = None, all_ranks: bool = False, run: int | None = None
) -> list[DistinctBreak]:
    """Rows ranked most costly first; `rank` picks one rank's compiles unless `all_ranks`, `run`
    one run of the log (None: every run; a log may hold several, see compile_records.py)."""
    rows: dict[BreakKey, DistinctBreak] = {}
    for c in session.compiles:  # a million of them in some logs: the breakless skipped first
        if not c.graph_breaks or (not all_ranks and c.rank != rank) or (run is not None and c.run != run):
            continue
        ops = _op_count(c)
        seen_here: set[BreakKey] = set()
        for i, brk in enumerate(c.graph_breaks):
            key = break_key(brk)
            row = rows.get(key)
            if row is None:
                row = rows[key] = DistinctBreak(key, brk)
            row.refs.append(Ref.graph_break(c.compile_id, i, c.rank))
            if key in seen_here:
                continue  # a restart attempt logging the same break again splits no new graph
            seen_here.add(key)
            row.compile_ids.append(c.compile_id)
            if not brk.resumable:
                row.not_resumed.append(c.compile_id)
            row.graphs_split += 1
            row.ops_cut += ops
            gap = session.eager_gaps.get(c.compile_id if c.rank is None else f"{c.rank}:{c.compile_id}")
            if gap is not None:
                row.measured_ms = (row.measured_ms or 0.0) + gap.ms
                row.ops_outside = (row.ops_outside or 0) + gap.ops
    return sorted(rows.values(), key=lambda r: (r.rank_key(), r.key))


def _op_count(c: Compile) -> int:
    if c.dynamo_graph is None:
        return 0
    return sum(1 for n in c.dynamo_graph.nodes if n.op.startswith("call_"))

"""The Overview's graph-break section: `distinct_breaks` rows as lines, each with its fix.

The ranking is the core's (`break_ranking.py`: measured eager time first, then graphs split,
ops cut off, occurrences); this module only words each row. The fix is Dynamo's own first hint
(it names the config flag or the rewrite), and a break Dynamo could not resume after says that
the rest of its function ran eagerly, since that costs more than a split.
"""

from __future__ import annotations

from pathlib import Path

from compiler_core.overview.model import Fact, Level, Section, plural
from compiler_core.queries.break_ranking import DistinctBreak, distinct_breaks
from compiler_core.session.model import Session, SourceLoc
from compiler_core.session.refs import Ref

MAX_REASON = 160  # characters of a reason on its line; the whole text is in the detail


def where(loc: SourceLoc | None) -> str:
    """`model.py:18 in forward`: the file's name, not its path, as the break pane writes it."""
    if loc is None:
        return "an unknown line"
    fn = f" in {loc.function}" if loc.function else ""
    return f"{Path(loc.file).name}:{loc.line}{fn}"


def first_line(text: str, limit: int = MAX_REASON) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def break_cost(row: DistinctBreak) -> str:
    """What the row costs, from what the session holds: measured eager time where a capture
    profiled a step, the graphs it splits and the ops it cuts off always."""
    parts = [f"splits {plural(row.graphs_split, 'graph')}", f"cuts off {plural(row.ops_cut, 'op')}"]
    if row.measured_ms is not None:
        parts.insert(0, f"{row.measured_ms:.3f} ms eager per step ({plural(row.ops_outside or 0, 'op')})")
    return ", ".join(parts)


def break_fact(row: DistinctBreak) -> Fact:
    b = row.first
    code = f"{b.gb_code} " if b.gb_code else ""
    times = f" ×{row.count}" if row.count > 1 else ""
    text = f"{code}{first_line(b.reason)} at {where(row.location)}{times}: {break_cost(row)}"
    detail = []
    if b.hints:
        detail.append(f"Fix: {b.hints[0]}")
    elif b.explanation:
        detail.append(b.explanation)
    if row.resume_note():
        detail.append(row.resume_note())
    loc = row.location
    rank = row.refs[0].rank if row.refs else None
    refs = (*row.refs, *([Ref.source_line(loc.file, loc.line, rank)] if loc else []))
    return Fact(text, "\n".join(detail), refs, Level.WARNING)


def break_section(session: Session) -> tuple[Section, list[DistinctBreak]]:
    """The section and the rows it words (the verdict and the report read the same rows)."""
    rows = distinct_breaks(session, all_ranks=True)
    total = sum(row.count for row in rows)
    if not rows:
        return Section("breaks", "Graph breaks", "No graph breaks recorded."), rows
    split = sum(row.graphs_split for row in rows)
    causes = plural(len(rows), "cause")
    headline = f"{plural(total, 'graph break')} from {causes} split {plural(split, 'graph')}."
    return Section("breaks", "Graph breaks", headline, tuple(break_fact(r) for r in rows)), rows

"""CUDA graphs: for each compiled partition, captured into a CUDA graph or skipped, and why.

reduce-overhead and max-autotune replay a whole step with one launch, unless a graph is unsafe
to replay (CPU tensors, input mutation, dynamic shapes...). Inductor only *logs* why it skipped;
this pane puts that sentence next to the graph, with re-recordings and the launch counts per
step with and without graphs (from the timeline's mode statistics, when a run measured them).
"""

from __future__ import annotations

from PySide6.QtWidgets import QVBoxLayout

from compiler_core.analysis.cudagraph_records import skip_summary, timeline_cudagraphs
from compiler_core.session import Compile, Ref, Session
from explorer.panes.base import Pane
from explorer.panes.stage_table import StageTable
from explorer.plain_text import plain_label
from explorer.state import SelectionModel, SessionState

COLUMNS = ("Compile", "Graph", "CUDA graph", "Why skipped", "Re-recordings")


def cudagraph_rows(session: Session) -> list[tuple[Compile, str, tuple[str, ...], str]]:
    """(compile, partition, cells, full reason) for every partition with CUDA-graph info."""
    out: list[tuple[Compile, str, tuple[str, ...], str]] = []
    for c in session.compiles:
        for o in c.inductor:
            info = o.cudagraph
            if info is None:
                continue
            status = "captured" if info.captured else "skipped"
            again = "; ".join(info.rerecords) if info.rerecords else ""
            cells = (c.compile_id, o.graph, status, skip_summary(info.skip_reason), again)
            out.append((c, o.graph, cells, info.skip_reason))
    return out


def launches_text(session: Session) -> str:
    by_mode = {s.mode: s.kernel_launches_per_step for s in session.mode_stats}
    parts = [f"{m}: {n}" for m, n in by_mode.items() if n is not None]
    return "Launches per step — " + ", ".join(parts) if parts else ""


class CudaGraphPane(Pane):
    title = "CUDA graphs"
    stage = "inductor"

    def __init__(self, state: SessionState, selection: SelectionModel) -> None:
        super().__init__(state, selection)
        self.entries: list[tuple[Compile, str, tuple[str, ...], str]] = []
        self.note = plain_label()
        self.note.setWordWrap(True)
        self.table = StageTable(COLUMNS)
        self.table.cellClicked.connect(self._clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.note)
        layout.addWidget(self.table)

    def on_session(self, session: Session) -> None:
        self.entries = cudagraph_rows(session)
        self.table.set_rows([e[2] for e in self.entries], [e[3] for e in self.entries])
        skipped = sum(1 for e in self.entries if e[2][2] == "skipped")
        timed = timeline_cudagraphs(session)
        if self.entries:
            head = f"{len(self.entries) - skipped} graph(s) captured, {skipped} skipped."
        elif timed:
            runs = "; ".join(f"{mode}: {n} graph(s) recorded" + (f", {share:.0%} of the GPU's busy time "
                             "inside them" if share is not None else "") for mode, n, share in timed)
            head = (f"The timeline ran with CUDA graphs ({runs}). The capture's own compile used "
                    f"mode '{session.meta.mode}', so which partitions were captured or skipped, and "
                    "why, is not recorded: capture with that mode to see it here.")
        else:
            head = ("No CUDA-graph information: capture on a GPU with mode='reduce-overhead' "
                    "or 'max-autotune'.")
        launches = launches_text(session)
        self.note.setText(head + (f" {launches}" if launches else ""))

    def _clicked(self, r: int, _c: int) -> None:
        if 0 <= r < len(self.entries):
            c = self.entries[r][0]
            self.selection.select({Ref.compile(c.compile_id, c.rank)})

    def on_selection(self, selected: frozenset[Ref], highlighted: frozenset[Ref]) -> None:
        ids = {(r.compile_id, r.rank) for r in selected}
        self.table.highlight({i for i, e in enumerate(self.entries) if (e[0].compile_id, e[0].rank) in ids})

    def has_content(self) -> bool:
        return bool(self.entries)

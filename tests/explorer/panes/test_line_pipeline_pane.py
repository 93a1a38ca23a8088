"""The per-line pipeline table on a real model's session (bench/corpus: Phi on a GPU), filled
in slices of the event loop as the main window does: every line the links reach gets its row,
in order, with the cells a direct computation gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from compiler_core.session import LinkIndex, load
from explorer.panes.line_pipeline_pane import LinePipelinePane, row_cells
from explorer.state import SessionState
from explorer.state.line_facts import line_facts
from explorer.state.runtime_times import runtime_times

ROOT = Path(__file__).resolve().parents[3]


def test_every_linked_line_gets_its_row_when_filled_in_slices(qtbot: Any) -> None:
    session = load(ROOT / "bench" / "corpus" / "sessions" / "cuda" / "hf_phi_infer.json.xz")
    state = SessionState()
    state.updates.spread = True
    pane = LinePipelinePane(state, state.selection)
    qtbot.addWidget(pane)
    state.set_session(session, "", LinkIndex(session.links))
    qtbot.waitUntil(lambda: state.updates.pending() == 0, timeout=30_000)
    rank = state.current.rank if state.current is not None else None
    facts = sorted(line_facts(session, state.links, rank).items())
    assert len(facts) > 40  # more than one slice
    assert pane.tree.topLevelItemCount() == len(facts)
    times = runtime_times(session)
    for i in (0, len(facts) // 2, len(facts) - 1):
        (file, line), f = facts[i]
        item = pane.tree.topLevelItem(i)
        shown = [item.text(c) for c in range(pane.tree.columnCount())]
        ref = item.data(0, Qt.ItemDataRole.UserRole)
        assert (ref.path, ref.line) == (file, line)
        assert shown == row_cells(session, file, line, f, times.get(ref))

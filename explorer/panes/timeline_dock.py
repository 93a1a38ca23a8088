"""Hosts the timeline engineer's `TimelinePane` (explorer/panes/timeline_pane.py) in a dock.

The pane is owned elsewhere and may not be installed yet; until it is, a label says so rather
than the window failing to start.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from explorer.plain_text import plain_label
from explorer.state import SessionState


def make_timeline_pane(state: SessionState) -> QWidget:
    try:
        from explorer.panes.timeline_pane import TimelinePane
    except ImportError:
        label = plain_label("Timeline: no step timings in this session.")
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        return label
    pane = TimelinePane()
    state.sessionChanged.connect(pane.set_session)
    return pane

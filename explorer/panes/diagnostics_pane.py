"""Diagnostics: every problem met while building the session, one row each, with its log line.

A damaged log still opens (that is the point of the tolerant reader), so something must say it is
damaged, or its warnings sit unseen in `session.diagnostics`. This pane lists them; the
window's banner (`explorer.diagnostics_banner`) says that there are any and leads here.

At most `MAX_ROWS` rows are built (a 1e6-warning session must not stall the GUI thread); a last
row says how many more there are.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem, QVBoxLayout

from compiler_core.session import Session
from compiler_core.session.model import Diagnostic
from explorer.panes.base import Pane
from explorer.plain_text import plain_label, tip
from explorer.state import SelectionModel, SessionState

MAX_ROWS = 2000
COLUMNS = ("Severity", "File", "Line", "Stage", "Message")
SERIOUS = ("warning", "error")


def serious(diagnostics: tuple[Diagnostic, ...]) -> list[Diagnostic]:
    """The ones worth a banner: warnings and errors (an `info` note is not damage)."""
    return [d for d in diagnostics if d.severity in SERIOUS]


def count_text(diagnostics: tuple[Diagnostic, ...]) -> str:
    by: dict[str, int] = {}
    for d in diagnostics:
        by[d.severity] = by.get(d.severity, 0) + 1
    parts = [f"{n:,} {sev}{'s' if n != 1 else ''}" for sev, n in sorted(by.items())]
    return ", ".join(parts) or "no problems"


class DiagnosticsPane(Pane):
    title = "Diagnostics"
    stage = "source"

    def __init__(self, state: SessionState, selection: SelectionModel) -> None:
        super().__init__(state, selection)
        self.summary = plain_label("No session loaded.")
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addWidget(self.tree)

    def on_session(self, session: Session) -> None:
        self.tree.clear()
        diags = session.diagnostics
        self.summary.setText(f"{count_text(diags)} while building this session." if diags else
                             "No problems were met while building this session.")
        items = []
        for d in diags[:MAX_ROWS]:
            message = d.message.splitlines()[0] if d.message else ""
            row = [d.severity, Path(d.path).name if d.path else "", "" if d.line is None else str(d.line),
                   d.stage, message if len(message) <= 300 else message[:299] + "…"]  # full text: tooltip
            item = QTreeWidgetItem(row)
            item.setToolTip(1, tip(d.path))
            item.setToolTip(4, tip(d.message))
            items.append(item)
        if len(diags) > MAX_ROWS:
            items.append(QTreeWidgetItem(["", "", "", "", f"… {len(diags) - MAX_ROWS:,} more not listed "
                                          "(python -m compiler_core summary prints the count)"]))
        self.tree.addTopLevelItems(items)
        for col in range(4):
            self.tree.resizeColumnToContents(col)

    def has_content(self) -> bool:
        return self.tree.topLevelItemCount() > 0

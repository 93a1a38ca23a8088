"""The banner that says a session was built from a damaged log (issue 12, row 9).

A toolbar strip under the navigation bar, not a dialog: the window stays usable, the session is
shown as far as it could be read, and the banner says how much went wrong, quotes the first
problem and offers the Diagnostics pane. It hides when a clean session is loaded, or on Dismiss.

Signals: `showRequested()` — the user asked to see the Diagnostics pane.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QPushButton, QToolBar, QWidget

from compiler_core.session import Session
from explorer.panes.diagnostics_pane import count_text, serious
from explorer.plain_text import plain_label, tip

QUOTE = 90  # characters of the first problem quoted in the banner; the tooltip has all of it


def banner_text(session: Session) -> str:
    bad = serious(session.diagnostics)
    if not bad:
        return ""
    first = bad[0]
    where = f"line {first.line}: " if first.line is not None else ""
    quote = f"{where}{first.message}".splitlines()[0] if first.message else where
    quote = quote if len(quote) <= QUOTE else quote[: QUOTE - 1] + "…"  # fits a 1366 px window
    if not session.compiles:  # not damaged: a log of another kind (torch.export), or empty
        return f"⚠ Nothing to show: {quote}"
    return f"⚠ This session was built from damaged input: {count_text(tuple(bad))}. First: {quote}"


class DiagnosticsBanner(QToolBar):
    showRequested = Signal()  # noqa: N815 (Qt signal naming)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Diagnostics", parent)
        self.setObjectName("DiagnosticsBanner")
        self.setMovable(False)
        self.setFloatable(False)
        self.setStyleSheet("QToolBar#DiagnosticsBanner { background: #fff4ce; "
                           "border-bottom: 1px solid #e0c060; }")
        self.label = plain_label()
        self.label.setMinimumWidth(200)
        self.addWidget(self.label)
        self.show_button = QPushButton("Show diagnostics")
        self.show_button.clicked.connect(self.showRequested.emit)
        self.addWidget(self.show_button)
        dismiss = QPushButton("Dismiss")
        dismiss.clicked.connect(self.hide)
        self.addWidget(dismiss)
        self.hide()

    def set_session(self, session: Session) -> None:
        text = banner_text(session)
        self.label.setText(text)
        first = serious(session.diagnostics)[:1]
        self.label.setToolTip(tip(first[0].message) if first else "")
        self.setVisible(bool(text))

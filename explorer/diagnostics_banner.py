"""The banner that says a session was built from a damaged log, that its compile or run reported
problems, or that the run crashed.

A toolbar strip under the navigation bar, not a dialog: the window stays usable, the session is
shown as far as it could be read, and the banner says how much went wrong, quotes the first
problem and offers the Diagnostics pane. It hides when a clean session is loaded, or on Dismiss.
A crash (the user's code raised while Dynamo traced it) is said as a crash, in red, before any
damage: it is why the session ends where it does.

Signals: `showRequested()` — the user asked to see the Diagnostics pane.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QPushButton, QToolBar, QWidget

from compiler_core.session import Session
from compiler_core.session.model import CRASH_STAGE, Diagnostic
from explorer.panes.diagnostics_pane import count_text, serious
from explorer.plain_text import plain_label, tip

QUOTE = 90  # characters of the first problem quoted in the banner; the tooltip has all of it
CRASH_PREFIX = "crash in user code: "  # how analysis/user_crash.py starts a crash's message
CRASH_QUOTE = 140  # a crash's line names the exception and the user's line: it gets more room
_STYLE = ("QToolBar#DiagnosticsBanner {{ background: {fill}; border-bottom: 1px solid {line}; }}")
DAMAGE_COLOURS = {"fill": "#fff4ce", "line": "#e0c060"}
CRASH_COLOURS = {"fill": "#fde0dc", "line": "#d0604c"}
# Damage is what went wrong reading the log (bad records, cut or skipped ranks) or building from
# it (impossible values dropped); a compile that failed or a run's warning is reported, not damage.
DAMAGE_STAGES = ("trace", "build")


def crashes_of(session: Session) -> list[Diagnostic]:
    """The compiles the user's code raised in while Dynamo traced them (analysis/user_crash.py)."""
    return [d for d in session.diagnostics if d.stage == CRASH_STAGE and d.severity == "error"]


def banner_text(session: Session) -> str:
    bad = serious(session.diagnostics)
    if not bad:
        return ""
    crashes = crashes_of(session)
    if crashes:  # the user's code raised: a crash, not damage (a log of several runs is neither)
        said = (crashes[0].message.splitlines() or [""])[0].removeprefix(CRASH_PREFIX)
        said = said if len(said) <= CRASH_QUOTE else said[: CRASH_QUOTE - 1] + "…"
        others = tuple(d for d in bad if d.stage != CRASH_STAGE)
        more = f" (and {count_text(others)})" if others else ""
        return f"✖ The run crashed in user code: {said}{more}"
    if not session.compiles:  # not damaged: a log of another kind (torch.export), or empty
        return f"⚠ Nothing to show: {_quote(bad[0])}"
    damage = [d for d in bad if d.stage in DAMAGE_STAGES]
    others = tuple(d for d in bad if d.stage not in DAMAGE_STAGES)
    if damage:
        more = f" (and {count_text(others)} from the compile or run)" if others else ""
        return (f"⚠ This session was built from damaged input: {count_text(tuple(damage))}{more}. "
                f"First: {_quote(damage[0])}")
    # a compile that failed, a run's warnings: the log itself is whole
    return f"⚠ The compile or run reported {count_text(others)}. First: {_quote(others[0])}"


def _quote(d: Diagnostic) -> str:
    where = f"line {d.line}: " if d.line is not None else ""
    quote = f"{where}{d.message}".splitlines()[0] if d.message else where
    return quote if len(quote) <= QUOTE else quote[: QUOTE - 1] + "…"  # fits a 1366 px window


class DiagnosticsBanner(QToolBar):
    showRequested = Signal()  # noqa: N815 (Qt signal naming)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Diagnostics", parent)
        self.setObjectName("DiagnosticsBanner")
        self.setMovable(False)
        self.setFloatable(False)
        self.setStyleSheet(_STYLE.format(**DAMAGE_COLOURS))
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
        crashes = crashes_of(session)
        self.setStyleSheet(_STYLE.format(**(CRASH_COLOURS if crashes else DAMAGE_COLOURS)))
        first = crashes[:1] or serious(session.diagnostics)[:1]
        self.label.setToolTip(tip(first[0].message) if first else "")
        self.setVisible(bool(text))

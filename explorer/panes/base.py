"""The base of every pane: wiring to the shared state, and nothing that reaches another pane."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from compiler_core.session import Compile, Ref, Session
from explorer.state import SelectionModel, SessionState


class Pane(QWidget):
    """Subclasses override `on_session`, `on_compile` and `on_selection`; all default to no-ops.

    `title` names the dock, `stage` is the navigator stage that brings it forward.
    """

    title = "Pane"
    stage = ""

    def __init__(self, state: SessionState, selection: SelectionModel) -> None:
        super().__init__()
        self.state = state
        self.selection = selection
        self.setObjectName(type(self).__name__)
        state.sessionChanged.connect(self._session_changed)
        state.compileChanged.connect(self._compile_changed)
        selection.selectionChanged.connect(self._selection_changed)

    def _session_changed(self, session: Session) -> None:
        self.state.updates.post(self, "session", lambda: self.on_session(session))

    def _compile_changed(self, current: Compile | None) -> None:
        """Rebuilds go through the state's update queue: in the main window each pane's rebuild
        is its own slice of the event loop (explorer/state/update_queue.py)."""
        self.state.updates.post(self, "compile", lambda: self.on_compile(current))

    def _selection_changed(self, _refs: frozenset[Ref]) -> None:
        self.on_selection(self.selection.selected, self.selection.highlighted)

    def on_session(self, session: Session) -> None:
        """A new session is loaded."""

    def on_compile(self, current: Compile | None) -> None:
        """The compile selector moved."""

    def on_selection(self, selected: frozenset[Ref], highlighted: frozenset[Ref]) -> None:
        """`highlighted` = selected ∪ everything the link index relates to it."""

    def has_content(self) -> bool:
        """Whether the pane shows something (screenshots and tests check every pane does)."""
        return True

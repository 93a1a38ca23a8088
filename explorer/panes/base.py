"""The base of every pane: wiring to the shared state, and nothing that reaches another pane."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QWidget

from compiler_core.session import Compile, Ref, Session
from explorer.state import SelectionModel, SessionState
from explorer.teardown import release_views

if TYPE_CHECKING:
    from explorer.canvas import GraphCanvas

# A table fill's slices: the first is this many rows, the next ones are sized to take about
# SLICE_S each (a quarter of the update queue's turn budget leaves room for the pieces of
# other panes in the same turn), within MIN_SLICE..MAX_SLICE rows.
FIRST_SLICE = 25
SLICE_S = 0.005
MIN_SLICE, MAX_SLICE = 5, 2000


class Pane(QWidget):
    """The one protocol every pane implements, the timeline included.

    Subclasses override `on_session`, `on_compile` and `on_selection` (all default to no-ops)
    and must answer `has_content`; a graph pane also hands out its canvas (`graph_canvas`) for
    exports. `title` names the dock, `stage` is the navigator stage that brings it forward.
    Controllers (explorer/actions) change the model behind `state`, never a pane's widgets.
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
        """Each pane highlights in its own slice of the event loop (a source line of a deep model
        lights a thousand refs in every pane, too much for one turn, not for one pane's); the
        slice reads the selection when it runs, so a burst of clicks highlights once."""
        self.state.updates.post(
            self, "selection", lambda: self.on_selection(self.selection.selected, self.selection.highlighted)
        )

    def fill_in_slices(self, kind: str, count: int, add: Callable[[int, int], None],
                       done: Callable[[], None], size: int = FIRST_SLICE) -> None:  # fmt: skip
        """Call `add(start, stop)` over `range(count)` in slices, one queued piece each (long
        tables fill without one long turn: every row of the kernel list or saved tensors in one
        go takes too long on a loaded machine), then `done()` as a piece of its own.

        The first slice has `size` rows; each next one is sized from the rows per second the
        slices so far took, to about `SLICE_S`: a row's cost varies by hundreds of times
        between tables (a guard's text against a line's pipeline of four columns) and with how
        loaded the machine is, so no fixed size fits them all."""
        post = self.state.updates.post
        spent = [0.0, 0]  # seconds, rows

        def piece(start: int, rows: int) -> None:
            stop = min(count, start + rows)
            began = time.perf_counter()
            add(start, stop)
            spent[0] += time.perf_counter() - began
            spent[1] += stop - start
            if stop < count:
                per_row = spent[0] / spent[1] if spent[0] > 0 else 0.0
                rows = max(MIN_SLICE, min(MAX_SLICE, int(SLICE_S / per_row) if per_row else MAX_SLICE))
                post(self, kind, lambda: piece(stop, rows))
            else:
                post(self, kind, done)

        piece(0, max(1, size))

    def on_session(self, session: Session) -> None:
        """A new session is loaded."""

    def on_compile(self, current: Compile | None) -> None:
        """The compile selector moved."""

    def on_selection(self, selected: frozenset[Ref], highlighted: frozenset[Ref]) -> None:
        """`highlighted` = selected ∪ everything the link index relates to it."""

    def closeEvent(self, event: QCloseEvent) -> None:
        """A pane shown as a window of its own (a test, a script) gets this; one in a dock is
        released by its main window's close."""
        release_views(self)
        super().closeEvent(event)

    def graph_canvas(self) -> GraphCanvas | None:
        """The canvas the pane draws its graph on (graph exports); None for panes without one."""
        return None

    def has_content(self) -> bool:
        """Whether the pane shows something (screenshots and tests check every pane does).

        No default: a default of True let any pane pass the every-pane-shows-content test while
        rendering nothing, so each pane answers from what it really shows."""
        raise NotImplementedError(f"{type(self).__name__} must say whether it shows something")

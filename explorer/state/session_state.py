"""The Qt adapter of the application model: the model's events as Qt signals, for panes.

The state itself lives in `AppModel` (explorer/state/app_model.py, Qt-free); this QObject only
forwards what the model says and adds what is Qt's own business: the update queue that spreads
pane rebuilds over event-loop turns. Its `selection` is the adapter of the same model's
selection, so a window has one model, one link index and one selection.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from compiler_core.session import Compile, LinkIndex, Session
from explorer.state.app_model import (
    AppModel,
    CompileKey,
    LiveTimeline,
    SourceLookupRequest,
    compile_key,
    graph_size,
)
from explorer.state.selection import SelectionModel
from explorer.state.update_queue import UpdateQueue

__all__ = ["CompileKey", "SessionState", "compile_key", "graph_size"]


class SessionState(QObject):
    """Signals:

    - `sessionChanged(Session)`: a new session was loaded (panes rebuild everything).
    - `compileChanged(object)`: the current `Compile` (or None) changed.
    - `sourcesChanged(Session)`: the shown session's source texts changed (a lookup on this
      machine turned on or off); nothing else did.
    - `timelineOptionsChanged(dict)`: a timed run starts with these options (the controls show them).
    - `timelineRunRequested(dict)`: the user asked for a timed run (the run controller starts it).
    """

    sessionChanged = Signal(object)  # noqa: N815 (Qt signal naming)
    compileChanged = Signal(object)  # noqa: N815 (Qt signal naming)
    sourcesChanged = Signal(object)  # noqa: N815 (Qt signal naming)
    timelineOptionsChanged = Signal(dict)  # noqa: N815 (Qt signal naming)
    timelineRunRequested = Signal(dict)  # noqa: N815 (Qt signal naming)

    def __init__(self, parent: QObject | None = None, model: AppModel | None = None) -> None:
        super().__init__(parent)
        self.model = model if model is not None else AppModel()
        self.selection = SelectionModel(self, self.model)
        self.updates = UpdateQueue(self)  # pane rebuilds; spread over turns in the main window
        self.model.session_changed.connect(self.sessionChanged.emit)
        self.model.compile_changed.connect(self.compileChanged.emit)
        self.model.sources_changed.connect(self.sourcesChanged.emit)
        self.model.timeline.options_changed.connect(self.timelineOptionsChanged.emit)
        self.model.timeline.run_requested.connect(self.timelineRunRequested.emit)

    @property
    def session(self) -> Session:
        return self.model.session

    @property
    def links(self) -> LinkIndex:
        return self.model.links

    @property
    def current(self) -> Compile | None:
        return self.model.current

    @property
    def timeline(self) -> LiveTimeline:
        return self.model.timeline

    @property
    def source_path(self) -> str:
        return self.model.source_path

    def compiles(self) -> list[Compile]:
        return self.model.compiles()

    def set_session(self, session: Session, source_path: str = "", links: LinkIndex | None = None) -> None:
        self.model.set_session(session, source_path, links)

    def default_compile(self) -> Compile | None:
        return self.model.default_compile()

    def set_compile(self, key: CompileKey) -> None:
        self.model.set_compile(key)

    def request_timeline_run(self, request: dict[str, Any]) -> None:
        self.model.timeline.request_run(request)

    @property
    def source_lookup(self) -> SourceLookupRequest:
        return self.model.source_lookup

    def request_source_lookup(self, request: SourceLookupRequest) -> None:
        self.model.request_source_lookup(request)

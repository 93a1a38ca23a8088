"""The loaded session and the compile the user is looking at, shared by all panes.

A compile is addressed as tlparse addresses it, `(compile_id, rank)`. Switching it is one call
that every pane hears at once (`compileChanged`), so the selector in the toolbar switches
everything together.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from compiler_core.session import Compile, LinkIndex, Session
from explorer.state.update_queue import UpdateQueue

CompileKey = tuple[str, int | None]


def compile_key(c: Compile) -> CompileKey:
    return (c.compile_id, c.rank)


def _sort_key(c: Compile) -> tuple[int, int, int, int, str]:
    rank = -1 if c.rank is None else c.rank
    frame = -1 if c.frame_id is None else c.frame_id
    fcid = -1 if c.frame_compile_id is None else c.frame_compile_id
    return (rank, frame, fcid, c.attempt, c.compile_id)


class SessionState(QObject):
    """Signals:

    - `sessionChanged(Session)`: a new session was loaded (panes rebuild everything).
    - `compileChanged(object)`: the current `Compile` (or None) changed.
    """

    sessionChanged = Signal(object)  # noqa: N815 (Qt signal naming)
    compileChanged = Signal(object)  # noqa: N815 (Qt signal naming)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._session = Session()
        self._index = LinkIndex({})
        self._current: Compile | None = None
        self._ordered: list[Compile] = []
        self.source_path = ""  # file the session came from (for titles and Recent)
        self.updates = UpdateQueue(self)  # pane rebuilds; spread over turns in the main window

    @property
    def session(self) -> Session:
        return self._session

    @property
    def links(self) -> LinkIndex:
        return self._index

    @property
    def current(self) -> Compile | None:
        return self._current

    def compiles(self) -> list[Compile]:
        """Compiles in execution order: by rank, frame, recompile and attempt (sorted once per
        session: several panes ask, and sorting 1e6 compiles takes seconds)."""
        return list(self._ordered)

    def set_session(self, session: Session, source_path: str = "") -> None:
        self._session = session
        self._ordered = sorted(session.compiles, key=_sort_key)
        self._index = LinkIndex.of(session.links)  # built by the loader thread when it loaded
        self.source_path = source_path
        self._current = self.default_compile()
        self.sessionChanged.emit(session)
        self.compileChanged.emit(self._current)

    def default_compile(self) -> Compile | None:
        """The first compile with something to show, so a fresh window is never empty."""
        ordered = self._ordered
        for c in ordered:
            if c.inductor or c.aot or c.dynamo_graph:
                return c
        return ordered[0] if ordered else None

    def set_compile(self, key: CompileKey) -> None:
        found = self._session.compile(*key)
        if found is self._current:
            return
        self._current = found
        self.compileChanged.emit(found)

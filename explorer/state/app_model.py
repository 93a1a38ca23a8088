"""The explorer's application model, Qt-free: what is open, what is shown, what is selected.

napari keeps its viewer model free of Qt and lets Qt views listen to it; this is ours. One
`AppModel` holds the loaded session, the compile being looked at, the one `LinkIndex` of the
session (built once per `set_session`, never per pane or per lookup), the shared selection with
its history, and the live timeline that a run streams into. Everything a controller changes, it
changes here; panes learn of it through the thin Qt adapters in `session_state.py` and
`selection.py`, which re-emit these events as Qt signals.

Events are plain callback lists (`Event.connect`), called synchronously in connection order, so
the model is tested without a QApplication (tests/explorer/test_app_model.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from compiler_core.session import Compile, LinkIndex, Ref, Session
from explorer.state.timeline_data import TimelineData

CompileKey = tuple[str, int | None]
T = TypeVar("T")
_HISTORY_LIMIT = 200


class Event(Generic[T]):
    """A list of listeners called with one value, in the order they connected."""

    def __init__(self) -> None:
        self._listeners: list[Callable[[T], None]] = []

    def connect(self, listener: Callable[[T], None]) -> None:
        self._listeners.append(listener)

    def emit(self, value: T) -> None:
        for listener in list(self._listeners):
            listener(value)


def compile_key(c: Compile) -> CompileKey:
    return (c.compile_id, c.rank)


def _sort_key(c: Compile) -> tuple[int, int, int, int, int, str]:
    rank = -1 if c.rank is None else c.rank
    frame = -1 if c.frame_id is None else c.frame_id
    fcid = -1 if c.frame_compile_id is None else c.frame_compile_id
    return (rank, c.run, frame, fcid, c.attempt, c.compile_id)  # a log's runs one after another


def graph_size(c: Compile) -> int:
    """Nodes of the compile's largest graph at any stage."""
    graphs = [c.dynamo_graph]
    if c.aot is not None:
        graphs += [c.aot.joint, c.aot.forward, c.aot.inference]
    graphs += [o.post_grad for o in c.inductor]
    return max((len(g.nodes) for g in graphs if g is not None), default=0)


class Selection:
    """The refs the user selected, what the session's links relate to them, and back/forward.

    Panes never call each other (glue's model): a pane selects the refs the user clicked and
    every pane highlights its own part of `highlighted`. The related closure is computed once
    here, through the owning model's link index, so no pane walks the index itself.

    Events: `changed(frozenset[Ref])` (the new selection), `history_changed(None)`.
    """

    def __init__(self, links: Callable[[], LinkIndex]) -> None:
        self._links = links
        self.changed: Event[frozenset[Ref]] = Event()
        self.history_changed: Event[None] = Event()
        self._selected: frozenset[Ref] = frozenset()
        self._related: frozenset[Ref] = frozenset()
        self._back: list[frozenset[Ref]] = []
        self._forward: list[frozenset[Ref]] = []

    @property
    def selected(self) -> frozenset[Ref]:
        return self._selected

    @property
    def related(self) -> frozenset[Ref]:
        """Everything linked to the selection, excluding the selection itself."""
        return self._related

    @property
    def highlighted(self) -> frozenset[Ref]:
        """Selection plus related: what panes should highlight."""
        return self._selected | self._related

    def select(self, refs: Iterable[Ref]) -> None:
        new = frozenset(refs)
        if new == self._selected:
            return
        if self._selected:
            self._back.append(self._selected)
            del self._back[:-_HISTORY_LIMIT]
        self._forward.clear()
        self._apply(new)
        self.history_changed.emit(None)

    def clear(self) -> None:
        self.select(())

    def can_back(self) -> bool:
        return bool(self._back)

    def can_forward(self) -> bool:
        return bool(self._forward)

    def back(self) -> None:
        if not self._back:
            return
        self._forward.append(self._selected)
        self._apply(self._back.pop())
        self.history_changed.emit(None)

    def forward(self) -> None:
        if not self._forward:
            return
        self._back.append(self._selected)
        self._apply(self._forward.pop())
        self.history_changed.emit(None)

    def reset(self) -> None:
        """A new session: forget selection and history (old refs mean nothing now)."""
        self._back.clear()
        self._forward.clear()
        self._apply(frozenset())
        self.history_changed.emit(None)

    def _apply(self, refs: frozenset[Ref]) -> None:
        self._selected = refs
        self._related = self._links().related_all(refs) - refs
        self.changed.emit(refs)


class LiveTimeline:
    """The timeline being shown: a saved session's samples, or a run's as they stream in.

    A run's records arrive from the worker far faster than a screen shows them; they are only
    appended here (`TimelineData`, O(1) each) and the pane repaints from `data` on its own timer.
    The run options on show (`options`) and a request to run (`run_requested`) live here too, so
    the controller that starts runs and the pane's controls never touch each other.

    Events: `options_changed(dict)` ({"steps", "modes", "shape_change_step"} of the run in
    progress), `run_requested(dict)` (the same keys: the user asked for a run).
    """

    def __init__(self) -> None:
        self.data = TimelineData()
        self.options_changed: Event[dict[str, Any]] = Event()
        self.run_requested: Event[dict[str, Any]] = Event()

    def load_session(self, session: Session) -> None:
        self.data.load_session(session)

    def clear(self) -> None:
        self.data.clear()

    def add_record(self, record: Mapping[str, Any]) -> None:
        """Any record the run phase emits (sample, timeline_event, mode_stats, mode_start)."""
        self.data.add_record(record)

    def begin_run(self, options: dict[str, Any]) -> None:
        """A timed run starts: an empty plot, and the controls show the run's options."""
        self.data.clear()
        self.options_changed.emit(dict(options))

    def request_run(self, request: dict[str, Any]) -> None:
        self.run_requested.emit(dict(request))


@dataclass(frozen=True)
class SourceLookupRequest:
    """The user asked to look up (or to stop looking up) a log's sources on this machine, with
    folders of their own to look in besides the log's folder and the environment's."""

    on: bool
    roots: tuple[str, ...] = ()


class AppModel:
    """The loaded session, its link index, the current compile, the selection, the timeline.

    A compile is addressed as tlparse addresses it, `(compile_id, rank)`. Switching it is one
    call every listener hears at once, so the toolbar's selector switches every pane together.

    Events (in this order on `set_session`): the selection's reset, `session_changed(Session)`,
    `compile_changed(Compile | None)`. `sources_changed(Session)`: the same session with other
    source texts (a lookup on this machine turned on or off); `source_lookup_requested(
    SourceLookupRequest)`: the user asked for that (the lookup controller answers).
    """

    def __init__(self) -> None:
        self._session = Session()
        self._links = LinkIndex({})
        self._current: Compile | None = None
        self._ordered: list[Compile] = []
        self.source_path = ""  # file the session came from (for titles and Recent)
        self.selection = Selection(lambda: self._links)
        self.timeline = LiveTimeline()
        self.session_changed: Event[Session] = Event()
        self.compile_changed: Event[Compile | None] = Event()
        self.sources_changed: Event[Session] = Event()
        self.source_lookup_requested: Event[SourceLookupRequest] = Event()
        self.source_lookup = SourceLookupRequest(False)  # what the shown sources were looked up with
        self.selection.changed.connect(self._follow_selection)

    @property
    def session(self) -> Session:
        return self._session

    @property
    def links(self) -> LinkIndex:
        """The session's one link index: every lookup in the explorer goes through it."""
        return self._links

    @property
    def current(self) -> Compile | None:
        return self._current

    def compiles(self) -> list[Compile]:
        """Compiles in execution order: by rank, run, frame, recompile and attempt (sorted once per
        session: several panes ask, and sorting 1e6 compiles takes seconds)."""
        return list(self._ordered)

    def set_session(self, session: Session, source_path: str = "", links: LinkIndex | None = None) -> None:
        """Show `session`. `links` is its index when the loader thread already built (and
        prepared) it; any other index is refused and a fresh one built, so the index always
        describes the session shown."""
        self._session = session
        self._ordered = sorted(session.compiles, key=_sort_key)
        own = links is not None and links.built_from(session.links)
        self._links = links if links is not None and own else LinkIndex(session.links)
        self.source_path = source_path
        self.source_lookup = SourceLookupRequest(False)  # never carried over to another file
        self._current = self.default_compile()
        self.timeline.load_session(session)
        self.selection.reset()
        self.session_changed.emit(session)
        self.compile_changed.emit(self._current)

    def request_source_lookup(self, request: SourceLookupRequest) -> None:
        self.source_lookup_requested.emit(request)

    def set_sources(self, session: Session, lookup: SourceLookupRequest) -> None:
        """Show `session`, the shown one with other source texts: the compiles, links, current
        compile and selection stay (a lookup changes texts, never which files there are)."""
        if session.compiles is not self._session.compiles or session.links is not self._session.links:
            raise ValueError("set_sources takes the shown session with other sources; use set_session")
        self._session = session
        self.source_lookup = lookup
        self.sources_changed.emit(session)

    def default_compile(self) -> Compile | None:
        """The compile a user opened the file for: the first failure with something to show,
        else the largest graph (a graph break's compile on ties), never an empty wrapper such
        as `[0/0] wrapper (empty)` just because it ran first."""
        ordered = self._ordered
        # the first 10k with content: a million-compile log must not wait on this choice
        shown = [c for c in ordered[:10_000] if c.inductor or c.aot or c.dynamo_graph]
        if not shown:
            return ordered[0] if ordered else None
        failed = [c for c in shown if c.status == "failed"]
        if failed:
            return failed[0]
        return max(shown, key=lambda c: (graph_size(c), bool(c.graph_breaks)))  # first of equals

    def _follow_selection(self, refs: frozenset[Ref]) -> None:
        """Selecting items of another compile shows that compile: a graph break of [1/0] picked
        in the break list left [0/0] on screen, and the panes had nothing of it to light. The
        compile stays when any selected item is in it (a break seen in several compiles)."""
        keys = {(r.compile_id, r.rank) for r in refs if r.compile_id}
        current = self._current
        if not keys or (current is not None and compile_key(current) in keys):
            return
        target = next((c for c in self._ordered if compile_key(c) in keys), None)
        if target is not None:
            self.set_compile(compile_key(target))

    def set_compile(self, key: CompileKey) -> None:
        found = self._session.compile(*key)
        if found is self._current:
            return
        self._current = found
        self.compile_changed.emit(found)

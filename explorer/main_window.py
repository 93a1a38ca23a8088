"""The main window: every stage as a dock, linked through one SelectionModel.

Docks are created once and only listen to the shared state; the window owns the layout (saved in
QSettings between runs), the status bar and the menus (built by `explorer.actions`).
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QShowEvent
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTabBar, QWidget

from compiler_core.queries.summary import KernelCounts, kernel_counts
from compiler_core.session import LinkIndex, Session
from explorer import gc_policy
from explorer.actions.budget_runs import BudgetRuns
from explorer.actions.compare_actions import CompareActions
from explorer.actions.export_actions import ExportActions
from explorer.actions.file_actions import FileActions
from explorer.actions.source_lookup import SourceLookups
from explorer.app_window import AppWindow
from explorer.diagnostics_banner import DiagnosticsBanner
from explorer.jobs import Lane
from explorer.pane_registry import PANES, PaneSpec
from explorer.plain_text import clip, plain_label
from explorer.state import SessionState
from explorer.state.compile_status import status_summary
from explorer.teardown import release_views
from explorer.toolbar import NavigationBar
from explorer.warmup import warm_up
from explorer.workspaces import BY_KEY, Workspace, arrange, workspace_of

LAYOUT_VERSION = 1
DEFAULT_SIZE = (1600, 1000)
MIN_PANE_SIZE = (120, 80)
TIMELINE_DOCKS = ("TimelinePane", "ModeComparePane")  # empty for a trace log: not shown for one
ALL = "all"  # the all-panes arrangement; the others are workspaces (workspaces.py)
# The pane each navigator stage brings to the front; the stage's other panes are raised first,
# so a tabbed detail pane (Decompositions, CUDA graphs, Modes) never ends up on top.
MAIN_PANE = {"overview": "OverviewPane", "source": "SourcePane", "dynamo": "DynamoPane", "aot": "AotPane",
             "inductor": "InductorPane", "kernels": "KernelCodePane", "timeline": "TimelinePane"}  # fmt: skip


def _state_key(arrangement: str) -> str:
    """Where an arrangement's state is saved: the all-panes view where it always was."""
    return "window/state" if arrangement == ALL else f"window/workspace/{arrangement}"


def session_counts(session: Session) -> tuple[int, int, KernelCounts]:
    """(Dynamo graphs, graph breaks, kernel counts) over the whole session, counted as
    `python -m compiler_core summary` counts them: an extern call (a cuBLAS mm) is not a kernel
    Inductor generated, and a 32-layer Llama's 32 kernels run 588 launches beside 740 of those."""
    graphs = sum(1 for c in session.compiles if c.dynamo_graph is not None)
    breaks = sum(len(c.graph_breaks) for c in session.compiles)
    return graphs, breaks, kernel_counts(o for c in session.compiles for o in c.inductor)


class MainWindow(AppWindow):
    """The one `AppWindow`: builds the docks, the state and the controllers (explorer/actions)."""

    def __init__(self, settings: QSettings | None = None) -> None:
        super().__init__()
        self.settings = settings if settings is not None else QSettings("CompileScope", "CompileScope")
        self.setWindowTitle("CompileScope")
        self.resize(*DEFAULT_SIZE)
        # docks nest and tab but do not animate: a workspace switch moves every dock at once, and
        # Qt's dock animation adds a property animation per moved dock to that one turn
        self.setDockOptions(QMainWindow.DockOption.AllowNestedDocks | QMainWindow.DockOption.AllowTabbedDocks)
        self.state = SessionState(self)
        self.budgets = BudgetRuns(self.state, self)  # the AOT pane's memory-budget sweep
        self.selection = self.state.selection  # the adapter of the same model's selection
        self.state.updates.spread = True  # pane rebuilds one slice per event-loop turn
        self.panes: dict[str, QWidget] = {}
        self.docks: dict[str, QDockWidget] = {}
        self._pending: list[PaneSpec] = []
        self._deferred_show: tuple[Session, str, LinkIndex | None] | None = None
        self._build_panes()
        self.navigation = NavigationBar(self.state, self.selection, self)
        self.navigation.stageRequested.connect(self.show_stage)
        self.navigation.all_panes_action.toggled.connect(self.set_all_panes)
        self._stage = "dynamo"
        self._arrangement = ALL  # the default layout is built as the all-panes view
        self._layouts: dict[str, object] = {}  # arrangement -> its saved state, as last left
        # per arrangement, the docks hidden for having nothing to show (not by the user)
        self._auto_hidden: dict[str, set[str]] = {}
        self.addToolBar(self.navigation)
        self.addToolBarBreak()
        self.banner = DiagnosticsBanner(self)  # a damaged log says so, without a modal dialog
        self.banner.showRequested.connect(self.show_diagnostics)
        self.addToolBar(self.banner)
        self.state.sessionChanged.connect(self.banner.set_session)
        self.status_label = plain_label("No session loaded. File ▸ Open… or drop a file here.")
        self.statusBar().addWidget(self.status_label, 1)
        self.state.sessionChanged.connect(self._update_status)
        self.files = FileActions(self)
        self.exports = ExportActions(self)
        self.compares = CompareActions(self, self.files.menu)
        self.source_lookups = SourceLookups(self.state, self)  # the Source pane's lookup checkbox
        self._build_view_menu()
        self.navigation.stage_actions["overview"].setVisible("OverviewPane" in self.docks)
        self.setAcceptDrops(True)
        self.restore_layout()

    # ----- docks -----
    def _build_panes(self) -> None:
        """Light panes now; canvas and plot panes (pyqtgraph is slow to import) right after
        the window is shown, one per event-loop turn, so the window comes up at once."""
        for spec in PANES:
            placeholder = plain_label(f"{spec.title}: loading…")
            placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
            self._add_dock(spec.key, spec.title, placeholder, spec.stage)
            if spec.deferred:
                self._pending.append(spec)
            else:
                self._build_pane(spec)
        self._arrange_default()
        # 1 ms, not 0: a zero single-shot is a posted call, and Qt may run two of them (two
        # pyqtgraph panes) in one turn; a timer lets paints and input in between
        QTimer.singleShot(1, self, self._build_next_pending)  # dies with the window

    def _build_pane(self, spec: PaneSpec) -> None:
        widget = spec.build(self.state, self.selection)
        # An explicit minimum overrides a pane's minimumSizeHint: one wide toolbar in one pane must
        # not push the whole window past 1600 px (the pane clips instead).
        widget.setMinimumSize(MIN_PANE_SIZE[0], MIN_PANE_SIZE[1])
        self.docks[spec.key].setWidget(widget)
        self.panes[spec.key] = widget
        requests = getattr(widget, "stageRequested", None)  # a pane that links into a stage
        if requests is not None:
            requests.connect(self.show_stage)
        if getattr(widget, "sweepRequested", None) is not None:  # a pane offering the budget sweep
            self.budgets.attach(widget)  # type: ignore[arg-type]

    def _build_next_pending(self) -> None:
        if self._pending:
            self._build_pane(self._pending.pop(0))
            QTimer.singleShot(1, self, self._build_next_pending)  # dies with the window
        elif self._deferred_show is not None:  # a session arrived while panes were being built
            self._hide_stale_tab_bars()  # as ensure_panes does after building the last pane
            shown, self._deferred_show = self._deferred_show, None
            self.show_session(*shown)
            QTimer.singleShot(1, self, self._build_next_pending)
        else:
            # Startup is done. A log opened at launch may still be importing: the warm-up then
            # competes with it for the GIL (~0.1-0.2 s later first paint), but waiting until
            # after the load put Pygments' table compiling among the session's settling turns,
            # whose slowest wall lateness it doubled (70 -> 175 ms on the GPT-2 log).
            warm_up()

    def ensure_panes(self) -> None:
        """Build every deferred pane now, and show the session that was waiting for them (a
        caller about to render or flush wants it on screen: `--screenshot` after a capture grabbed
        half-filled panes while it was still waiting for a later timer turn)."""
        built = bool(self._pending)
        while self._pending:
            self._build_pane(self._pending.pop(0))
        if built:  # a deferred pane joining its tab group leaves Qt's stale bar on screen again
            self._hide_stale_tab_bars()
        if self._deferred_show is not None:
            shown, self._deferred_show = self._deferred_show, None
            self.show_session(*shown)

    def _add_dock(self, key: str, title: str, widget: QWidget, stage: str) -> None:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock:{key}")
        dock.setWidget(widget)
        dock.setProperty("stage", stage)
        self.panes[key] = widget
        self.docks[key] = dock

    def _arrange_default(self) -> None:
        """At 1600×1000: source | Dynamo over AOT | Inductor over kernel code, timeline below.

        Each tab group is formed right after its first dock is placed: tabifying into a dock
        after further splits leaves a stale second tab bar drawn on screen (Qt 6.11).
        """
        d = self.docks
        left, bottom = Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.BottomDockWidgetArea
        horizontal, vertical = Qt.Orientation.Horizontal, Qt.Orientation.Vertical
        self.addDockWidget(left, d["SourcePane"])
        self.splitDockWidget(d["SourcePane"], d["DynamoPane"], horizontal)
        self.splitDockWidget(d["DynamoPane"], d["InductorPane"], horizontal)
        self.splitDockWidget(d["SourcePane"], d["BreakSummaryPane"], vertical)
        self._tab_group("BreakSummaryPane", "OverviewPane", "RanksPane", "LinePipelinePane",
                        "CompileTimePane")
        self.splitDockWidget(d["DynamoPane"], d["AotPane"], vertical)
        self._tab_group("AotPane")
        self.splitDockWidget(d["InductorPane"], d["KernelCodePane"], vertical)
        self._tab_group("KernelCodePane")
        self.addDockWidget(bottom, d["TimelinePane"])
        self._tab_group("TimelinePane")
        self.resizeDocks([d["SourcePane"], d["DynamoPane"], d["InductorPane"]], [460, 570, 570], horizontal)
        self.resizeDocks([d["SourcePane"], d["BreakSummaryPane"]], [420, 280], vertical)
        self.resizeDocks([d["DynamoPane"], d["AotPane"]], [312, 408], vertical)
        self.resizeDocks([d["InductorPane"], d["KernelCodePane"]], [380, 320], vertical)
        self.resizeDocks([d["TimelinePane"]], [120], vertical)
        for key in ("OverviewPane", "AotPane", "KernelCodePane", "TimelinePane"):
            d[key].raise_()
        self._hide_stale_tab_bars()

    def showEvent(self, event: QShowEvent) -> None:
        """Showing lays the docks out again, which re-shows the stale bar (below): hide it once
        that layout has run."""
        super().showEvent(event)
        QTimer.singleShot(0, self._hide_stale_tab_bars)

    def _hide_stale_tab_bars(self) -> None:
        """Qt 6.11 workaround: every tab group after the first gets a second, stale tab bar that
        never moves again and shows as a ghost strip. The live bar is created later and holds all
        the stale one's tabs (and any added since); the layout re-shows a bar it reuses."""
        bars: list[QTabBar] = list(self.findChildren(QTabBar))  # creation order
        tabs = [{bar.tabText(i) for i in range(bar.count())} for bar in bars]
        for i, bar in enumerate(bars):
            if tabs[i] and any(tabs[i] <= later for later in tabs[i + 1:]):
                bar.hide()

    def _tab_group(self, anchor: str, *keys: str) -> None:
        """Tab `keys` and every installed pane registered with `tab_with=anchor` behind `anchor`."""
        extra = [spec.key for spec in PANES if spec.tab_with == anchor and spec.key in self.docks]
        previous = self.docks[anchor]
        for key in (*keys, *extra):
            self.tabifyDockWidget(previous, self.docks[key])
            previous = self.docks[key]

    def _build_view_menu(self) -> None:
        menu = self.menuBar().addMenu("&View")
        menu.addAction("&Reset layout").triggered.connect(self.reset_layout)
        menu.addSeparator()
        for dock in self.docks.values():
            menu.addAction(dock.toggleViewAction())
        go = self.menuBar().addMenu("&Go")
        go.addAction(self.navigation.back_action)
        go.addAction(self.navigation.forward_action)

    def show_stage(self, stage: str) -> None:
        """Bring `stage` forward: in a workspace, its workspace (Source opens Source + Dynamo,
        Kernels the Inductor workspace) with the stage's main pane on top; in the all-panes view,
        every dock of the stage shown and its main pane raised."""
        self._stage = stage
        ws = self._workspace_for(stage)
        if self._arrangement != ALL and ws is not None:
            self._enter(ws.key)
        key = MAIN_PANE.get(stage, ws.main if ws is not None else "")
        main = self.docks.get(key)
        if self._arrangement == ALL:
            for dock in self.docks.values():
                if dock.property("stage") == stage and dock is not main:
                    dock.show()  # not raised: a detail tab must not cover another stage's pane
        if main is not None:
            main.show()
            main.raise_()
        self._fit_idle_docks()

    def _fit_idle_docks(self) -> None:
        """Panes with nothing to show for this session are not shown: a trace log holds no step
        times and cannot be run (its timeline plot and Modes table would stay empty; the
        compile-time chart takes their room), a one-rank session has no ranks to compare; the
        next session with something to show gets them back, where the arrangement has them."""
        session = self.state.session
        no_steps = session.meta.origin == "trace" and not session.timeline and not session.mode_stats
        one_rank = len({c.rank for c in session.compiles}) < 2
        hidden = self._auto_hidden.setdefault(self._arrangement, set())
        idle_docks = [(key, no_steps) for key in TIMELINE_DOCKS] + [("RanksPane", one_rank)]
        for key, idle in idle_docks:
            dock = self.docks.get(key)
            if dock is None:
                continue
            if idle and not dock.isHidden():
                dock.hide()
                hidden.add(key)
            elif not idle and key in hidden:
                hidden.discard(key)
                dock.show()

    @property
    def workspace(self) -> str | None:
        """The workspace on screen, or None in the all-panes view."""
        return None if self._arrangement == ALL else self._arrangement

    def set_all_panes(self, on: bool) -> None:
        """The all-panes view (every dock, as the user last arranged them) or back to the
        current stage's workspace; each arrangement is kept as it was left."""
        ws = self._workspace_for(self._stage) or self._workspace_for(self._first_stage())
        target = ALL if on or ws is None else ws.key
        self._enter(target)
        if self.navigation.all_panes_action.isChecked() != on:
            self.navigation.all_panes_action.setChecked(on)

    def _workspace_for(self, stage: str) -> Workspace | None:
        ws = workspace_of(stage)
        return ws if ws is not None and ws.main in self.docks else None

    def _first_stage(self) -> str:
        return "overview" if "OverviewPane" in self.docks else "dynamo"

    def _enter(self, key: str) -> None:
        """Switch arrangement: the one left is remembered, the one entered is restored as the
        user left it, else laid out from its recipe (workspaces.py) or the default layout."""
        if key == self._arrangement:
            return
        self._layouts[self._arrangement] = self.saveState(LAYOUT_VERSION)
        saved = self._layouts.get(key)
        if not (isinstance(saved, QByteArray) and self.restoreState(saved, LAYOUT_VERSION)):
            if key == ALL:  # laid out live: a state saved before the window was shown is off
                for dock in self.docks.values():  # by the toolbars' real heights
                    dock.show()
                self._arrange_default()
            else:
                # laid out once at the end: with the layout live, every dock shown, split or
                # tabbed re-computes the whole window's geometry
                lay = self.layout()
                lay.setEnabled(False)
                try:
                    arrange(self, self.docks, BY_KEY[key], self.tabifyDockWidget)
                finally:
                    lay.setEnabled(True)
        self._arrangement = key
        self._fit_idle_docks()
        self._hide_stale_tab_bars()
        self.banner.set_session(self.state.session)  # a restored state may hold the banner shown

    def show_diagnostics(self) -> None:
        dock = self.docks.get("DiagnosticsPane")
        if dock is not None:
            dock.show()
            dock.raise_()

    # ----- session -----
    def set_session(self, session: Session, source_path: str = "", links: LinkIndex | None = None) -> None:
        """Show `session` with every pane rebuilt on return (scripts, tests, screenshots)."""
        self._deferred_show = None  # superseded: ensure_panes must not show it first
        self.ensure_panes()
        self.show_session(session, source_path, links)
        self.state.updates.flush()

    def show_session(self, session: Session, source_path: str = "", links: LinkIndex | None = None) -> None:
        """Show `session`; panes rebuild over the following event-loop turns (the app's own
        open path: the window keeps answering while a deep model's panes fill in). `links` is
        the session's index when the loader thread built it already. While the deferred panes
        are still being built (one per turn after start-up), the session waits for the last
        of them: building the rest in one turn would be too long a turn (pyqtgraph's plots)."""
        if self._pending:
            self._deferred_show = (session, source_path, links)
            return
        opened = source_path != self.state.source_path  # not a live refresh, nor a re-capture
        self.state.set_session(session, source_path, links)
        if session.compiles and opened:  # every session and log opens on its first page
            self.show_stage(self._first_stage())
        self._fit_idle_docks()
        title = source_path or session.meta.origin_path or "session"
        self.setWindowTitle(f"CompileScope — {clip(title, 300, 1)}")

    def _update_status(self, session: Session) -> None:
        meta = session.meta
        graphs, breaks, counts = session_counts(session)
        parts = [
            f"device: {meta.device or '?'}",
            f"torch {meta.torch_version or '?'}",
            f"mode: {meta.mode or '?'}",
            status_summary(session.compiles), f"{graphs} graphs", f"{breaks} breaks", counts.generated(),
        ]
        if counts.extern_calls:
            parts.append(f"{counts.extern_calls} extern calls")
        self.status_label.setText(clip("  ·  ".join(parts), 500, 1))

    # ----- layout persistence -----
    def restore_layout(self) -> None:
        """The window's geometry and every arrangement as the user last left it, then the
        arrangement they were in (a first run: the first workspace). A saved state that no
        longer fits (another layout version) is dropped and that arrangement laid out afresh."""
        geometry = self.settings.value("window/geometry")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        for key in (ALL, *BY_KEY):
            state = self.settings.value(_state_key(key))
            if isinstance(state, QByteArray):
                self._layouts[key] = state
        last = self.settings.value("window/arrangement")
        first = self._workspace_for(self._first_stage())
        self._arrangement = ""  # the default built in __init__ is no arrangement to remember
        ws = self._workspace_for(last) if isinstance(last, str) else None
        if last == ALL or (first is None and ws is None):
            self._enter(ALL)
            self.navigation.all_panes_action.setChecked(True)
        else:
            target = ws or first
            assert target is not None
            self._stage = target.key
            self._enter(target.key)
        self.banner.set_session(self.state.session)  # the saved state may hold the banner shown

    def save_layout(self) -> None:
        """Every arrangement as it was left (all panes and each workspace), and which is on."""
        self._layouts[self._arrangement] = self.saveState(LAYOUT_VERSION)
        for key, state in self._layouts.items():
            if isinstance(state, QByteArray) and key in (ALL, *BY_KEY):
                self.settings.setValue(_state_key(key), state)
        self.settings.setValue("window/arrangement", self._arrangement)
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.sync()

    def reset_layout(self) -> None:
        """Every arrangement back to its default; the one on screen is laid out again now."""
        self._layouts.clear()
        current, self._arrangement = self._arrangement, ""
        self._enter(current)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        for url in event.mimeData().urls():
            if url.isLocalFile():
                self.files.open_path(url.toLocalFile())
                event.acceptProposedAction()
                return

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_layout()
        self.compares.shutdown()
        # Child widgets get no closeEvent of their own: every lane of the window (panes,
        # canvases' layouts, loaders) ends its jobs here, while the window still exists.
        workers: list[Lane] = list(self.findChildren(Lane))
        for worker in workers:
            worker.shutdown()
        self.state.updates.drop()
        release_views(self)
        gc_policy.release()  # the window's cycles, kept out of passes with its session, go now
        super().closeEvent(event)

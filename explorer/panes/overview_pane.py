"""The Overview: the page a session or log opens on. Is this compile healthy, and what to fix first?

The verdict stands in a banner at the top; below it each section (breaks ranked by cost,
recompiles with the failed guard, fallbacks, CUDA graphs, saved activations, compile and step
time) lists its facts one a line. Every figure comes from `compiler_core.overview`; the text
is the same HTML fragment the shareable report writes (`overview_fragment`, every data text
escaped), so the app and the report never disagree. A line with refs is a link: clicking it
sets the selection to those refs through the selection model, and every pane shows its part.
A fact whose refs are selected (here or in another pane) is marked.
"""

from __future__ import annotations

from PySide6.QtCore import QUrl, Signal
from PySide6.QtWidgets import QTextBrowser, QVBoxLayout

from compiler_core.overview import Overview, build_overview
from compiler_core.overview.model import Fact
from compiler_core.overview.report_html import overview_fragment
from compiler_core.session import Ref, Session
from explorer.jobs import Lane
from explorer.panes.base import Pane
from explorer.plain_text import plain_label
from explorer.state import SelectionModel, SessionState

_FACT_SCHEME = "fact"
# the workspace (navigator stage) that shows each section's facts
SECTION_WORKSPACE = {"failures": "dynamo", "breaks": "dynamo", "recompiles": "dynamo", "ranks": "dynamo",
                     "runs": "dynamo", "memory": "aot", "fallbacks": "inductor", "cudagraphs": "inductor",
                     "kernel_times": "inductor", "compile_time": "timeline", "step_time": "timeline"}
# Qt's rich text reads a subset of CSS: one class per element, colours, margins, font weights.
PANE_CSS = """
h2 { font-size: 14px; font-weight: 600; margin-top: 14px; margin-bottom: 2px; color: #1d1d1f; }
p.headline { margin-top: 0; margin-bottom: 2px; color: #333; }
p.notes { color: #6b7075; font-size: 12px; margin-top: 14px; }
ul.facts { margin-top: 0; margin-bottom: 4px; }
li { margin-bottom: 3px; }
li.warning { color: #a4262c; }
li.marked { background-color: #fff2b3; }
span.detail { color: #5f6368; font-size: 12px; }
a { color: #1a56b8; text-decoration: none; }
li.warning a { color: #a4262c; }
"""
BANNER_CSS = ("QLabel#overviewVerdict { background: #eef3fc; border-left: 5px solid #2f6fde; "
              "padding: 8px 12px; font-size: 15px; font-weight: 600; color: #14223d; }")  # fmt: skip


class OverviewPane(Pane):
    """`OverviewPane(state, selection)`, like every pane; `stage` "overview". It reads the whole
    session (all ranks and runs), so the compile selector does not change it.

    Signals: `stageRequested(str)`, the workspace that shows a clicked line's section
    (`SECTION_WORKSPACE`), for the window to bring forward; the pane itself changes nothing else.
    """

    stageRequested = Signal(str)  # noqa: N815 (Qt signal naming)

    title = "Overview"
    stage = "overview"

    def __init__(self, state: SessionState, selection: SelectionModel) -> None:
        super().__init__(state, selection)
        self.banner = plain_label()
        self.banner.setObjectName("overviewVerdict")
        self.banner.setStyleSheet(BANNER_CSS)
        self.banner.setWordWrap(True)
        self.source = plain_label()
        self.source.setStyleSheet("color: #6b7075;")
        self.view = QTextBrowser()
        self.view.setOpenLinks(False)
        self.view.setOpenExternalLinks(False)
        self.view.document().setDefaultStyleSheet(PANE_CSS)
        self.view.anchorClicked.connect(self._anchor)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 0)
        layout.setSpacing(4)
        layout.addWidget(self.banner)
        layout.addWidget(self.source)
        layout.addWidget(self.view, 1)
        self.overview: Overview | None = None
        self.facts: list[Fact] = []
        self.fact_sections: list[str] = []  # each fact's section key
        self._marked: frozenset[int] = frozenset()
        # seconds on 1e5 recompiles: built off the GUI thread
        self._worker = Lane(self, "overview", current=lambda: state.session)
        state.updates.track(self._worker)

    def on_session(self, session: Session) -> None:
        if not self.state.updates.spread:  # a pane on its own (tests, exports): at once
            self._show(session, build_overview(session))
            return
        self.banner.setText("Reading the session…")
        self._worker.submit(lambda: build_overview(session), lambda overview: self._show(session, overview))

    def _show(self, session: Session, overview: Overview) -> None:
        self.overview = overview
        self.facts = self.overview.facts()
        self.fact_sections = [s.key for s in self.overview.sections for _ in s.facts]
        self.banner.setText(self.overview.verdict)
        meta = session.meta
        described = [meta.torch_version and f"torch {meta.torch_version}", meta.device,
                     meta.mode and f"mode {meta.mode}"]  # fmt: skip
        self.source.setText(" · ".join(t for t in (self.overview.title, *described) if t))
        self._marked = frozenset()
        self._render()
        self.view.verticalScrollBar().setValue(0)

    def _render(self) -> None:
        if self.overview is None:
            return
        scroll = self.view.verticalScrollBar().value()
        link = f"{_FACT_SCHEME}:{{}}".format
        html = overview_fragment(self.overview, link, verdict=False, marked=self._marked)
        self.view.setHtml(html)  # markup: ours, every data value escaped
        self.view.verticalScrollBar().setValue(scroll)

    def activate(self, index: int) -> None:
        """What a click on line `index` does: select its refs, ask for its section's workspace."""
        if not 0 <= index < len(self.facts):
            return
        if self.facts[index].refs:
            self.selection.select(self.facts[index].refs)
        stage = SECTION_WORKSPACE.get(self.fact_sections[index])
        if stage:
            self.stageRequested.emit(stage)

    def _anchor(self, url: QUrl) -> None:
        if url.scheme() == _FACT_SCHEME and url.path().isdecimal():
            self.activate(int(url.path()))

    def on_selection(self, selected: frozenset[Ref], highlighted: frozenset[Ref]) -> None:
        marked = frozenset(i for i, f in enumerate(self.facts) if f.refs and not selected.isdisjoint(f.refs))
        if marked != self._marked:
            self._marked = marked
            self._render()

    def marked(self) -> frozenset[int]:
        """Indices of the facts shown as selected."""
        return self._marked

    def has_content(self) -> bool:
        return self.overview is not None

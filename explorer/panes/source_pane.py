"""Source pane: every file the graphs came from, coloured by what the compiler did to each line.

Green: captured by Dynamo; kernel colours: fused into that kernel (one stripe per kernel); red
marker in the gutter and a red note under the line: a graph break (its code, reason and hint) or
a recompile (the guard that failed and the fix). Clicking a line selects it, so every other pane
highlights what that line produced. The file list holds library files too (transformers,
torchvision), most Dynamo nodes first.

A log from elsewhere reads no file of this machine: a file shows the lines the log quotes, each at
its number, under a "Quoted by the log" banner, the lines between drawn as hatched gaps, and marks
only on quoted lines. "Look up sources on this machine" asks for the local files that hold those
lines (explorer/actions/source_lookup.py answers); "Add folder…" adds a folder to look in.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from compiler_core.analysis.user_sources import node_counts, quote_lines
from compiler_core.session import Compile, Ref, RefKind, Session, SourceOrigin
from compiler_core.session.model import SourceLoc
from compiler_core.session.refs import source_line
from explorer.jobs import Lane
from explorer.panes.base import Pane
from explorer.panes.code_view import CodeView
from explorer.plain_text import plain_label, tip
from explorer.state import SelectionModel, SessionState
from explorer.state.app_model import SourceLookupRequest
from explorer.state.line_facts import LineFacts, LineKey, line_annotations, line_facts
from explorer.state.palette import BROKE, CAPTURED, RECOMPILED, color_for
from explorer.state.runtime_times import RuntimeTimes, fmt_us, runtime_times


def _busiest_line(c: Compile) -> list[SourceLoc]:
    """The first traced line of the file holding most of `c`'s Dynamo nodes ([] when none)."""
    counts = node_counts([c])
    if not counts or c.dynamo_graph is None:
        return []
    top = counts.most_common(1)[0][0]
    lines = [n.source.line for n in c.dynamo_graph.nodes if n.source is not None and n.source.file == top]
    return [SourceLoc(top, min(lines))]


LOOKUP_TIP = ("Show the files this log names as they are on this machine, where they hold the lines the "
              "log quotes. Only .py files are read, and only under the log's folder, this environment's "
              "site-packages and standard library, and folders you add (symlinks resolved first). "
              "Off: only the lines the log quotes are shown, and no file of this machine is read.")
QUOTE_BANNER = ("Quoted by the log, not the file: the {n} line{s} the log quotes, each at its line number. "
                "Hatched rows are gaps the log does not quote.")
LOOKUP_BANNER = "Looked up on disk, not in the log: this file holds the lines the log quotes."
_OWN_RUNS = ("capture", "script")  # sessions whose sources their own run read

LEGEND = ("green: captured · stripes: fused into kernel · ▶ red: graph break, reason under the line · "
          "▶ orange: recompiled")


def _torch_own(path: str) -> bool:
    """A file of torch itself (`torch/_dynamo/external_utils.py`, the frame Dynamo compiles for
    an `nn.Sequential` model): never the file a user opened the session to read."""
    parts = Path(path).parts
    return any(a in ("site-packages", "dist-packages") and b == "torch" for a, b in pairwise(parts))


def _where(path: str) -> str:
    """A file's folder as a user names it: `transformers/models/gpt2` inside site-packages."""
    parent = str(Path(path).parent)
    for marker in ("site-packages/", "dist-packages/"):
        if marker in parent + "/":
            return (parent + "/").split(marker, 1)[1].rstrip("/")
    return parent


class SourcePane(Pane):
    title = "Source"
    stage = "source"

    def __init__(self, state: SessionState, selection: SelectionModel) -> None:
        super().__init__(state, selection)
        self.files = QComboBox()
        self.files.currentIndexChanged.connect(self._show_file)
        self.view = CodeView()
        self.view.lineClicked.connect(self._clicked)
        self.note = plain_label()
        self.note.setStyleSheet("color: #8a5a00")
        self.note.setWordWrap(True)
        self.legend = plain_label(LEGEND)
        self.legend.setStyleSheet("color: #666")
        self.legend.setWordWrap(True)
        self.lookup = QCheckBox("Look up sources on this machine")
        self.lookup.setToolTip(tip(LOOKUP_TIP))
        self.lookup.toggled.connect(self._lookup_toggled)
        self.add_root = QPushButton("Add folder…")
        self.add_root.setToolTip(tip("Also look for this log's files in a folder you choose (a checkout, "
                                     "another environment's site-packages)"))
        self.add_root.clicked.connect(self._add_root_dialog)
        self.lookup_row = QWidget()
        row = QHBoxLayout(self.lookup_row)
        row.setContentsMargins(4, 0, 4, 0)
        row.addWidget(self.lookup)
        row.addWidget(self.add_root)
        row.addStretch(1)
        self.lookup_row.hide()
        self.origin = plain_label()
        self.origin.setWordWrap(True)
        self.origin.setStyleSheet("background: #fff1c9; color: #5a3d00; padding: 3px; font-weight: bold")
        self.origin.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.files)
        layout.addWidget(self.lookup_row)
        layout.addWidget(self.origin)
        layout.addWidget(self.note)
        layout.addWidget(self.view)
        layout.addWidget(self.legend)
        self._facts: dict[tuple[str, int], LineFacts] = {}
        self._times = RuntimeTimes()
        self._notes: dict[LineKey, list[str]] = {}
        self._path = ""
        self._lexer = Lane(self, "lexer")  # long texts are lexed off the GUI thread
        state.updates.track(self._lexer)
        state.sourcesChanged.connect(self._sources_changed)

    @property
    def path(self) -> str:
        return self._path

    def on_session(self, session: Session) -> None:
        self._fill(session, "")

    def _sources_changed(self, session: Session) -> None:
        """Other texts for the same files (a lookup turned on or off): the shown file stays."""
        self.state.updates.post(self, "session", lambda: self._fill(session, self._path))

    def _fill(self, session: Session, keep: str) -> None:
        self._show_lookup(session)
        rank = self._rank()
        self._facts = line_facts(session, self.state.links, rank)
        self._notes = line_annotations(session, rank)
        counts = node_counts(c for c in session.compiles if c.rank == rank)
        order = {p: i for i, p in enumerate(session.sources)}
        self._times = runtime_times(session)
        heat = f" · left column: {self._times.caption()} (kernel time shared out to the lines they came from)"
        self.legend.setText(LEGEND + (heat if self._times.mode else ""))  # the shown session's, only
        self.files.blockSignals(True)
        self.files.clear()
        for path in sorted(session.sources, key=lambda p: (-counts.get(p, 0), order[p])):
            n = counts.get(path, 0)
            self.files.addItem(f"{Path(path).name} — {n} node{'s' * (n != 1)}  ·  {_where(path)}", path)
            note = session.source_notes.get(path, "")
            self.files.setItemData(self.files.count() - 1, tip(path + (f"\n{note}" if note else "")), 3)
        self.files.setVisible(self.files.count() > 1)
        first = self.files.findData(keep) if keep else -1
        first = first if first >= 0 else self._first_index()
        self.files.setCurrentIndex(first)
        self.files.blockSignals(False)
        self._show_file(first)

    def _show_lookup(self, session: Session) -> None:
        """The lookup row, for a log or session made elsewhere (a capture's files are its own)."""
        self.lookup_row.setVisible(bool(session.sources) and session.meta.origin not in _OWN_RUNS)
        self.lookup.blockSignals(True)
        looked_up = SourceOrigin.LOOKUP in session.source_origins.values()  # (a session saved with them)
        self.lookup.setChecked(self.state.source_lookup.on or looked_up)
        self.lookup.blockSignals(False)

    def _lookup_toggled(self, on: bool) -> None:
        self.state.request_source_lookup(SourceLookupRequest(on, self.state.source_lookup.roots))

    def _add_root_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Look for this log's source files in")
        if folder:
            self.add_lookup_root(folder)

    def add_lookup_root(self, folder: str) -> None:
        """Look up sources in `folder` too (and turn the lookup on)."""
        roots = self.state.source_lookup.roots
        roots = roots if folder in roots else (*roots, folder)
        self.state.request_source_lookup(SourceLookupRequest(True, roots))

    def _first_index(self) -> int:
        """The file of the first break (the one to fix first) when there is one, else the file
        with most nodes."""
        for (path, _line), notes in self._notes.items():
            if any("graph break" in n for n in notes):
                index = self.files.findData(path)
                if index >= 0:
                    return index
        return 0

    def on_compile(self, current: Compile | None) -> None:
        """Show the compile's break line when it has one (the line to fix: in GPT-2, a
        transformers logging call), else the file most of its graph came from, at its first
        traced line. (Not the frame's own file: for an HF model that is the `wrapper` decorator in
        transformers/utils/generic.py, with no node in it.)"""
        if current is None:
            return
        places = [b.location for b in current.graph_breaks if b.location is not None]
        if not places:
            places = _busiest_line(current)
        if not places and current.code is not None and not _torch_own(current.code.file):
            places.append(current.code)  # but never torch's own wrapper frame (an nn.Sequential's)
        for loc in places:
            index = self.files.findData(loc.file)
            if index >= 0:
                if loc.file != self._path:
                    self.files.setCurrentIndex(index)
                if loc is not current.code:
                    self.view.scroll_to_line(loc.line)
                return

    def _rank(self) -> int | None:
        current = self.state.current
        return current.rank if current is not None else None

    def _show_file(self, index: int) -> None:
        path = self.files.itemData(index) if index >= 0 else None
        self._path = path or ""
        session = self.state.session
        note = session.source_notes.get(self._path, "")
        self.note.setText(note)
        self.note.setVisible(bool(note))
        text = session.sources.get(self._path, "")
        origin = session.source_origins.get(self._path)
        quoted = quote_lines(text) if origin == SourceOrigin.QUOTE else None
        count = len(text.splitlines())

        def real(line: int) -> bool:  # marks go only on lines that hold code of what is shown
            return line in quoted if quoted is not None else 0 < line <= count

        self._show_origin(origin, quoted)
        notes = {line: n for (file, line), n in self._notes.items() if file == self._path and real(line)}
        self.view.set_code(text, "python", notes, self._later())
        self.view.set_quoted_lines(quoted)
        colors: dict[int, list[QColor]] = {}
        markers: dict[int, tuple[QColor, str]] = {}
        for (file, line), facts in self._facts.items():
            if file != self._path or not real(line):
                continue
            colors[line] = self._line_colors(facts)
            if facts.breaks:
                markers[line] = (BROKE, "Graph break:\n" + "\n".join(sorted(set(facts.breaks))))
            elif facts.recompiles:
                markers[line] = (RECOMPILED, "Recompiled:\n" + "\n".join(facts.recompiles))
        self.view.set_line_colors(colors)
        self.view.set_markers(markers)
        self.view.set_heat({line: h for line, h in self.heat(self._path).items() if real(line)})
        if notes:
            self.view.scroll_to_line(min(notes))
        elif colors:
            self.view.scroll_to_line(min(colors))
        self.on_selection(self.selection.selected, self.selection.highlighted)

    def _show_origin(self, origin: SourceOrigin | None, quoted: set[int] | None) -> None:
        if quoted is not None:
            n = len(quoted)
            self.origin.setText(QUOTE_BANNER.format(n=n, s="s" * (n != 1)))
        elif origin == SourceOrigin.LOOKUP:
            self.origin.setText(LOOKUP_BANNER)
        self.origin.setVisible(quoted is not None or origin == SourceOrigin.LOOKUP)

    def heat(self, path: str) -> dict[int, tuple[float, str, str]]:
        """line -> (share of the step's busy time, label, tooltip) for the file `path`."""
        out: dict[int, tuple[float, str, str]] = {}
        for ref, us in self._times.by_ref.items():
            if ref.kind is not RefKind.SOURCE_LINE:
                continue
            file, line = ref.path, ref.line
            if file == path:
                share = self._times.share(ref)
                out[line] = (share, fmt_us(us).replace(" ", ""),
                             f"{fmt_us(us)} per step ({share:.1%} of the profiled step's busy time, "
                             f"{self._times.mode}) in the kernels this line fed")
        return out

    @staticmethod
    def _line_colors(facts: LineFacts) -> list[QColor]:
        if facts.breaks:
            return [BROKE.lighter(130)]
        kernels = [color_for(name) for name in facts.kernel_names]
        return kernels or ([CAPTURED] if facts.captured else [])

    def _clicked(self, line: int) -> None:
        if self._path:
            self.selection.select({source_line(self._path, line, self._rank())})

    def on_selection(self, selected: frozenset[Ref], highlighted: frozenset[Ref]) -> None:
        if not self._follow(selected):  # a clicked kernel line: follow the lines it came from
            self._follow(highlighted)
        lines = set()
        for ref in highlighted:
            if ref.kind is RefKind.SOURCE_LINE and ref.path == self._path:
                lines.add(ref.line)
        self.view.set_selected_lines(lines)

    def _follow(self, refs: frozenset[Ref]) -> bool:
        """Switch to the file of a source line in `refs` (a traceback frame in a library file;
        the torchvision line a clicked kernel came from) unless the shown file has one; true
        when `refs` has a source line (so the caller need not look further)."""
        paths = {r.path for r in refs if r.kind is RefKind.SOURCE_LINE}
        if not paths or self._path in paths:
            return bool(paths)
        for path in sorted(paths):
            index = self.files.findData(path)
            if index >= 0:
                self.files.setCurrentIndex(index)  # shows the file, which calls on_selection again
                return True
        return True

    def _later(self) -> Lane | None:
        return self._lexer if self.state.updates.spread else None

    def has_content(self) -> bool:
        return bool(self.view.toPlainText())

    def facts(self) -> dict[tuple[str, int], LineFacts]:
        return dict(self._facts)

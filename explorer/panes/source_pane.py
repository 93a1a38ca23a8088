"""Source pane: the user's files, coloured by what the compiler did to each line.

Green: captured by Dynamo; kernel colours: fused into that kernel (one stripe per kernel); red
marker in the gutter: a graph break, reason on hover. Clicking a line selects it, so every other
pane highlights what that line produced.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QComboBox, QLabel, QVBoxLayout

from compiler_core.session import Compile, Ref, RefKind, Session
from compiler_core.session.refs import source_line, split_source_key
from explorer.panes.base import Pane
from explorer.panes.code_view import CodeView
from explorer.state import SelectionModel, SessionState
from explorer.state.line_facts import LineFacts, line_facts
from explorer.state.palette import BROKE, CAPTURED, RECOMPILED, color_for
from explorer.state.runtime_times import RuntimeTimes, fmt_us, runtime_times


class SourcePane(Pane):
    title = "Source"
    stage = "source"

    def __init__(self, state: SessionState, selection: SelectionModel) -> None:
        super().__init__(state, selection)
        self.files = QComboBox()
        self.files.currentIndexChanged.connect(self._show_file)
        self.view = CodeView()
        self.view.lineClicked.connect(self._clicked)
        self.legend = QLabel("green: captured · stripes: fused into kernel · ▶ red: graph break")
        self.legend.setStyleSheet("color: #666")
        self.legend.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.files)
        layout.addWidget(self.view)
        layout.addWidget(self.legend)
        self._facts: dict[tuple[str, int], LineFacts] = {}
        self._times = RuntimeTimes()
        self._path = ""

    @property
    def path(self) -> str:
        return self._path

    def on_session(self, session: Session) -> None:
        self._facts = line_facts(session, self.state.links, self._rank())
        self._times = runtime_times(session)
        if self._times.mode:
            self.legend.setText(self.legend.text() + f" · left column: {self._times.caption()} "
                                "(kernel time shared out to the lines they came from)")
        self.files.blockSignals(True)
        self.files.clear()
        for path in session.sources:
            self.files.addItem(Path(path).name, path)
            self.files.setItemData(self.files.count() - 1, path, 3)  # tooltip role
        self.files.setVisible(self.files.count() > 1)
        self.files.blockSignals(False)
        self._show_file(0)

    def on_compile(self, current: Compile | None) -> None:
        if current is not None and current.code is not None and current.code.file != self._path:
            index = self.files.findData(current.code.file)
            if index >= 0:
                self.files.setCurrentIndex(index)

    def _rank(self) -> int | None:
        current = self.state.current
        return current.rank if current is not None else None

    def _show_file(self, index: int) -> None:
        path = self.files.itemData(index) if index >= 0 else None
        self._path = path or ""
        self.view.set_code(self.state.session.sources.get(self._path, ""), "python")
        colors: dict[int, list[QColor]] = {}
        markers: dict[int, tuple[QColor, str]] = {}
        for (file, line), facts in self._facts.items():
            if file != self._path:
                continue
            colors[line] = self._line_colors(facts)
            if facts.breaks:
                markers[line] = (BROKE, "Graph break:\n" + "\n".join(sorted(set(facts.breaks))))
            elif facts.recompiles:
                markers[line] = (RECOMPILED, "Recompiled:\n" + "\n".join(facts.recompiles))
        self.view.set_line_colors(colors)
        self.view.set_markers(markers)
        self.view.set_heat(self.heat(self._path))
        self.on_selection(self.selection.selected, self.selection.highlighted)

    def heat(self, path: str) -> dict[int, tuple[float, str, str]]:
        """line -> (share of the step's busy time, label, tooltip) for the file `path`."""
        out: dict[int, tuple[float, str, str]] = {}
        for ref, us in self._times.by_ref.items():
            if ref.kind is not RefKind.SOURCE_LINE:
                continue
            file, line = split_source_key(ref.key)
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
        lines = set()
        for ref in highlighted:
            if ref.kind is RefKind.SOURCE_LINE:
                path, line = split_source_key(ref.key)
                if path == self._path:
                    lines.add(line)
        self.view.set_selected_lines(lines)

    def has_content(self) -> bool:
        return bool(self.view.toPlainText())

    def facts(self) -> dict[tuple[str, int], LineFacts]:
        return dict(self._facts)

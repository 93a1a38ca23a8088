"""Kernel code pane: the selected kernel's source with the lines of the selected nodes marked.

As in Compiler Explorer, each post-grad node gets a colour and every kernel line carries the
colours of the nodes it implements, so several nodes can be told apart in one kernel. Selecting
anything that maps to a kernel switches the pane to that kernel.
"""

from __future__ import annotations

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QComboBox, QVBoxLayout

from compiler_core.session import Compile, Kernel, Ref, RefKind
from explorer.jobs import Lane
from explorer.panes.base import Pane
from explorer.panes.code_view import CodeView
from explorer.plain_text import plain_label, tip
from explorer.state import SelectionModel, SessionState
from explorer.state.palette import color_for, color_icon
from explorer.state.stage_refs import kernel_ref

NO_NODE = "No post-grad node maps to this kernel (a layout copy of an input, or no provenance logged)."


SHOWN_NODES = 12  # a kernel every layer reuses fuses hundreds of nodes: their names would take the pane


def fused_text(kernel: Kernel) -> str:
    """`Fuses 334 nodes over 32 launches: a, b, … and 322 more` (the full list is the tooltip)."""
    n = len(kernel.fused_nodes)
    if not n:
        return NO_NODE
    over = f" over {kernel.launches} launches" if kernel.launches > 1 else ""
    names = ", ".join(kernel.fused_nodes[:SHOWN_NODES])
    more = f", … and {n - SHOWN_NODES} more" if n > SHOWN_NODES else ""
    inferred = len(kernel.inferred_nodes)
    told = (f" ({inferred} inferred: named by no record of Inductor, followed from the named "
            f"nodes by data flow)") if inferred else ""
    shared = len(kernel.recomputed_nodes)
    if shared:
        told += (f" ({shared} also computed by other kernels: Inductor recomputes inlined "
                 f"pointwise work in each kernel that reads it)")
    return f"Fuses {n} node{'s' * (n != 1)}{over}{told}: {names}{more}"


class KernelCodePane(Pane):
    title = "Kernel code"
    stage = "kernels"

    def __init__(self, state: SessionState, selection: SelectionModel) -> None:
        super().__init__(state, selection)
        self.picker = QComboBox()
        self.picker.currentIndexChanged.connect(self._show)
        self.view = CodeView()
        self.view.lineClicked.connect(self._clicked)
        self.info = plain_label()
        self.info.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.picker)
        layout.addWidget(self.view)
        layout.addWidget(self.info)
        self._kernels: list[Kernel | tuple[str, str]] = []  # kernel, or (graph, whole output code)
        self._lexer = Lane(self, "lexer")  # long texts are lexed off the GUI thread
        state.updates.track(self._lexer)

    @property
    def kernel(self) -> Kernel | None:
        i = self.picker.currentIndex()
        item = self._kernels[i] if 0 <= i < len(self._kernels) else None
        return item if isinstance(item, Kernel) else None

    def on_compile(self, current: Compile | None) -> None:
        self.picker.blockSignals(True)
        self.picker.clear()
        self._kernels = []
        for out in current.inductor if current is not None else ():
            for k in out.kernels:
                self._kernels.append(k)
                self.picker.addItem(color_icon(color_for(k.name)), f"{k.name}  [{k.graph}, {k.language}]")
            if out.output_code:
                self._kernels.append((out.graph, out.output_code))
                self.picker.addItem(f"Whole output code [{out.graph}]")
        self.picker.blockSignals(False)
        self._show(0 if self._kernels else -1)

    def _show(self, index: int) -> None:
        item = self._kernels[index] if 0 <= index < len(self._kernels) else None
        if item is None:
            self.view.set_code("", later=self._later())
            self.info.setText("No kernels for this compile.")
            return
        if isinstance(item, tuple):
            self.view.set_code(item[1], "python", later=self._later())
            self.info.setText(f"Whole output code of the {item[0]} graph.")
            return
        self.view.set_code(item.source, "cpp" if item.language == "cpp" else "python", later=self._later())
        self.info.setText(fused_text(item))
        self.info.setToolTip(tip(", ".join(item.fused_nodes)) if len(item.fused_nodes) > SHOWN_NODES else "")
        self.on_selection(self.selection.selected, self.selection.highlighted, switch=False)

    def select_kernel(self, name: str) -> bool:
        for i, item in enumerate(self._kernels):
            if isinstance(item, Kernel) and item.name == name:
                self.picker.setCurrentIndex(i)
                return True
        return False

    def _clicked(self, line: int) -> None:
        current, kernel = self.state.current, self.kernel
        if current is not None and kernel is not None:
            self.selection.select({Ref.kernel_line(current.compile_id, kernel.graph, kernel.name, line,
                                                   current.rank)})

    def on_selection(
        self, selected: frozenset[Ref], highlighted: frozenset[Ref], switch: bool = True
    ) -> None:
        current = self.state.current
        if current is None:
            return
        if switch and not self._shows_any(current, highlighted):
            best = self._best_kernel(current, highlighted)
            if best is not None:
                self.select_kernel(best.name)  # re-enters on_selection through _show
                return
        kernel = self.kernel
        if kernel is None:
            return
        colors = self._node_colors(kernel, current, highlighted)
        self.view.set_line_colors(colors)
        # The outline marks kernel lines the user picked; lines reached through nodes carry the
        # nodes' colours instead (every line links to its kernel, so "related" would be all).
        picked = {
            r.line for r in selected
            if r.kind is RefKind.KERNEL_LINE and r.compile_id == current.compile_id
            and r.graph == kernel.graph and r.name == kernel.name
        }
        self.view.set_selected_lines(picked, scroll=False)
        first = min(picked or colors, default=0)
        if first:
            self.view.scroll_to_line(first)

    def _best_kernel(self, current: Compile, highlighted: frozenset[Ref]) -> Kernel | None:
        """The related kernel with the most lines marked for the related nodes."""
        candidates = [
            k for k in self._kernels if isinstance(k, Kernel) and kernel_ref(current, k) in highlighted
        ]
        lit = self._lit_nodes(current, highlighted)  # once, not once per candidate kernel
        return max(candidates, key=lambda k: len(self._colors_for(k, lit)), default=None)

    def _shows_any(self, current: Compile, highlighted: frozenset[Ref]) -> bool:
        kernel = self.kernel
        return kernel is not None and kernel_ref(current, kernel) in highlighted

    @staticmethod
    def _node_colors(kernel: Kernel, c: Compile, highlighted: frozenset[Ref]) -> dict[int, list[QColor]]:
        """Lines of highlighted post-grad nodes, one colour per node (several per line)."""
        return KernelCodePane._colors_for(kernel, KernelCodePane._lit_nodes(c, highlighted))

    @staticmethod
    def _lit_nodes(c: Compile, highlighted: frozenset[Ref]) -> set[str]:
        return {
            r.name for r in highlighted
            if r.kind is RefKind.POST_GRAD_NODE and r.compile_id == c.compile_id
        }

    @staticmethod
    def _colors_for(kernel: Kernel, lit: set[str]) -> dict[int, list[QColor]]:
        colors: dict[int, list[QColor]] = {}
        for line, nodes in kernel.line_nodes.items():
            chosen = [color_for(n) for n in nodes if n in lit]
            if chosen and line.isdecimal() and len(line) < 10:  # keys are line numbers, unless hostile
                colors[int(line)] = chosen
        return colors

    def _later(self) -> Lane | None:
        return self._lexer if self.state.updates.spread else None

    def has_content(self) -> bool:
        return bool(self.view.toPlainText())

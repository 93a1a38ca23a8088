"""The Export menu: the report (HTML), kernels (folder), graph (DOT/SVG/PNG) and the session as JSON."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox

from compiler_core.overview import build_overview
from compiler_core.overview.report_html import write_report
from compiler_core.session import Compile, save
from explorer.actions.graph_export import save_canvas_dot, save_scene
from explorer.actions.kernel_export import export_compiles
from explorer.actions.source_lookup import ask_include_sources
from explorer.app_window import AppWindow
from explorer.panes.base import Pane
from explorer.plain_text import show_problem

GRAPH_PANES = {"dynamo": "DynamoPane", "aot": "AotPane", "inductor": "InductorPane"}


class ExportActions(QObject):
    def __init__(self, window: AppWindow) -> None:
        super().__init__(window)
        self.window = window
        self.graph_stage = "dynamo"  # follows the stage navigator
        menu = window.menuBar().addMenu("&Export")
        menu.addAction("&Report (HTML)…").triggered.connect(self.report_dialog)
        # methods, not lambdas: Qt holds a connected lambda out of the collector's sight, and one
        # over this controller kept a closed window alive (tests/explorer/test_ref_cycles.py)
        menu.addAction("&Kernels…").triggered.connect(self._kernels)
        menu.addAction("Kernels of &all compiles…").triggered.connect(self._every_kernel)
        menu.addAction("Graph as &DOT…").triggered.connect(self._graph_dot)
        menu.addAction("Graph as &SVG…").triggered.connect(self._graph_svg)
        menu.addAction("Graph as &PNG…").triggered.connect(self._graph_png)
        menu.addAction("Session as &JSON…").triggered.connect(self.session_dialog)
        window.navigation.stageRequested.connect(self._follow_stage)

    def _kernels(self) -> None:
        self.kernels_dialog()

    def _every_kernel(self) -> None:
        self.kernels_dialog(every=True)

    def _graph_dot(self) -> None:
        self.graph_dialog("dot")

    def _graph_svg(self) -> None:
        self.graph_dialog("svg")

    def _graph_png(self) -> None:
        self.graph_dialog("png")

    def _follow_stage(self, stage: str) -> None:
        if stage in GRAPH_PANES:
            self.graph_stage = stage

    def _current(self) -> Compile | None:
        c = self.window.state.current
        if c is None:
            QMessageBox.information(self.window, "Nothing to export", "Open a model, trace or session first.")
        return c

    def kernels_dialog(self, every: bool = False) -> None:
        """Runnable kernel files, output code and graph repros of the current compile, or with
        `every` of all compiles (every rank and run), into a folder the user picks."""
        c = self._current()
        folder = QFileDialog.getExistingDirectory(self.window, "Export kernels to folder") if c else ""
        if c is not None and folder:
            self.export_kernels_to(folder, None if every else [c])

    def export_kernels_to(self, folder: str, compiles: list[Compile] | None) -> bool:
        """Write the export (all compiles when `compiles` is None); a folder that cannot be
        written is a dialog, not a traceback."""
        state = self.window.state
        try:
            files = export_compiles(state.session, folder, compiles, state.links)
        except (OSError, ValueError) as exc:  # UnsafePathError is a ValueError
            show_problem(self.window, "Export failed", f"{folder}\n\n{type(exc).__name__}: {exc}")
            return False
        self.window.statusBar().showMessage(f"Exported {len(files)} files to {folder}", 5000)
        return True

    def graph_dialog(self, fmt: str) -> None:
        c = self._current()
        if c is None:
            return
        path, _ = QFileDialog.getSaveFileName(self.window, "Export graph", f"graph.{fmt}", f"*.{fmt}")
        scale = 1.0
        if path and fmt == "png":
            scale, ok = QInputDialog.getDouble(
                self.window, "PNG scale", "Pixels per layout unit:", 2.0, 0.1, 16.0, 2
            )
            if not ok:
                return
        if path:
            try:
                self.export_graph(path, scale)
            except (OSError, ValueError) as exc:
                show_problem(self.window, "Export failed", str(exc))

    def export_graph(self, path: str, scale: float = 1.0) -> None:
        """DOT of the graphs the pane shows; SVG/PNG render its whole scene (not the viewport)."""
        c = self.window.state.current
        if c is None:
            return
        pane = self.window.panes[GRAPH_PANES[self.graph_stage]]
        canvas = pane.graph_canvas() if isinstance(pane, Pane) else None
        if canvas is None:
            return  # the pane is not built yet: nothing is drawn to export
        if path.lower().endswith(".dot"):
            nodes = save_canvas_dot(canvas, path, f"{self.graph_stage} [{c.compile_id}]")
            self.window.statusBar().showMessage(f"Exported {nodes} nodes to {path}", 5000)
            return
        w, h = save_scene(canvas, path, scale)
        self.window.statusBar().showMessage(f"Exported {w}x{h} px to {path}", 5000)

    def report_dialog(self) -> None:
        if not self.window.state.session.compiles:
            QMessageBox.information(self.window, "Nothing to export", "Open a model, trace or session first.")
            return
        path, _ = QFileDialog.getSaveFileName(self.window, "Export report", "report.html", "HTML (*.html)")
        if path:
            self.export_report(path)

    def export_report(self, path: str) -> bool:
        """The Overview, ranked breaks, recompiles and kernels as one self-contained HTML file to
        share (`python -m compiler_core report` writes the same); a bad path is a dialog."""
        session = self.window.state.session
        try:
            write_report(session, build_overview(session), path)
        except (OSError, ValueError) as exc:
            show_problem(self.window, "Export failed", f"{path}\n\n{type(exc).__name__}: {exc}")
            return False
        self.window.statusBar().showMessage(f"Wrote the report to {path}", 5000)
        return True

    def session_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.window, "Export session", "session.json", "*.json")
        include = ask_include_sources(self.window, self.window.state.session) if path else None
        if path and include is not None:
            self.export_session(path, include_sources=include)

    def export_session(self, path: str, include_sources: bool = False) -> bool:
        """Write the session (files read from this machine for a log only with `include_sources`);
        a path that cannot be written is a dialog, not a traceback."""
        try:
            save(self.window.state.session, path, include_sources=include_sources)
        except (OSError, ValueError) as exc:
            show_problem(self.window, "Export failed", f"{path}\n\n{type(exc).__name__}: {exc}")
            return False
        self.window.statusBar().showMessage(f"Exported the session to {path}", 5000)
        return True
